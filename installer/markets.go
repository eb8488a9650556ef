package installer

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/marketplace"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// MarketplaceUpdate is what marketplace add and update did to one known
// marketplace.
type MarketplaceUpdate struct {
	KnownMarketplace
	// Previous is the commit it was read at before ("" when just added or
	// local).
	Previous string   `json:"previousCommit,omitempty"`
	Changed  bool     `json:"changed"`
	Entries  int      `json:"entries"`
	Warnings []string `json:"warnings"`
	// Unchecked says why its branch could not be read now (its host could
	// not be reached): what is shown is what was cached, and nothing was
	// recorded (it was not read).
	Unchecked string `json:"unchecked,omitempty"`
}

// readMarketplace reads the document of a marketplace source (its branch
// head, or the commit it names), without fetching any entry.
func (in *Installer) readMarketplace(ctx context.Context, src source.Source, subdir string, offline bool) (*resolver.Fetched, error) {
	s := src
	if s.IsZero() {
		return nil, source.ErrEmpty()
	}
	if s.Kind == source.MarketEntry {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s names a plugin of a marketplace; give the marketplace's source", src)
	}
	if s.IsLocal() && !filepath.IsAbs(s.Path) && in.NoWorkingDir {
		return nil, relativeRefusal(src.String(), s, false, nil)
	}
	s = s.Beside(subdir)
	ctx, budgetWarnings := host.WatchBudgets(ctx)
	f, err := in.Sources.Resolve(ctx, resolver.Request{Source: s, DocumentOnly: true, Offline: offline})
	if err != nil {
		return nil, err
	}
	f.Warnings = append(f.Warnings, budgetWarnings()...)
	if f.Market == nil {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s is a plugin, not a marketplace (no .claude-plugin/marketplace.json or .agents/plugins/marketplace.json at its root)", src)
	}
	if err := plugind.ValidateName(f.Market.Name); err != nil {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "marketplace %s has no usable \"name\": %v", src, err)
	}
	// A name Claude Code reserves for official marketplaces is refused
	// unless it comes from where Claude Code accepts it: adding one,
	// updating one (recordMarket) and installing from one (plan) all ask.
	if err := marketplace.CheckReservedName(f.Market.Name, f.Market.Source); err != nil {
		return nil, err
	}
	return f, nil
}

// AddMarketplace reads the marketplace at src and records it as known
// (SPEC §7), under the name its document gives. A name already known from
// another source is a conflict; the same source is read again.
func (in *Installer) AddMarketplace(ctx context.Context, src source.Source, offline bool) (*MarketplaceUpdate, error) {
	f, err := in.readMarketplace(ctx, src, "", offline)
	if err != nil {
		return nil, err
	}
	return in.recordMarket(ctx, f.Market, recordedSubdir(f), len(f.Entries), f.Warnings)
}

// recordedSubdir is the folder to record beside a marketplace's source: on
// GitHub its tree URL holds it already.
func recordedSubdir(f *resolver.Fetched) string {
	if f.Kind == resolver.KindMarketplace && f.Source.IsRemote() {
		return f.Source.RecordedSubdir(f.Subdir)
	}
	return ""
}

// recordMarket writes a marketplace that was just read into
// marketplaces.json, under the home lock.
func (in *Installer) recordMarket(ctx context.Context, m *resolver.Market, subdir string, entries int, warnings []string) (*MarketplaceUpdate, error) {
	if err := marketplace.CheckReservedName(m.Name, m.Source); err != nil {
		return nil, err
	}
	known, unlock, err := lockedState[Marketplaces](ctx, in, in.Home.MarketplacesPath())
	if err != nil {
		return nil, err
	}
	defer unlock()
	now := in.Now().UTC()
	up := &MarketplaceUpdate{Entries: entries, Warnings: manifest.NonNil(warnings)}
	k, ok := known.Find(m.Name)
	switch {
	case ok && (k.Source != m.Source || k.Subdir != subdir):
		return nil, plugind.Errorf(plugind.CodeConflict, "a marketplace named %q is already known, from %s; remove it first (reasonix marketplace remove %s)", m.Name, k.Source, m.Name)
	case ok:
		up.Previous, up.Changed = k.Commit, k.Commit != m.Commit
		k.Commit, k.ReadAt, k.Description = m.Commit, now, m.Description
		up.KnownMarketplace = *k
	default:
		up.Changed = true
		nk := KnownMarketplace{Name: m.Name, Source: m.Source, Subdir: subdir, Description: m.Description, Commit: m.Commit, ReadAt: now, AddedAt: now}
		known.Marketplaces = append(known.Marketplaces, nk)
		up.KnownMarketplace = nk
	}
	if err := known.Save(in.Home.MarketplacesPath()); err != nil {
		return nil, err
	}
	return up, nil
}

// Marketplaces lists the known marketplaces.
func (in *Installer) Marketplaces(context.Context) ([]KnownMarketplace, error) {
	known, err := LoadMarketplaces(in.Home.MarketplacesPath())
	if err != nil {
		return nil, err
	}
	return manifest.NonNil(known.Marketplaces), nil
}

// knownMarketplace returns the marketplace named name.
func (in *Installer) knownMarketplace(name string) (*KnownMarketplace, error) {
	if err := plugind.ValidateName(name); err != nil {
		return nil, err
	}
	known, err := LoadMarketplaces(in.Home.MarketplacesPath())
	if err != nil {
		return nil, err
	}
	k, ok := known.Find(name)
	if !ok {
		hint := "none is known yet; add one with: reasonix marketplace add SOURCE"
		if names := slices.Collect(known.names()); len(names) > 0 {
			hint = fmt.Sprintf("known: %v", names)
		}
		return nil, plugind.Errorf(plugind.CodeNotFound, "no known marketplace is named %q (%s)", name, hint)
	}
	return k, nil
}

// marketplacesNamed is the known marketplace named name, or every known one
// when name is "".
func (in *Installer) marketplacesNamed(ctx context.Context, name string) ([]KnownMarketplace, error) {
	if name == "" {
		return in.Marketplaces(ctx)
	}
	k, err := in.knownMarketplace(name)
	if err != nil {
		return nil, err
	}
	return []KnownMarketplace{*k}, nil
}

// UpdateMarketplaces re-reads every known marketplace (or the one named) at
// its branch head: an unchanged branch costs one conditional request, and
// offline the cached document answers.
func (in *Installer) UpdateMarketplaces(ctx context.Context, name string, offline bool) ([]MarketplaceUpdate, error) {
	targets, err := in.marketplacesNamed(ctx, name)
	if err != nil {
		return nil, err
	}
	out := make([]MarketplaceUpdate, 0, len(targets))
	for _, k := range targets {
		f, err := in.readMarketplace(ctx, k.Source, k.Subdir, offline)
		if err != nil {
			return nil, fmt.Errorf("marketplace %s: %w", k.Name, err)
		}
		if f.Unchecked != "" {
			out = append(out, MarketplaceUpdate{KnownMarketplace: k, Previous: k.Commit, Entries: len(f.Entries), Warnings: manifest.NonNil(f.Warnings), Unchecked: f.Unchecked})
			continue
		}
		if f.Market.Name != k.Name {
			f.Warnings = append(f.Warnings, fmt.Sprintf("its document now calls itself %q; it stays known as %q", f.Market.Name, k.Name))
			f.Market.Name = k.Name
		}
		if reg, err := LoadRegistry(in.Home.RegistryPath()); err == nil {
			f.Warnings = append(f.Warnings, renameNotes(installedRenames(f.Market, reg, k.Name))...)
		}
		up, err := in.recordMarket(ctx, f.Market, k.Subdir, len(f.Entries), f.Warnings)
		if err != nil {
			return nil, err
		}
		out = append(out, *up)
	}
	return out, nil
}

// RemoveMarketplace forgets a known marketplace. Installed plugins that came
// from it keep it from being removed, unless force: then they stay
// installed, unlinked from it (they keep their pinned sources; update
// keeps them where they are).
func (in *Installer) RemoveMarketplace(ctx context.Context, name string, force bool) (*KnownMarketplace, []string, error) {
	if err := plugind.ValidateName(name); err != nil {
		return nil, nil, err
	}
	known, unlock, err := lockedState[Marketplaces](ctx, in, in.Home.MarketplacesPath())
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	k, ok := known.Find(name)
	if !ok {
		return nil, nil, plugind.Errorf(plugind.CodeNotFound, "no known marketplace is named %q", name)
	}
	removed := *k
	reg, err := LoadRegistry(in.Home.RegistryPath())
	if err != nil {
		return nil, nil, err
	}
	// Its plugins are unlinked in memory; the registry is written only
	// with force. JSON lists them, none or some.
	users := []string{}
	for i := range reg.Plugins {
		if e := &reg.Plugins[i]; e.MarketplaceName == name {
			users = append(users, e.Name)
			e.MarketplaceName, e.Marketplace = "", source.Source{}
		}
	}
	sort.Strings(users)
	if len(users) > 0 && !force {
		return nil, users, plugind.Errorf(plugind.CodeConflict, "marketplace %q is where %d installed plugins came from (%v); remove them first, or rerun with --force to keep them installed, unlinked from it", name, len(users), users)
	}
	if len(users) > 0 {
		if err := reg.Save(in.Home.RegistryPath()); err != nil {
			return nil, nil, err
		}
	}
	known.Delete(name)
	if err := known.Save(in.Home.MarketplacesPath()); err != nil {
		return nil, nil, err
	}
	return &removed, users, nil
}

// Available is one entry a known marketplace offers, with what is
// installed of it.
type Available struct {
	Marketplace string `json:"marketplace"`
	resolver.Entry
	Installed bool `json:"installed"`
	// InstalledAs is the old name it is installed under when its
	// marketplace renamed it (update moves it to this entry).
	InstalledAs     string `json:"installedAs,omitempty"`
	InstalledCommit string `json:"installedCommit,omitempty"`
	UpdateAvailable bool   `json:"updateAvailable"`
}

// Available lists what the known marketplaces (or the one named) offer, as
// last read (no network: update the marketplaces to see newer pins).
func (in *Installer) Available(ctx context.Context, name string) ([]Available, error) {
	targets, err := in.marketplacesNamed(ctx, name)
	if err != nil {
		return nil, err
	}
	reg, err := LoadRegistry(in.Home.RegistryPath())
	if err != nil {
		return nil, err
	}
	out := []Available{}
	for _, k := range targets {
		src := k.Source
		if k.Commit != "" && src.IsRemote() {
			src = src.At(k.Commit)
		}
		f, err := in.readMarketplace(ctx, src, k.Subdir, true)
		if err != nil {
			return nil, fmt.Errorf("marketplace %s: %w", k.Name, err)
		}
		// An installed plugin the marketplace renamed is its new entry,
		// installed under the old name until update moves it.
		as := map[string]string{}
		for from, r := range installedRenames(f.Market, reg, k.Name) {
			if r.Kind == marketplace.Renamed {
				as[r.To] = from
			}
		}
		for _, e := range f.Entries {
			a := Available{Marketplace: k.Name, Entry: e}
			inst, isInstalled := reg.Find(e.Name)
			if isInstalled && inst.MarketplaceName == k.Name {
				a.Installed, a.InstalledCommit = true, inst.Commit
				a.UpdateAvailable = e.Commit != "" && inst.Commit != "" && e.Commit != inst.Commit
			} else if from, ok := as[e.Name]; ok && !isInstalled {
				inst, _ := reg.Find(from)
				a.Installed, a.InstalledAs, a.InstalledCommit, a.UpdateAvailable = true, from, inst.Commit, true
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// installedRenames is what marketplace m's renames map says of the
// installed plugins that came from it (known as market) and that it no
// longer lists: old name → where the map leads (SPEC §7).
func installedRenames(m *resolver.Market, reg *Registry, market string) map[string]marketplace.Rename {
	out := map[string]marketplace.Rename{}
	if m == nil || len(m.Renames) == 0 {
		return out
	}
	for _, e := range reg.Plugins {
		if e.MarketplaceName != market || m.Listed[e.Name] {
			continue
		}
		if r := m.Renames.Follow(e.Name, func(n string) bool { return m.Listed[n] }); r.Kind != marketplace.NotRenamed {
			out[e.Name] = r
		}
	}
	return out
}

// renameNotes says, for marketplace update, what the renames mean for the
// installed plugins (sorted by old name).
func renameNotes(renames map[string]marketplace.Rename) []string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(renames)) {
		r := renames[n]
		switch r.Kind {
		case marketplace.Renamed:
			out = append(out, fmt.Sprintf("it renamed %s to %s: reasonix plugin update %s moves the installed plugin to its new name", n, r.To, n))
		case marketplace.RenameRemoved:
			out = append(out, fmt.Sprintf("it removed %s (renames: %s → null); the installed plugin stays", n, strings.Join(r.Chain, " → ")))
		default:
			out = append(out, fmt.Sprintf("it no longer lists %s, and its renames chain %s does not resolve (%s); the installed plugin stays", n, strings.Join(r.Chain, " → "), r.Reason))
		}
	}
	return out
}
