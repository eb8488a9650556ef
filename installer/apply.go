package installer

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/store"
)

// Approval says how an install was approved (SPEC §9).
// An approval, and only it, carries the planId it approves (already
// parsed: see PlanID).
type Approval struct {
	DryRun bool
	Yes    bool
	PlanID PlanID
}

// ErrNeedsApproval is returned when neither --dry-run nor --yes was given.
var ErrNeedsApproval = errors.New("refusing to write without approval: rerun with --dry-run to see the plan, or --yes to install it (add --plan-id ID to install only the plan you reviewed)")

// Install plans req and, when approved, applies the plan. It always returns
// a response; the error is for callers that need the code.
func (in *Installer) Install(ctx context.Context, req Request, ap Approval) (*Response, error) {
	return in.planAndDecide(ctx, ap, req.Source.String(), func(ctx context.Context) (*Plan, error) { return in.plan(ctx, req) })
}

// planAndDecide is what an install and an update share: make the plan
// (plan), answer a plan that could not be made as refused (naming what
// was asked: asked), and otherwise decide it (decide). When GitHub's API
// budget made the plan use git instead, it says so once (not once per
// repository).
func (in *Installer) planAndDecide(ctx context.Context, ap Approval, asked string, plan func(context.Context) (*Plan, error)) (*Response, error) {
	if !ap.DryRun && !ap.Yes {
		return nil, ErrNeedsApproval
	}
	ctx, budgetWarnings := host.WatchBudgets(ctx)
	p, err := plan(ctx)
	if err != nil {
		return ErrorResponse(asked, err), err
	}
	p.Warnings = append(p.Warnings, budgetWarnings()...)
	resp, err := in.decide(ctx, p, ap)
	if resp.markUnchecked() && err == nil {
		err = resp.Err
	}
	return resp, err
}

// decide stores the plan by its planId and, when approved, applies it.
func (in *Installer) decide(ctx context.Context, p *Plan, ap Approval) (*Response, error) {
	if in.Cache != nil {
		// The planId hashes everything an approval covers, so a stored plan
		// of the same id says the same thing: renew it rather than encode
		// and write the whole body again (most of a warm re-plan otherwise).
		if renewed, err := in.Cache.RenewPlan(ctx, p.PlanID.String(), p.Snapshots); err != nil || !renewed {
			if body, err := p.MarshalStored(); err == nil {
				_ = in.Cache.PutPlan(ctx, p.PlanID.String(), body, p.Snapshots)
			}
		}
	}
	resp := p.Response()
	// An approval names one plan (SPEC §9). The ids are compared before
	// anything the plan's status decides — an up-to-date, failed or
	// partly blocked plan included — so a wrong id is always refused and
	// nothing, not even a sweep of leftovers, is written. Install, update
	// and the daemon's approved install all come through here. One
	// refusal says more and goes first: a plan waiting for userConfig
	// values (missing or invalid). Its planId covers whether each
	// sensitive value is set, so an approval whose values were not sent
	// again names another plan for that reason alone, and what to do is
	// send them; nothing is written either way.
	if !ap.PlanID.IsZero() && ap.PlanID != p.PlanID && !waitsForConfig(resp) {
		err := plugind.Errorf(plugind.CodeApprovalDenied, "not the approved plan: %s. Nothing was written; the plan now is %s: review it (--dry-run) and approve that", in.planDifference(ctx, ap.PlanID, p), p.PlanID)
		resp.OK, resp.Status, resp.Err = false, StatusRefused, err
		return resp, err
	}
	if ap.Yes && resp.Status == StatusUpToDate {
		// Nothing to apply; leftovers of a crashed run still go.
		if err := in.Sweep(ctx); err != nil {
			resp.Warnings = append(resp.Warnings, "leftovers under plugins/ were not swept: "+err.Error())
		}
	}
	if ap.DryRun || !resp.OK || resp.Status == StatusUpToDate {
		if !resp.OK {
			return resp, resp.Err
		}
		return resp, nil
	}
	leftovers, err := in.apply(ctx, p)
	if err != nil {
		resp.OK, resp.Status = false, StatusFailed
		if plugind.CodeOf(err) == plugind.CodeApprovalDenied {
			resp.Status = StatusRefused
		}
		resp.Err = plugind.WithCode(plugind.CodePublicationFailed, err)
		return resp, err
	}
	resp.Status, resp.Applied = StatusApplied, true
	resp.Warnings = append(resp.Warnings, leftovers...)
	for i := range resp.Actions {
		switch a := &resp.Actions[i]; {
		case a.applicable():
			a.Status = ActionInstalled
		case a.Action == ActionRemove && a.Status == ActionReady:
			a.Status = ActionRemoved
		}
	}
	if err := partial(resp.Actions); err != nil {
		// SPEC §11: applied, but not everything asked for is installed.
		resp.OK, resp.Status, resp.Err = false, StatusPartial, err
	}
	// Installing from a marketplace makes it known (SPEC §7); the registry
	// is already written, so a failure here is a warning.
	for _, m := range p.markets {
		if _, err := in.recordMarket(ctx, m.market, m.subdir, m.entries, nil); err != nil {
			resp.Warnings = append(resp.Warnings, fmt.Sprintf("marketplace %s was not recorded as known: %v", m.market.Name, err))
		}
	}
	return resp, nil
}

// entry is the registry entry a applied makes, less what publication
// decides (its root, when, the values it keeps): a lock made from a plan
// reads it too.
func (a *Action) entry() Entry {
	return Entry{
		Name: a.Name, DisplayName: a.DisplayName, Source: a.Source, Version: a.Version, Description: a.Description,
		ManifestKind: a.ManifestKind, Enabled: !a.DisabledByDefault, Commit: a.Commit,
		ContentDigest: a.ContentDigest, Status: "ok",
		Link: a.Link, Marketplace: a.Marketplace, MarketplaceName: a.MarketplaceName, MarketplaceCommit: a.marketCommit, Subdir: a.Subdir,
		EntryManifest: a.EntryManifest, ManifestPrefer: a.ManifestPrefer,
		Dependencies: a.DependsOn, Dependency: a.Dependency,
		Tag: a.Tag, ResolvedVersion: a.ResolvedVersion,
	}
}

// partial says what of an applied plan was not installed: its blocked,
// conflicting and failed actions (entries skipped by policy, such as an
// unpinned or npm entry, are not counted). nil when there are none.
func partial(actions []Action) error {
	byStatus := map[ActionStatus][]string{}
	code := plugind.Code("")
	for _, a := range actions {
		switch a.Status {
		case ActionBlocked, ActionConflict, ActionFailed:
			byStatus[a.Status] = append(byStatus[a.Status], a.Name)
			if code == "" || a.Status == ActionBlocked {
				code = a.Code()
			}
		}
	}
	if len(byStatus) == 0 {
		return nil
	}
	code = cmp.Or(code, plugind.CodeBlocked)
	var parts []string
	for _, st := range []ActionStatus{ActionBlocked, ActionConflict, ActionFailed} {
		if names := byStatus[st]; len(names) > 0 {
			parts = append(parts, fmt.Sprintf("%s: %s", st, strings.Join(names, ", ")))
		}
	}
	return plugind.Errorf(code, "applied, but not everything was installed (%s; see actions)", strings.Join(parts, "; "))
}

// waitsForConfig reports whether r is refused for userConfig values that
// are missing or invalid.
func waitsForConfig(r *Response) bool {
	switch plugind.CodeOf(r.Err) {
	case plugind.CodeConfigRequired, plugind.CodeConfigInvalid:
		return !r.OK
	}
	return false
}

// staged is one action copied and verified under plugins/, waiting to be
// published.
type staged struct {
	action *Action
	dir    string // the staging dir, renamed to its root on publication
}

// apply stages every action, re-checks each staged tree against its approved
// digest, then publishes all of them with one registry write. Until that
// rename, the old state is what the registry names; a failure before it
// removes everything new.
func (in *Installer) apply(ctx context.Context, p *Plan) (warnings []string, err error) {
	reg, unlock, err := lockedState[Registry](ctx, in, in.Home.RegistryPath())
	if err != nil {
		return nil, err
	}
	defer unlock()
	// The plan was made without the lock; if someone installed or removed a
	// plugin it touches since, the approval no longer describes the result.
	for _, a := range p.Actions {
		if !a.applicable() {
			continue
		}
		_, exists := reg.Find(a.Name)
		if exists != (a.Action == ActionReplace) {
			return nil, plugind.Errorf(plugind.CodeApprovalDenied, "plugin %q was installed or removed by another process since this plan was made; plan again", a.Name)
		}
		if a.RenamedFrom != "" {
			if _, ok := reg.Find(a.RenamedFrom); !ok {
				return nil, plugind.Errorf(plugind.CodeApprovalDenied, "plugin %q, which this plan renames to %q, was removed by another process since this plan was made; plan again", a.RenamedFrom, a.Name)
			}
		}
	}
	if err := p.sync.stillInstalled(reg); err != nil {
		return nil, err
	}
	if err := plugind.MkdirPrivate(in.Home.PluginsDir()); err != nil {
		return nil, plugind.Errorf(plugind.CodePublicationFailed, "create %s: %w", in.Home.PluginsDir(), err)
	}
	in.sweepOrphans(reg)

	in.StepHook("before-staging")
	var stages []staged
	defer func() {
		if err != nil {
			for _, s := range stages {
				_ = os.RemoveAll(s.dir)
			}
		}
	}()
	stages, err = in.stageAll(ctx, p)
	if err != nil {
		return nil, err
	}
	if len(stages) > 0 {
		// The staged copies were written unsynced: one sync of their
		// filesystem makes them all durable before any is published.
		dirs := make([]string, len(stages))
		for i, s := range stages {
			dirs[i] = s.dir
		}
		if err := store.SyncTrees(dirs); err != nil {
			return nil, plugind.Errorf(plugind.CodePublicationFailed, "sync the staged plugins in %s: %w", in.Home.PluginsDir(), err)
		}
	}
	in.StepHook("after-staging")
	return in.publish(ctx, p, reg, stages)
}

// stagingWorkers is how many actions are staged at once. Staging is
// almost all blocking file-system calls (an execution trace of the 300
// plugin apply shows its goroutine time in mkdirat and openat waiting on
// the filesystem journal, not on the CPU), so a few copies in flight
// overlap those waits: on the 2-core bench VM, a cold 300/51 install with
// 4 beat the same with 1 in each of five interleaved rounds (by 0.3-0.6 s).
const stagingWorkers = 4

// stageAll stages every applicable, copied action of p, several at once,
// and returns them in plan order. The first failure cancels the rest and
// is the one returned; every dir staged by then is removed, so on error
// nothing new is left under plugins/.
func (in *Installer) stageAll(ctx context.Context, p *Plan) ([]staged, error) {
	var todo []*Action
	for i := range p.Actions {
		if a := &p.Actions[i]; a.applicable() && !a.Link {
			todo = append(todo, a)
		}
	}
	dirs := make([]string, len(todo))
	g, gctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range min(stagingWorkers, len(todo)) {
		g.Go(func() error {
			buf := make([]byte, 128<<10) // one copy buffer per worker
			for {
				i := int(next.Add(1)) - 1
				if i >= len(todo) {
					return nil
				}
				if err := gctx.Err(); err != nil {
					return err
				}
				dir, err := in.stage(gctx, todo[i], buf)
				if err != nil {
					return err
				}
				dirs[i] = dir
			}
		})
	}
	err := g.Wait()
	var stages []staged
	for i, dir := range dirs {
		if dir == "" {
			continue
		}
		if err != nil {
			_ = os.RemoveAll(dir)
			continue
		}
		stages = append(stages, staged{action: todo[i], dir: dir})
	}
	if err != nil {
		return nil, err
	}
	return stages, nil
}

// stage copies an action's approved tree into a fresh staging dir under
// plugins/ and checks the copy against the approved digest. A mismatch is
// explained (and a damaged store snapshot quarantined) by copyMismatch.
func (in *Installer) stage(ctx context.Context, a *Action, buf []byte) (string, error) {
	tree, err := plugind.ScanTree(a.origin, in.Budget)
	if err != nil {
		return "", fmt.Errorf("stage %s: %w", a.Name, err)
	}
	dir := filepath.Join(in.Home.PluginsDir(), stagingPrefix+a.Name+"-"+rand.Text())
	got, err := store.CopyTree(ctx, tree, dir, buf, false)
	if err != nil {
		return "", plugind.Errorf(plugind.CodePublicationFailed, "stage %s: %w", a.Name, err)
	}
	if got != a.ContentDigest {
		err = in.copyMismatch(ctx, a, got)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// publish moves staged copies to their roots and writes the registry once.
// A replaced plugin's new copy goes to a fresh sibling root, so the registry
// rename is the single commit point: before it the old root is untouched and
// named; after it the new root is.
func (in *Installer) publish(ctx context.Context, p *Plan, reg *Registry, stages []staged) (warnings []string, err error) {
	next := &Registry{Version: reg.Version, Plugins: append([]Entry{}, reg.Plugins...)}
	var published []string // new roots, removed again if the registry write fails
	var retired []Entry    // old copies, removed once the registry names the new ones
	var written []string   // new config/ files, likewise
	var released []string  // config/ files the registry stops naming
	defer func() {
		if err != nil {
			for _, root := range published {
				_ = os.RemoveAll(root)
			}
			for _, f := range written {
				in.dropSecrets(f)
			}
		}
	}()
	takenFiles := map[string]bool{}
	for _, e := range reg.Plugins {
		takenFiles[e.ConfigFile] = true
	}
	byName := map[string]string{}
	for _, s := range stages {
		old, _ := reg.Find(s.action.installedName())
		root, err := in.freeRoot(s.action, reg)
		if err != nil {
			return nil, err
		}
		if err := os.Rename(s.dir, root); err != nil {
			return nil, plugind.Errorf(plugind.CodePublicationFailed, "publish %s: %w", s.action.Name, err)
		}
		published = append(published, root)
		byName[s.action.Name] = root
		if old != nil && !old.Link && old.Root != root {
			retired = append(retired, *old)
		}
	}
	store.SyncDir(in.Home.PluginsDir())
	in.StepHook("after-swap")

	now := in.Now().UTC()
	for i := range p.Actions {
		a := &p.Actions[i]
		if !a.applicable() {
			continue
		}
		e := a.entry()
		e.InstalledAt = now
		if old, ok := reg.Find(a.installedName()); ok {
			e.Enabled = old.Enabled
			// Installing a dependency by name makes it the user's own;
			// updating it leaves it what it was.
			e.Dependency = old.Dependency && (a.Dependency || p.update != nil)
			if p.sync != nil {
				e.Dependency = a.Dependency
			}
			if old.ConfigFile != "" {
				released = append(released, old.ConfigFile)
			}
		}
		if st := a.config; st != nil {
			if len(st.values) > 0 {
				e.Config = st.values
			}
			if len(st.secrets) > 0 {
				file, err := in.writeSecrets(a.Name, st.secrets, takenFiles)
				if err != nil {
					return nil, err
				}
				written = append(written, file)
				takenFiles[file] = true
				e.ConfigFile = file
			}
		}
		if a.Link {
			e.Root = a.origin
		} else {
			e.Root = byName[a.Name]
		}
		a.Root = e.Root
		if a.RenamedFrom != "" {
			// A rename moves the entry: the old name leaves in this same
			// write, and what needed it needs the new name.
			next.Delete(a.RenamedFrom)
			next.renameDependency(a.RenamedFrom, a.Name)
		}
		next.Put(e)
	}
	if p.sync != nil {
		removed, freed := p.sync.apply(next)
		retired, released = append(retired, removed...), append(released, freed...)
	}
	if err := ctx.Err(); err != nil {
		return nil, plugind.Errorf(plugind.CodePublicationFailed, "publication cancelled before the registry was written: %w", err)
	}
	if err := next.Save(in.Home.RegistryPath()); err != nil {
		return nil, err
	}
	in.StepHook("after-registry")
	for _, f := range released {
		in.dropSecrets(f)
	}
	for _, old := range retired {
		in.retire(old, &warnings)
	}
	return warnings, nil
}

// freeRoot picks where a staged copy is published: the canonical
// plugins/<name> when it is free, else a fresh sibling. A folder that is in
// the way but not registered is an orphan of an earlier crash: it is moved
// out of the way, never adopted.
func (in *Installer) freeRoot(a *Action, reg *Registry) (string, error) {
	canonical := in.Home.PluginRoot(a.Name)
	sibling := cmp.Or(strings.TrimPrefix(plugind.ShortDigest(a.ContentDigest), "sha256:"), rand.Text())
	candidates := []string{canonical, canonical + "@" + sibling}
	for _, root := range candidates {
		if reg.usesRoot(root) {
			continue
		}
		if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
			return root, nil
		}
		_ = in.discard(root)
		if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
			return root, nil
		}
	}
	return "", plugind.Errorf(plugind.CodePublicationFailed, "publish %s: no free root under %s", a.Name, in.Home.PluginsDir())
}

const (
	stagingPrefix = ".staging-"
	trashPrefix   = ".trash-"
)

// discard renames an entry of the plugins folder into the trash (one
// atomic step, so it stops being visible at its path at once) and then
// deletes it. It is the one way anything under plugins/ is deleted by
// path, and it refuses every path that is not directly in the plugins
// folder: whatever the registry says, nothing outside is ever deleted.
// A symbolic link is deleted as a link, never followed.
func (in *Installer) discard(dir string) error {
	if !in.inPluginsDir(dir) {
		in.Log.Warn("refusing to delete a folder outside plugins/", "path", dir)
		return fmt.Errorf("%s: %w", dir, errNotInPlugins)
	}
	trash := filepath.Join(in.Home.PluginsDir(), trashPrefix+rand.Text())
	if err := os.Rename(dir, trash); err != nil {
		return os.RemoveAll(dir)
	}
	return os.RemoveAll(trash)
}
