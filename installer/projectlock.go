package installer

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/lockfile"
)

// LockProject re-resolves a project (reasonix lock --update, SPEC §16):
// each of its marketplaces is read at its branch head (or the ref the
// project names) and each wanted plugin planned through it, with the
// dependencies they need, as an install would plan them. It returns the
// project's new lock and a plan that shows, as an update's review does,
// what moves from old (the project's current lock; nil: none): each moved
// plugin with what it moves from and its capability diff, the ones added
// and the ones the lock drops. names, when given, re-resolve only those
// plugins: the others keep their locked pins. Nothing is written: the
// caller writes the lock, and nothing is installed.
func (in *Installer) LockProject(ctx context.Context, proj *lockfile.Project, old *lockfile.Lock, names []string, req Request) (*lockfile.Lock, *Response, error) {
	if old == nil {
		old = &lockfile.Lock{Version: lockfile.Version}
	}
	locked := map[string]*lockfile.Plugin{}
	for i := range old.Plugins {
		locked[old.Plugins[i].Name] = &old.Plugins[i]
	}
	wanted := map[string]lockfile.Wanted{}
	for _, w := range proj.Plugins {
		wanted[w.Name] = w
	}
	for _, n := range names {
		if _, ok := wanted[n]; !ok {
			return nil, nil, plugind.Errorf(plugind.CodeNotFound, "%s does not want a plugin named %q (it wants %s)", lockfile.ProjectFile, n, strings.Join(slices.Sorted(maps.Keys(wanted)), ", "))
		}
	}
	// Which plugins are resolved again: all of them, or the ones named and
	// those the lock does not pin through the marketplace the project
	// names now.
	resolve := map[string][]string{} // marketplace → its plugins to resolve
	for _, w := range proj.Plugins {
		lp, ok := locked[w.Name]
		if len(names) == 0 || slices.Contains(names, w.Name) || !ok || lp.Marketplace != w.Market {
			resolve[w.Market] = append(resolve[w.Market], w.Name)
		}
	}
	p := &Plan{Request: req, asked: req, Source: "lock --update"}
	var entries []Entry
	known := &Marketplaces{Version: marketplacesVersion}
	for _, m := range proj.Marketplaces {
		want := resolve[m.Name]
		if len(want) == 0 {
			continue
		}
		r := req
		r.Source, r.Names, r.Replace = m.Source, want, true
		mp, err := in.plan(ctx, r)
		if err != nil {
			return nil, nil, fmt.Errorf("marketplace %s (%s): %w", m.Name, m.Source, err)
		}
		p.Warnings = append(p.Warnings, mp.Warnings...)
		p.addSnapshots(mp.Snapshots...)
		for _, rec := range mp.markets {
			if rec.market.Source == m.Source && rec.market.Name != m.Name {
				return nil, nil, plugind.Errorf(plugind.CodeInvalidSource, "%s names marketplace %s, but %s calls itself %q: name it %q in the file", lockfile.ProjectFile, m.Name, m.Source, rec.market.Name, rec.market.Name)
			}
			if _, ok := known.Find(rec.market.Name); !ok {
				known.Marketplaces = append(known.Marketplaces, KnownMarketplace{Name: rec.market.Name, Source: rec.market.Source, Subdir: rec.subdir, Commit: rec.market.Commit})
			}
		}
		for _, a := range mp.Actions {
			// A required option without its value is this machine's to
			// give at sync: the pin is what a lock records.
			if !a.applicable() && plugind.CodeOf(a.Err) != plugind.CodeConfigRequired {
				p.Actions = append(p.Actions, a)
				continue
			}
			e := a.entry()
			if w, ok := wanted[a.Name]; ok {
				e.Enabled, e.Dependency = w.Enabled, false
			}
			if lp, ok := locked[a.Name]; ok && len(lp.Config) > 0 {
				e.Config = maps.Clone(lp.Config)
			}
			entries = append(entries, e)
			p.Actions = append(p.Actions, a)
		}
	}
	if err := partial(p.Actions); err != nil {
		p.Actions = failedOnly(p.Actions)
		_ = p.seal()
		return nil, p.Response(), plugind.WithCode(plugind.CodeOf(err), fmt.Errorf("the lock is not written: %w", err))
	}
	lock, warnings := LockOf(&Registry{Plugins: entries}, known)
	p.Warnings = append(p.Warnings, warnings...)
	keepUnresolved(lock, old, proj, resolve)
	if err := lock.Check(); err != nil {
		return nil, nil, err
	}
	in.describeLockMoves(ctx, p, old, lock, req)
	if err := p.seal(); err != nil {
		return nil, nil, err
	}
	return lock, p.Response(), nil
}

// failedOnly keeps the actions that failed: what a refused lock --update
// shows.
func failedOnly(actions []Action) []Action {
	return slices.DeleteFunc(actions, func(a Action) bool { return a.applicable() || a.Status == ActionSkipped })
}

// keepUnresolved carries into lock the plugins of old that were not
// resolved again, at their locked pins, with the marketplaces they are
// read through: a marketplace read again at another commit keeps their
// entries readable at the old one (marketplaceCommit).
func keepUnresolved(lock, old *lockfile.Lock, proj *lockfile.Project, resolve map[string][]string) {
	in := map[string]bool{}
	for _, p := range lock.Plugins {
		in[p.Name] = true
	}
	for _, lp := range old.Plugins {
		if in[lp.Name] || slices.Contains(resolve[lp.Marketplace], lp.Name) {
			continue
		}
		w, wanted := proj.Want(lp.Name)
		if wanted {
			lp.Enabled = w.Enabled
		} else if !lp.Dependency {
			continue // the project no longer wants it
		}
		if lp.Marketplace != "" {
			om, _ := old.FindMarketplace(lp.Marketplace)
			nm, ok := lock.FindMarketplace(lp.Marketplace)
			if !ok {
				lock.Marketplaces = append(lock.Marketplaces, *om)
			} else if at := cmp.Or(lp.MarketplaceCommit, om.Commit); at != nm.Commit {
				lp.MarketplaceCommit = at
			} else {
				lp.MarketplaceCommit = ""
			}
		}
		lock.Plugins = append(lock.Plugins, lp)
		in[lp.Name] = true
	}
}

// describeLockMoves makes p's actions say what each plugin does from the
// old lock to the new one: a moved plugin is an update from its old pin
// (its capability diff read from the old pin's content, planned from the
// cache and store as a sync would), an unmoved one is kept, a new one is
// installed, and a plugin the new lock drops is removed.
func (in *Installer) describeLockMoves(ctx context.Context, p *Plan, old, lock *lockfile.Lock, req Request) {
	before := map[string]lockfile.Plugin{}
	for _, lp := range old.Plugins {
		before[lp.Name] = lp
	}
	planned := map[string]*Action{}
	for i := range p.Actions {
		planned[p.Actions[i].Name] = &p.Actions[i]
	}
	// extra are actions of no plan (p.Actions is not grown while planned
	// points into it).
	var moved []lockfile.Plugin
	var extra []Action
	defer func() { p.Actions = append(p.Actions, extra...) }()
	for _, lp := range lock.Plugins {
		was, ok := before[lp.Name]
		a := planned[lp.Name]
		switch {
		case a == nil:
			// Kept at its locked pin without being resolved.
			extra = append(extra, lockedAction(lp, ActionKeep, ActionUpToDate))
		case !ok:
			a.Action = ActionInstall
		case was.Source == lp.Source && was.Subdir == lp.Subdir && was.Commit == lp.Commit && was.ContentDigest == lp.ContentDigest:
			k := lockedAction(lp, ActionKeep, ActionUpToDate)
			k.Inventory, k.Risk, k.Version = a.Inventory, a.Risk, a.Version
			*a = k
		default:
			moved = append(moved, was)
		}
	}
	for _, lp := range old.Plugins {
		if _, ok := lock.FindPlugin(lp.Name); !ok {
			extra = append(extra, lockedAction(lp, ActionRemove, ActionReady))
		}
	}
	if len(moved) == 0 {
		return
	}
	// The old pins' contributions, for the diffs: each planned again from
	// where it was locked (the cache and store have them, as they had
	// when it was locked here).
	olds, err := in.planLocked(ctx, old, moved, Request{Offline: req.Offline, Refresh: req.Refresh})
	if err != nil {
		p.Warnings = append(p.Warnings, fmt.Sprintf("the capability diffs of the moves could not be read from the old pins: %v", err))
	}
	for _, was := range moved {
		a := planned[was.Name]
		a.Action = ActionReplace
		e := Entry{Name: was.Name, Source: was.Source, Subdir: was.Subdir, Commit: was.Commit, ContentDigest: was.ContentDigest}
		o, ok := olds[was.Name]
		if !ok || !o.applicable() {
			e.Version = a.Version
			describeMoveFrom(a, e, emptyInventory(), cmp.Or(was.Marketplace, describeSource(was.Source)))
			why := "its old pin was not planned"
			if cause := cmp.Or(o.Err, err); cause != nil {
				why = cause.Error()
			}
			a.Warnings = append(a.Warnings, fmt.Sprintf("what %s contributed at its old pin could not be read (%s): its diff lists everything as added", was.Name, why))
			continue
		}
		e.Version = o.Version
		describeMoveFrom(a, e, o.Inventory, cmp.Or(was.Marketplace, describeSource(was.Source)))
	}
}

// planLocked plans plugins of lock l at their locked pins, as a sync of
// them to an empty home plans them (syncGroups: through their marketplace
// at its locked commit, or from their own pinned source). It returns the
// actions by name, and the first error of a group that could not be
// resolved.
func (in *Installer) planLocked(ctx context.Context, l *lockfile.Lock, plugins []lockfile.Plugin, req Request) (map[string]Action, error) {
	groups, byName := syncGroups(&lockfile.Lock{Version: l.Version, Marketplaces: l.Marketplaces, Plugins: plugins})
	if err := in.resolveGroups(ctx, req, groups); err != nil {
		return nil, err
	}
	out := map[string]Action{}
	var first error
	for _, g := range groups {
		if g.err != nil {
			first = cmp.Or(first, g.err)
			continue
		}
		for _, a := range in.syncActions(ctx, req, g, g.resolved, &Registry{}, byName) {
			out[a.Name] = a
		}
	}
	return out, first
}

// lockedAction is a locked plugin as an action of kind k and status s.
func lockedAction(lp lockfile.Plugin, k ActionKind, s ActionStatus) Action {
	return Action{
		Name: lp.Name, Action: k, Status: s, Source: lp.Source, Subdir: lp.Subdir,
		Commit: lp.Commit, ContentDigest: lp.ContentDigest, MarketplaceName: lp.Marketplace,
		Inventory: emptyInventory(), Warnings: []string{},
	}
}

// SyncProject is a sync of a project to its lock (reasonix sync with no
// FILE): the lock beside its .reasonix folder. A plugin the project wants
// that the lock does not pin (the project file changed since it was
// locked) is left to lock --update: --frozen refuses the sync, and
// otherwise the plan says so.
func (in *Installer) SyncProject(ctx context.Context, proj *lockfile.Project, sr SyncRequest, req Request, ap Approval) (*Response, error) {
	lock, err := lockfile.ReadFile(proj.LockPath())
	if err != nil {
		return ErrorResponse(proj.LockPath(), err), err
	}
	var notes []string
	for _, w := range proj.Unlocked(lock) {
		notes = append(notes, fmt.Sprintf("%s is wanted by %s but not pinned by its lock: run reasonix lock --update to pin it", w, lockfile.ProjectFile))
	}
	if sr.Frozen && len(notes) > 0 {
		more := ""
		if len(notes) > 1 {
			more = fmt.Sprintf(" (and %d more)", len(notes)-1)
		}
		err := plugind.Errorf(plugind.CodeNotPinnable, "--frozen: %s%s", notes[0], more)
		return ErrorResponse(proj.LockPath(), err), err
	}
	sr.Lock = lock
	resp, err := in.Sync(ctx, sr, req, ap)
	if resp != nil {
		resp.Warnings = append(resp.Warnings, notes...)
	}
	return resp, err
}
