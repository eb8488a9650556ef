package installer

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"reasonix.io/plugind"
	"reasonix.io/plugind/marketplace"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// UpdateRequest asks to update installed plugins (SPEC §7): the ones named,
// or all of them (those of one marketplace with Marketplace).
type UpdateRequest struct {
	Names       []string `json:"names,omitempty"`
	All         bool     `json:"all,omitempty"`
	Marketplace string   `json:"marketplace,omitempty"`
}

// Update plans, and when approved applies, an update: a plugin that came
// from a marketplace moves to its entry's current pin (the marketplace is
// re-read at its branch head: one conditional request when unchanged,
// offline its cached document); any other follows its recorded source (a
// commit stays, a branch moves to its head). One plan, one planId, one
// registry write, however many plugins.
//
// opts gives the options an update takes (Offline, AllowUnpinned, Refresh,
// Config); what names an install's source (Source, Name, Names, Subdir,
// Replace, Link) has no place in an update and is refused.
func (in *Installer) Update(ctx context.Context, ur UpdateRequest, opts Request, ap Approval) (*Response, error) {
	return in.planAndDecide(ctx, ap, "", func(ctx context.Context) (*Plan, error) { return in.planUpdate(ctx, &ur, opts) })
}

// target is one installed plugin an update covers.
type updateGroup struct {
	market   source.Source // marketplace source (zero for a plugin of its own)
	subdir   string
	entries  []Entry
	name     string // known marketplace name
	resolved *resolver.Fetched
	err      error
	// reqs are what the installed plugins that need its plugins ask of
	// them (ranges, shas).
	reqs map[string]requirement
	// site is where the group's plugins' dependencies are looked up (nil
	// for a plugin of its own).
	site *depSite
}

// planUpdate plans the update ur with the options of req.
func (in *Installer) planUpdate(ctx context.Context, ur *UpdateRequest, req Request) (*Plan, error) {
	if !req.Source.IsZero() || req.Name != "" || len(req.Names) > 0 || req.Subdir != "" || req.Replace || req.Link {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "an update names installed plugins, not a source: source, name, names, subdir, replace and link do not go with it")
	}
	reg, err := LoadRegistry(in.Home.RegistryPath())
	if err != nil {
		return nil, err
	}
	targets, err := in.updateTargets(reg, ur)
	if err != nil {
		return nil, err
	}
	p := &Plan{Request: req, asked: req, Source: updateLabel(ur), update: ur, single: len(ur.Names) == 1 && !ur.All}
	// Plugins of one marketplace are planned together (one read of it, one
	// fetch per repo@SHA); every other plugin from its own source.
	groups := map[string]*updateGroup{}
	var order []*updateGroup
	var marketNames []string // the plugins of marketplace groups
	for _, e := range targets {
		switch {
		case e.Link:
			p.Actions = append(p.Actions, keepAction(e, fmt.Sprintf("%s is linked to %s: it always runs that folder's current content, so there is nothing to update", e.Name, e.Source)))
			continue
		case !e.Marketplace.IsZero():
			market, subdir := in.marketAtHead(e)
			key := market.String() + "\x00" + e.MarketplaceName
			g, ok := groups[key]
			if !ok {
				g = &updateGroup{market: market, subdir: subdir, name: e.MarketplaceName}
				groups[key] = g
				order = append(order, g)
			}
			g.entries = append(g.entries, e)
			marketNames = append(marketNames, e.Name)
		default:
			order = append(order, &updateGroup{entries: []Entry{e}})
		}
	}
	reqs := in.installedRequirements(reg, marketNames)
	for _, grp := range order {
		grp.reqs = map[string]requirement{}
		for _, e := range grp.entries {
			if r, ok := reqs[e.Name]; ok {
				grp.reqs[e.Name] = r
			}
		}
	}
	renamed := map[string]string{} // new name → the installed plugin this plan renames to it
	if err := in.resolveGroups(ctx, req, order); err != nil {
		return nil, err
	}
	for _, grp := range order {
		if grp.err != nil {
			if p.single {
				return nil, grp.err
			}
			for _, e := range grp.entries {
				a := keepAction(e, "")
				a.skip(ActionBlocked, fmt.Errorf("update %s: %w", e.Name, grp.err))
				p.Actions = append(p.Actions, a)
			}
			continue
		}
		f := grp.resolved
		p.Warnings = append(p.Warnings, f.Warnings...)
		p.addSnapshots(f.Snapshots...)
		if f.Market != nil && grp.name != "" {
			// Re-read at its head: the known marketplace records the commit
			// (under its known name, whatever the document says now).
			m := *f.Market
			m.Name = grp.name
			p.markets = append(p.markets, marketRecord{market: &m, subdir: grp.subdir, entries: len(f.Candidates)})
		}
		p.Actions = append(p.Actions, in.updateActions(ctx, req, grp, f, reg, renamed)...)
	}
	if err := in.planDependencies(ctx, req, p, reg); err != nil {
		return nil, err
	}
	if err := p.seal(); err != nil {
		return nil, err
	}
	return p, nil
}

// marketAtHead is where an installed plugin's marketplace is re-read: its
// recorded source, with the folder its known marketplace records beside
// it. A dependency used to be recorded with the marketplace pinned at the
// commit its plan read; when the known marketplace of its name is that
// repository at its branch, that is where update reads it.
func (in *Installer) marketAtHead(e Entry) (market source.Source, subdir string) {
	k, err := in.knownMarketplace(e.MarketplaceName)
	if err != nil {
		return e.Marketplace, ""
	}
	if k.Source == e.Marketplace {
		return k.Source, k.Subdir
	}
	rec, known := e.Marketplace, k.Source
	if !rec.IsRemote() || !known.IsRemote() {
		return e.Marketplace, ""
	}
	rec, known = rec.Split(nil), known.Split(nil)
	if rec.Key() == known.Key() && rec.Subdir == known.Subdir && rec.Pinned() && !known.Pinned() {
		return k.Source, k.Subdir
	}
	return e.Marketplace, ""
}

// updateTargets are the installed plugins an update request covers.
func (in *Installer) updateTargets(reg *Registry, ur *UpdateRequest) ([]Entry, error) {
	if ur.All {
		if len(ur.Names) > 0 {
			return nil, plugind.Errorf(plugind.CodeInvalidSource, "give plugin names or --all, not both")
		}
		if ur.Marketplace != "" {
			if err := plugind.ValidateName(ur.Marketplace); err != nil {
				return nil, err
			}
		}
		out := slices.DeleteFunc(slices.Clone(reg.Plugins), func(e Entry) bool { return ur.Marketplace != "" && e.MarketplaceName != ur.Marketplace })
		if len(out) == 0 && ur.Marketplace != "" {
			return nil, plugind.Errorf(plugind.CodeNotFound, "no installed plugin came from marketplace %q", ur.Marketplace)
		}
		// Nothing installed: nothing to update, which is up to date.
		return out, nil
	}
	if len(ur.Names) == 0 {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "name the plugins to update, or --all")
	}
	var out []Entry
	for _, n := range sortedUnique(ur.Names) {
		if err := plugind.ValidateName(n); err != nil {
			return nil, err
		}
		e, ok := reg.Find(n)
		if !ok {
			return nil, notInstalled(n)
		}
		out = append(out, *e)
	}
	return out, nil
}

// resolveGroups resolves groups, a few at once (those that have an error
// already stay as they are); only a cancelled ctx is an error.
func (in *Installer) resolveGroups(ctx context.Context, req Request, groups []*updateGroup) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, grp := range groups {
		if grp.err != nil {
			continue
		}
		g.Go(func() error {
			grp.resolved, grp.err = in.resolveUpdate(gctx, req, grp)
			return nil
		})
	}
	_ = g.Wait()
	return ctx.Err()
}

// resolveUpdate resolves one group: a marketplace narrowed to its installed
// entries (a vanished one is listed missing, not an error), or one plugin's
// recorded source.
func (in *Installer) resolveUpdate(ctx context.Context, req Request, g *updateGroup) (*resolver.Fetched, error) {
	rr := resolver.Request{Offline: req.Offline, AllowUnpinned: req.AllowUnpinned, Refresh: req.Refresh}
	src, subdir := g.market, g.subdir
	if g.market.IsZero() {
		e := g.entries[0]
		src, subdir = e.Source, e.Subdir
		rr.Name = e.Name // a manifest-less plugin is read under its name
	} else {
		for _, e := range g.entries {
			rr.Names = append(rr.Names, e.Name)
		}
		sort.Strings(rr.Names)
		rr.KeepMissing, rr.FollowRenames = true, true
		rr.Constraints = constraintsOf(g.reqs)
	}
	src = src.Beside(subdir)
	rr.Source = src
	f, err := in.Sources.Resolve(ctx, rr)
	if err != nil {
		return nil, err
	}
	g.site = siteOf(src, f, g.name)
	return f, nil
}

// updateActions turns a resolved group into one action per installed
// plugin: a move (with what it moves from and the capability diff), a
// rename (SPEC §7: the marketplace lists it under a new name now), or a
// keep (up to date, or a vanished, removed or now-unpinned entry, with a
// warning). renamed holds the new names this plan has given already.
func (in *Installer) updateActions(ctx context.Context, req Request, g *updateGroup, f *resolver.Fetched, reg *Registry, renamed map[string]string) []Action {
	byName := map[string]resolver.Candidate{}
	for _, c := range f.Candidates {
		byName[c.Name] = c
	}
	renames := map[string]resolver.Rename{}
	for _, r := range f.Renames {
		renames[r.From] = r
	}
	var out []Action
	for _, e := range g.entries {
		name := e.Name
		if slices.Contains(f.Missing, e.Name) {
			r, ok := renames[e.Name]
			if !ok || r.Kind != marketplace.Renamed {
				out = append(out, keepAction(e, vanished(g, e, r, ok)))
				continue
			}
			if a, stop := renameBlocked(g, e, r.To, reg, renamed); stop {
				out = append(out, a)
				continue
			}
			name = r.To
		}
		c, ok := byName[name]
		if g.market.IsZero() && len(f.Candidates) == 1 {
			c, ok = f.Candidates[0], true
		}
		if !ok {
			out = append(out, keepAction(e, fmt.Sprintf("%s offered no plugin named %s; the installed copy stays", marketLabel(g), name)))
			continue
		}
		single := g.market.IsZero()
		r := Request{Replace: true, Name: name, Config: req.Config, configOf: e.Name}
		a := in.planCandidates(ctx, r, []resolver.Candidate{c}, single, reg, in.manifests())[0]
		a.Name = cmp.Or(a.Name, name)
		a.MarketplaceName, a.site = e.MarketplaceName, g.site
		if !g.market.IsZero() && plugind.CodeOf(a.Err) == plugind.CodeNotPinnable && a.Status == ActionSkipped {
			// The entry became unpinned: never move to a moving head.
			out = append(out, keepAction(e, fmt.Sprintf("%s: %v; the installed commit %s stays (--allow-unpinned pins the ref's current head)", name, a.Err, host.Short(e.Commit))))
			continue
		}
		unchanged := name == e.Name && a.Commit == e.Commit && a.ContentDigest == e.ContentDigest
		if unchanged && plugind.CodeOf(a.Err) == plugind.CodeConfigRequired && !a.config.given {
			// Installed before it had its values: it stays as it is (as
			// Claude Code leaves it), and the update says what it lacks.
			k := keepAction(e, fmt.Sprintf("%v; until then what uses it cannot start", a.Err))
			k.UserConfig, k.config = a.UserConfig, a.config
			out = append(out, k)
			continue
		}
		if !a.applicable() {
			if name != e.Name {
				// The new name cannot be installed: the old one stays.
				out = append(out, keepAction(e, fmt.Sprintf("marketplace %s renamed %s to %s, which cannot be installed (%v); %s stays at %s", marketLabel(g), e.Name, name, a.Err, e.Name, host.Short(e.Commit))))
				continue
			}
			out = append(out, a)
			continue
		}
		if why := g.reqs[e.Name].unmet(a); why != "" {
			out = append(out, keepAction(e, fmt.Sprintf("%s stays at %s: %s", e.Name, host.Short(e.Commit), why)))
			continue
		}
		if unchanged && !a.config.changed {
			k := keepAction(e, "")
			k.Warnings, k.Unchecked = a.Warnings, a.Unchecked
			k.UserConfig, k.config = a.UserConfig, a.config
			out = append(out, k)
			continue
		}
		if name != e.Name {
			renamed[name] = e.Name
		}
		in.describeMove(&a, e, marketLabel(g))
		if a.tagMiss != "" {
			a.Warnings = append(a.Warnings, a.tagMiss)
		}
		out = append(out, a)
	}
	return out
}

// describeMove gives a, a move of installed plugin e, what it moves
// from, the capability diff (with any change of place, config or name:
// by is who renamed it) and the risk of the move, as an update's review
// shows them (SPEC §9). Sync describes its moves the same way.
func (in *Installer) describeMove(a *Action, e Entry, by string) {
	describeMoveFrom(a, e, in.inspect(e).Inventory, by)
}

// describeMoveFrom is describeMove from e as it contributed old (a lock's
// pin, which no home needs to have installed, gives its own).
func describeMoveFrom(a *Action, e Entry, old Inventory, by string) {
	a.Previous = &Previous{Source: e.Source, Subdir: e.Subdir, Commit: e.Commit, ContentDigest: e.ContentDigest, Version: e.Version, Risk: inventoryRisk(old)}
	a.PreviousCommit = e.Commit
	a.Diff = diffInventories(old, a.Inventory)
	a.Diff.addConfig(a.config)
	a.Diff.addMove(e.Source, e.Subdir, a.Source, a.Subdir)
	if a.Name != e.Name {
		a.RenamedFrom = e.Name
		a.Diff.addRename(e.Name, a.Name, by)
	}
	a.Risk = updateRisk(a.Risk, a.Previous.Risk, a.Diff)
	if e.Commit != "" && a.Commit != e.Commit {
		a.Warnings = append(a.Warnings, fmt.Sprintf("moves from %s to %s", host.Short(e.Commit), host.Short(a.Commit)))
	}
}

// vanished says why an installed plugin its marketplace no longer lists
// stays: the renames map removed it (null), leads nowhere, or does not
// name it.
func vanished(g *updateGroup, e Entry, r resolver.Rename, renamed bool) string {
	switch {
	case renamed && r.Kind == marketplace.RenameRemoved:
		return fmt.Sprintf("marketplace %s removed %s (its renames map: %s → null); the installed copy (%s) stays", marketLabel(g), e.Name, strings.Join(r.Chain, " → "), host.Short(e.Commit))
	case renamed:
		return fmt.Sprintf("marketplace %s no longer lists %s, and its renames map does not resolve it (%s: %s); the installed copy (%s) stays", marketLabel(g), e.Name, strings.Join(r.Chain, " → "), r.Reason, host.Short(e.Commit))
	}
	return fmt.Sprintf("marketplace %s no longer lists %s; the installed copy (%s) stays", marketLabel(g), e.Name, host.Short(e.Commit))
}

// renameBlocked is the action for installed plugin e when its
// marketplace's rename to newName cannot be followed: a plugin named
// newName is installed from elsewhere (a conflict naming both), or from
// the same marketplace (e is a leftover copy, which stays), or another
// plugin of this plan is renamed to it already.
func renameBlocked(g *updateGroup, e Entry, newName string, reg *Registry, renamed map[string]string) (Action, bool) {
	if other, ok := renamed[newName]; ok {
		a := keepAction(e, "")
		a.skip(ActionConflict, plugind.Errorf(plugind.CodeConflict, "marketplace %s renamed %s to %s, and %s to it too, which this update renames; %s stays where it is", marketLabel(g), e.Name, newName, other, e.Name))
		return a, true
	}
	inst, ok := reg.Find(newName)
	switch {
	case !ok:
		return Action{}, false
	case inst.MarketplaceName != "" && inst.MarketplaceName == e.MarketplaceName:
		return keepAction(e, fmt.Sprintf("marketplace %s renamed %s to %s, which is installed already from it: %s is a leftover copy and stays until you remove it (reasonix plugin remove %s --yes)", marketLabel(g), e.Name, newName, e.Name, e.Name)), true
	}
	from := "marketplace " + inst.MarketplaceName
	if inst.MarketplaceName == "" {
		from = describeSource(inst.Source)
	}
	a := keepAction(e, "")
	a.skip(ActionConflict, plugind.Errorf(plugind.CodeConflict, "marketplace %s renamed %s to %s, but a plugin named %s is installed already, from %s: %s stays where it is until that one is removed (reasonix plugin remove %s --yes)", marketLabel(g), e.Name, newName, newName, from, e.Name, newName))
	return a, true
}

// keepAction is an installed plugin an update leaves where it is.
func keepAction(e Entry, warning string) Action {
	a := Action{
		Name: e.Name, Action: ActionKeep, Status: ActionUpToDate, Source: e.Source, Subdir: e.Subdir,
		Commit: e.Commit, ContentDigest: e.ContentDigest, ManifestKind: e.ManifestKind, Version: e.Version,
		Description: e.Description, Inventory: emptyInventory(), Warnings: []string{},
		Link: e.Link, Marketplace: e.Marketplace, MarketplaceName: e.MarketplaceName, Root: e.Root,
		Tag: e.Tag, ResolvedVersion: e.ResolvedVersion,
	}
	if warning != "" {
		a.Warnings = append(a.Warnings, warning)
	}
	return a
}

func marketLabel(g *updateGroup) string { return cmp.Or(g.name, g.market.String()) }

func updateLabel(ur *UpdateRequest) string {
	switch {
	case ur.All && ur.Marketplace != "":
		return "update --all --marketplace " + ur.Marketplace
	case ur.All:
		return "update --all"
	}
	return "update " + strings.Join(sortedUnique(ur.Names), " ")
}

// describeSource names a recorded source in messages: its repository and
// ref for a remote one.
func describeSource(s source.Source) string {
	if s.IsRemote() {
		ref := cmp.Or(s.Ref, s.TreeRest())
		if ref == "" {
			return s.Key()
		}
		return fmt.Sprintf("%s (%s)", s.Key(), ref)
	}
	return s.String()
}
