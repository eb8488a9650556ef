package installer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
)

// PluginInfo is an installed plugin as list, show and GET /plugins report
// it: the registry entry, what the installed copy contributes, and whether
// that copy is still what was installed.
type PluginInfo struct {
	Entry
	Inventory
	Warnings []string `json:"warnings"`
	// Problems are why the root is excluded from loading; empty when healthy.
	Problems []string `json:"problems"`
	Loaded   bool     `json:"loaded"`
	// NeededBy are the installed plugins that need this one.
	NeededBy []string `json:"neededBy,omitempty"`
	// UserConfig lists its options and what is set for each, as a plan
	// does (a sensitive value never: only whether it is set).
	UserConfig []ConfigOption `json:"userConfig,omitempty"`
}

// List reads the registry and checks every registered root. A broken root
// does not fail the list: its plugin is reported excluded with a repair
// warning.
func (in *Installer) List(ctx context.Context) ([]PluginInfo, error) {
	reg, err := LoadRegistry(in.Home.RegistryPath())
	if err != nil {
		return nil, err
	}
	out := make([]PluginInfo, 0, len(reg.Plugins))
	for _, e := range reg.Plugins {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		info := in.inspect(e)
		info.NeededBy = reg.Dependents(e.Name)
		out = append(out, info)
	}
	return out, nil
}

// Show reports one installed plugin: its Problems are what `plugin
// doctor` reports wrong with it (none: healthy).
func (in *Installer) Show(ctx context.Context, name string) (*PluginInfo, error) {
	reg, e, err := in.lookup(name)
	if err != nil {
		return nil, err
	}
	info := in.inspect(*e)
	info.NeededBy = reg.Dependents(name)
	return &info, nil
}

// lookup reads the registry and name's entry in it, validating the name
// first. Mutations read theirs under the home lock (lockedState).
func (in *Installer) lookup(name string) (*Registry, *Entry, error) {
	if err := plugind.ValidateName(name); err != nil {
		return nil, nil, err
	}
	reg, err := LoadRegistry(in.Home.RegistryPath())
	if err != nil {
		return nil, nil, err
	}
	e, ok := reg.Find(name)
	if !ok {
		return nil, nil, notInstalled(name)
	}
	return reg, e, nil
}

func (in *Installer) inspect(e Entry) PluginInfo {
	info := PluginInfo{
		Entry: e, Inventory: emptyInventory(), Warnings: []string{}, Problems: []string{},
	}
	if problem := in.rootProblem(e); problem != "" {
		// Not the home's folder: nothing in it is read.
		info.Problems = []string{problem}
	} else {
		info.Problems = in.checkRoot(e)
		if pkg, err := manifest.Load(e.Root, e.loadOptions()); err != nil {
			if len(info.Problems) == 0 {
				info.Problems = append(info.Problems, "manifest: "+err.Error())
			}
		} else {
			var shown *manifest.Package
			info.UserConfig, shown, info.Warnings = in.installedConfig(e, pkg, info.Warnings)
			info.Inventory = inventoryOf(shown)
			info.Warnings = append(info.Warnings, pkg.Warnings...)
			if info.DisplayName == "" {
				// Installed before the registry kept it.
				info.DisplayName = pkg.DisplayName
			}
		}
	}
	if len(info.Problems) > 0 {
		info.Status = "excluded"
		info.StatusReason = info.Problems[0]
		info.Warnings = append(info.Warnings, fmt.Sprintf("%s is excluded from loading: %s; run `reasonix plugin doctor %s`, then reinstall it with --replace", e.Name, info.Problems[0], e.Name))
	}
	info.Loaded = len(info.Problems) == 0 && e.Enabled
	return info
}

// checkRoot says what is wrong with a registered root: missing, not a
// folder, or (for copies) content that no longer matches its digest.
func (in *Installer) checkRoot(e Entry) []string {
	st, err := os.Stat(e.Root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return []string{fmt.Sprintf("root %s is missing", e.Root)}
	case err != nil:
		return []string{fmt.Sprintf("root %s is unreadable: %v", e.Root, err)}
	case !st.IsDir():
		return []string{fmt.Sprintf("root %s is not a folder", e.Root)}
	}
	if e.Link || e.ContentDigest == "" {
		return nil
	}
	got, _, err := plugind.TreeDigest(e.Root, in.Budget)
	if err != nil {
		return []string{fmt.Sprintf("root %s cannot be verified: %v", e.Root, err)}
	}
	if got != e.ContentDigest {
		return []string{fmt.Sprintf("content digest differs: installed %s, now %s (files were edited, added or removed by hand)", e.ContentDigest, got)}
	}
	return nil
}

// SetEnabled enables or disables an installed plugin. Disabling one that
// enabled plugins need is refused (install.conflict, naming them), as
// removing it is, unless force: then they stay enabled without it, and the
// warnings say so.
func (in *Installer) SetEnabled(ctx context.Context, name string, enabled, force bool) (*Entry, []string, error) {
	if err := plugind.ValidateName(name); err != nil {
		return nil, nil, err
	}
	reg, unlock, err := lockedState[Registry](ctx, in, in.Home.RegistryPath())
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	e, ok := reg.Find(name)
	if !ok {
		return nil, nil, notInstalled(name)
	}
	warnings := []string{} // JSON lists them, none or some
	if !enabled && e.Enabled {
		users := slices.DeleteFunc(reg.Dependents(name), func(u string) bool { d, ok := reg.Find(u); return !ok || !d.Enabled })
		if len(users) > 0 {
			if !force {
				return nil, nil, plugind.Errorf(plugind.CodeConflict, "plugin %q is needed by %s, which %s enabled; disable %s first, or rerun with --force (%s then enabled without it)",
					name, strings.Join(users, ", "), plural(len(users), "is", "are"), plural(len(users), "it", "them"), plural(len(users), "it stays", "they stay"))
			}
			warnings = append(warnings, fmt.Sprintf("%s needed %s; %s enabled without it", strings.Join(users, ", "), name, plural(len(users), "it stays", "they stay")))
		}
	}
	if e.Enabled != enabled {
		e.Enabled = enabled
		if err := reg.Save(in.Home.RegistryPath()); err != nil {
			return nil, nil, err
		}
	}
	out := *e
	return &out, warnings, nil
}

// Remove uninstalls name: the registry entry goes first (the commit point),
// then the copied root. A linked plugin's folder is the user's and stays;
// so does a registered root that is not the home's (see rootProblem), with
// a warning.
// A plugin another installed plugin needs is refused unless force.
func (in *Installer) Remove(ctx context.Context, name string, force bool) (*Response, error) {
	fail := func(err error) (*Response, error) { return ErrorResponse(name, err), err }
	if err := plugind.ValidateName(name); err != nil {
		return fail(err)
	}
	reg, unlock, err := lockedState[Registry](ctx, in, in.Home.RegistryPath())
	if err != nil {
		return fail(err)
	}
	defer unlock()
	e, ok := reg.Find(name)
	if !ok {
		return fail(notInstalled(name))
	}
	old := *e
	warnings := []string{}
	if users := reg.Dependents(name); len(users) > 0 {
		if !force {
			return fail(plugind.Errorf(plugind.CodeConflict, "plugin %q is needed by %s; remove %s first, or rerun with --force (%s then installed without it)",
				name, strings.Join(users, ", "), plural(len(users), "it", "them"), plural(len(users), "it stays", "they stay")))
		}
		warnings = append(warnings, fmt.Sprintf("%s needed %s; %s installed without it", strings.Join(users, ", "), name, plural(len(users), "it stays", "they stay")))
	}
	reg.Delete(name)
	if err := reg.Save(in.Home.RegistryPath()); err != nil {
		return fail(err)
	}
	in.dropSecrets(old.ConfigFile)
	in.retire(old, &warnings)
	// A mutation under the lock, with the registry just written: leftovers
	// of crashed installs go now (see sweepOrphans).
	in.sweepOrphans(reg)
	return &Response{
		OK: true, Status: StatusRemoved, Applied: true, Source: old.Source.String(),
		Resolved: &Resolved{Kind: "installed", Commit: old.Commit},
		Actions:  []Action{removeAction(old, ActionRemoved)},
		Warnings: warnings,
	}, nil
}

// removeAction describes removing an installed plugin.
func removeAction(e Entry, status ActionStatus) Action {
	return Action{
		Name: e.Name, Action: ActionRemove, Status: status, Source: e.Source,
		Commit: e.Commit, ContentDigest: e.ContentDigest, Root: e.Root,
		ManifestKind: e.ManifestKind, Version: e.Version, Link: e.Link,
		Inventory: emptyInventory(), Warnings: []string{},
		DependsOn: e.Dependencies, Dependency: e.Dependency,
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
