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
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// SyncRequest asks to make the home match a lock (SPEC §16). It is kept
// whole in a stored plan, the lock included, so approving the plan by its
// planId (POST /plugins/install {planId}) replays exactly this sync.
type SyncRequest struct {
	Lock *lockfile.Lock `json:"lock"`
	// Prune removes the installed plugins the lock lacks; without it they
	// stay, each with a note.
	Prune bool `json:"prune,omitempty"`
	// Frozen refuses a lock that leaves anything to resolve: a plugin
	// without a commit or digest, a marketplace without a commit.
	Frozen bool `json:"frozen,omitempty"`
}

// syncPlan is what a sync plan does besides its install and update
// actions, applied in the same registry write.
type syncPlan struct {
	req *SyncRequest
	// enabled and dependency are every locked plugin's states.
	enabled, dependency map[string]bool
	// toggles are the installed plugins whose enabled state changes.
	toggles []string
	// removes are what --prune removes.
	removes []Entry
	// learns are the lock's marketplaces this home does not know yet.
	learns []string
	// markets are the locked plugins' marketplaces (name, and source as
	// recorded), and relinks the installed plugins that are not linked to
	// theirs (a marketplace removed with --force unlinks its plugins).
	markets map[string]lockfile.Marketplace
	relinks []string
}

// changes reports whether the plan changes anything beyond its actions
// that install: an enabled state, a removal, a marketplace to know.
func (s *syncPlan) changes() bool {
	return s != nil && (len(s.toggles) > 0 || len(s.removes) > 0 || len(s.learns) > 0 || len(s.relinks) > 0)
}

// Sync plans, and when approved applies, what makes the home match
// sr.Lock: one plan, one planId, one approval, one registry write. opts
// gives the options it takes (Offline, Refresh).
func (in *Installer) Sync(ctx context.Context, sr SyncRequest, opts Request, ap Approval) (*Response, error) {
	return in.planAndDecide(ctx, ap, "sync", func(ctx context.Context) (*Plan, error) { return in.PlanSync(ctx, &sr, opts) })
}

// PlanSync plans the sync sr with the options of req, writing nothing
// outside the cache and the store. Every locked plugin is planned again
// from where the lock says it came: through its marketplace read at the
// locked commit (so its entry reads it exactly as it was read when it was
// locked), or from its own pinned source. It is installed when missing,
// moved to the locked commit when installed at another (with the
// previous copy and the capability diff, as an update), kept when
// installed as locked; a planned digest other than the locked one refuses
// that plugin (install.digest_mismatch) and nothing of it is installed.
func (in *Installer) PlanSync(ctx context.Context, sr *SyncRequest, req Request) (*Plan, error) {
	if !req.Source.IsZero() || req.Name != "" || len(req.Names) > 0 || req.Subdir != "" || req.Replace || req.Link || req.AllowUnpinned || len(req.Config) > 0 {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "a sync installs what its lock says: source, name, names, subdir, replace, link, allowUnpinned and config do not go with it")
	}
	lock := sr.Lock
	if lock == nil {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "a sync needs a lock")
	}
	if err := lock.Check(); err != nil {
		return nil, err
	}
	if sr.Frozen {
		if err := frozenCheck(lock); err != nil {
			return nil, err
		}
	}
	reg, err := in.plannedRegistry()
	if err != nil {
		return nil, err
	}
	known, err := LoadMarketplaces(in.Home.MarketplacesPath())
	if err != nil {
		return nil, err
	}
	p := &Plan{Request: req, asked: req, Source: "the lock"}
	p.sync = &syncPlan{req: sr, enabled: map[string]bool{}, dependency: map[string]bool{}, markets: map[string]lockfile.Marketplace{}}
	groups, byName := syncGroups(lock)
	for _, grp := range groups {
		if lm, ok := lock.FindMarketplace(grp.name); ok {
			if k, ok := known.Find(lm.Name); ok && (k.Source != lm.Source || k.Subdir != lm.Subdir) {
				grp.err = plugind.Errorf(plugind.CodeConflict, "this home knows another marketplace named %q (%s); the lock's is %s: remove it first (reasonix marketplace remove %s)", lm.Name, k.Source, lm.Source, lm.Name)
			}
		}
	}
	if err := in.resolveGroups(ctx, req, groups); err != nil {
		return nil, err
	}
	recorded := map[string]bool{}
	for _, grp := range groups {
		if grp.err != nil {
			for _, e := range grp.entries {
				a := keepAction(e, "")
				a.Action, a.Status, a.Err = ActionSkip, ActionBlocked, fmt.Errorf("sync %s: %w", e.Name, grp.err)
				a.Commit, a.ContentDigest = byName[e.Name].Commit, byName[e.Name].ContentDigest
				p.Actions = append(p.Actions, a)
			}
			continue
		}
		f := grp.resolved
		p.Warnings = append(p.Warnings, f.Warnings...)
		p.addSnapshots(f.Snapshots...)
		if lm, ok := lock.FindMarketplace(grp.name); ok && f.Market != nil && !recorded[lm.Name] && cmp.Or(lm.Commit, f.Commit) == f.Commit {
			// The lock's marketplaces become known, at the locked
			// commit, from the source the lock names (its branch).
			m := *f.Market
			m.Name, m.Source, m.Commit = lm.Name, lm.Source, f.Commit
			p.markets = append(p.markets, marketRecord{market: &m, subdir: lm.Subdir, entries: len(f.Candidates)})
			recorded[lm.Name] = true
		}
		p.Actions = append(p.Actions, in.syncActions(ctx, req, grp, f, reg, byName)...)
	}
	for _, lm := range lock.Marketplaces {
		if _, ok := known.Find(lm.Name); ok {
			continue
		}
		// A marketplace this home does not know yet becomes known, at
		// the locked commit, even when none of its plugins needed it read
		// there (its plugins' entries were read at other commits, or it
		// has none in the lock).
		p.sync.learns = append(p.sync.learns, lm.Name)
		p.Warnings = append(p.Warnings, fmt.Sprintf("marketplace %s (%s) becomes known, at commit %s", lm.Name, lm.Source, cmp.Or(host.Short(lm.Commit), "its branch head")))
		if !recorded[lm.Name] {
			m := resolver.Market{Name: lm.Name, Source: lm.Source, Commit: lm.Commit}
			p.markets = append(p.markets, marketRecord{market: &m, subdir: lm.Subdir})
		}
	}
	for _, l := range lock.Plugins {
		p.sync.enabled[l.Name], p.sync.dependency[l.Name] = l.Enabled, l.Dependency
		if lm, ok := lock.FindMarketplace(l.Marketplace); ok {
			p.sync.markets[l.Name] = *lm
		}
	}
	for _, e := range reg.Plugins {
		if _, locked := byName[e.Name]; locked {
			if lm, ok := p.sync.markets[e.Name]; ok && e.MarketplaceName != lm.Name && slices.ContainsFunc(p.Actions, func(a Action) bool { return a.Name == e.Name && a.Action == ActionKeep }) {
				p.sync.relinks = append(p.sync.relinks, e.Name)
				i := slices.IndexFunc(p.Actions, func(a Action) bool { return a.Name == e.Name })
				p.Actions[i].Warnings = append(p.Actions[i].Warnings, fmt.Sprintf("linked to marketplace %s again, as the lock says", lm.Name))
			}
			if en := p.sync.enabled[e.Name]; en != e.Enabled && slices.ContainsFunc(p.Actions, func(a Action) bool { return a.Name == e.Name && a.Action == ActionKeep }) {
				p.sync.toggles = append(p.sync.toggles, e.Name)
				i := slices.IndexFunc(p.Actions, func(a Action) bool { return a.Name == e.Name })
				p.Actions[i].Warnings = append(p.Actions[i].Warnings, fmt.Sprintf("%s as the lock says", map[bool]string{true: "enabled", false: "disabled"}[en]))
			}
			continue
		}
		if sr.Prune {
			p.sync.removes = append(p.sync.removes, e)
			a := removeAction(e, ActionReady)
			a.Warnings = append(a.Warnings, "not in the lock: --prune removes it")
			p.Actions = append(p.Actions, a)
			continue
		}
		p.Actions = append(p.Actions, keepAction(e, fmt.Sprintf("%s is not in the lock: it stays (--prune removes the plugins the lock lacks)", e.Name)))
	}
	if err := in.planDependencies(ctx, req, p, reg); err != nil {
		return nil, err
	}
	for i := range p.Actions {
		// A locked plugin is what it was on the machine that locked it,
		// a dependency or the user's own.
		if a := &p.Actions[i]; a.applicable() {
			if _, locked := byName[a.Name]; locked {
				a.Dependency = p.sync.dependency[a.Name]
			}
		}
	}
	if err := p.seal(); err != nil {
		return nil, err
	}
	return p, nil
}

// frozenCheck refuses a lock that does not pin everything (--frozen).
func frozenCheck(lock *lockfile.Lock) error {
	var loose []string
	for _, m := range lock.Marketplaces {
		if m.Commit == "" {
			loose = append(loose, "marketplace "+m.Name+" has no commit")
		}
	}
	for _, l := range lock.Plugins {
		if !l.Pinned() {
			loose = append(loose, "plugin "+l.Name+" has no "+cmp.Or(map[bool]string{true: "commit"}[l.Commit == ""], "contentDigest"))
		}
	}
	if len(loose) == 0 {
		return nil
	}
	if len(loose) > 5 {
		loose = append(loose[:5], fmt.Sprintf("and %d more", len(loose)-5))
	}
	return plugind.Errorf(plugind.CodeNotPinnable, "--frozen: the lock leaves things to resolve (%s); lock them again on a machine that has them, or sync without --frozen", strings.Join(loose, "; "))
}

// syncGroups groups the lock's plugins as update groups: the plugins of
// one marketplace read at one commit together (one read of it, one fetch
// per repo@SHA), every other plugin from its own pinned source. byName
// holds each locked plugin.
func syncGroups(lock *lockfile.Lock) (groups []*updateGroup, byName map[string]lockfile.Plugin) {
	byName = map[string]lockfile.Plugin{}
	keyed := map[string]*updateGroup{}
	for _, l := range lock.Plugins {
		byName[l.Name] = l
		if l.Marketplace == "" {
			src := l.Source
			if l.Commit != "" && !src.Pinned() {
				src = src.At(l.Commit)
			}
			groups = append(groups, &updateGroup{entries: []Entry{{Name: l.Name, Source: src, Subdir: l.Subdir}}})
			continue
		}
		lm, _ := lock.FindMarketplace(l.Marketplace) // Check made sure it is there
		at := cmp.Or(l.MarketplaceCommit, lm.Commit)
		key := lm.Name + "\x00" + at
		grp, ok := keyed[key]
		if !ok {
			market := lm.Source
			if at != "" {
				market = market.At(at)
			}
			grp = &updateGroup{market: market, subdir: lm.Subdir, name: lm.Name}
			keyed[key] = grp
			groups = append(groups, grp)
		}
		grp.entries = append(grp.entries, Entry{Name: l.Name, Source: l.Source, Subdir: l.Subdir, MarketplaceName: lm.Name, Marketplace: lm.Source})
	}
	return groups, byName
}

// syncActions turns a resolved group into one action per locked plugin of
// it: install, a move to the locked commit, or keep; or a refusal when
// what was planned is not what the lock pins.
func (in *Installer) syncActions(ctx context.Context, req Request, g *updateGroup, f *resolver.Fetched, reg *Registry, byName map[string]lockfile.Plugin) []Action {
	cands := map[string]resolver.Candidate{}
	for _, c := range f.Candidates {
		cands[c.Name] = c
	}
	if g.market.IsZero() && len(f.Candidates) == 1 {
		cands[g.entries[0].Name] = f.Candidates[0]
	}
	// Each plugin is planned with its locked option values (NAME.KEY, so a
	// value lands on its own plugin only); the values a home keeps of its
	// own (sensitive ones) stay.
	r := Request{Replace: true, Config: map[string]string{}}
	var todo []resolver.Candidate
	var missing []Action
	for _, e := range g.entries {
		l := byName[e.Name]
		c, ok := cands[e.Name]
		if !ok {
			a := keepAction(e, "")
			a.Commit, a.ContentDigest = l.Commit, l.ContentDigest
			a.skip(ActionBlocked, plugind.Errorf(plugind.CodeNotFound, "%s offers no plugin named %s at %s", marketLabel(g), e.Name, describeSource(g.market)))
			missing = append(missing, a)
			continue
		}
		c.Name = e.Name
		todo = append(todo, c)
		for k, v := range l.Config {
			r.Config[e.Name+"."+k] = v.Text()
		}
	}
	var planned []Action
	if g.market.IsZero() {
		for _, c := range todo {
			r.Name = c.Name
			planned = append(planned, in.planCandidates(ctx, r, []resolver.Candidate{c}, true, reg, in.manifests())...)
		}
	} else {
		planned = in.planCandidates(ctx, r, todo, false, reg, in.manifests())
	}
	out := missing
	for i := range planned {
		a := &planned[i]
		a.Name = cmp.Or(a.Name, todo[i].Name)
		l := byName[a.Name]
		if !g.market.IsZero() {
			// Recorded as the plugins of the lock's marketplace, at its
			// branch, as the machine that locked them recorded them.
			a.MarketplaceName, a.Marketplace, a.site = g.name, g.entries[0].Marketplace, g.site
		}
		if a.applicable() {
			if err := lockMismatch(a, l); err != nil {
				a.skip(ActionBlocked, err)
			}
		}
		if !a.applicable() {
			out = append(out, *a)
			continue
		}
		e, installed := reg.Find(a.Name)
		if !installed {
			a.Action = ActionInstall
			out = append(out, *a)
			continue
		}
		if sameInstall(e, *a) && !a.config.changed {
			k := keepAction(*e, "")
			k.Warnings, k.Unchecked = a.Warnings, a.Unchecked
			k.UserConfig, k.config, k.Dependencies = a.UserConfig, a.config, a.Dependencies
			out = append(out, k)
			continue
		}
		in.describeMove(a, *e, marketLabel(g))
		if e.Commit != "" && a.Commit != e.Commit {
			a.Warnings = append(a.Warnings, fmt.Sprintf("the locked commit %s may be older than the installed %s: sync installs what the lock pins, never a newer commit", host.Short(a.Commit), host.Short(e.Commit)))
		}
		out = append(out, *a)
	}
	return out
}

// lockMismatch refuses a planned plugin that is not what the lock pins:
// another source, folder or commit (the lock and its marketplace
// disagree), or another content digest (SPEC §16: install.digest_mismatch,
// naming both).
func lockMismatch(a *Action, l lockfile.Plugin) error {
	switch {
	case l.ContentDigest != "" && a.ContentDigest != l.ContentDigest:
		return plugind.Errorf(plugind.CodeDigestMismatch, "%s: the lock pins content %s, but %s at %s has content %s; nothing of it is installed (a lock edited by hand, or a repository rewritten since it was locked)", a.Name, l.ContentDigest, a.Source, host.Short(a.Commit), a.ContentDigest)
	case l.Commit != "" && a.Commit != l.Commit:
		return plugind.Errorf(plugind.CodeDigestMismatch, "%s: the lock pins commit %s, but where the lock says it comes from names %s; nothing of it is installed (lock it again where it was installed)", a.Name, l.Commit, a.Commit)
	case !l.Source.IsZero() && (sourceText(a.Source, a.Subdir) != sourceText(l.Source, l.Subdir)):
		return plugind.Errorf(plugind.CodeDigestMismatch, "%s: the lock says it comes from %s, but its marketplace entry names %s; nothing of it is installed", a.Name, sourceText(l.Source, l.Subdir), sourceText(a.Source, a.Subdir))
	}
	return nil
}

// sourceText is a recorded source with the folder recorded beside it.
func sourceText(s source.Source, subdir string) string {
	return s.Beside(subdir).String()
}

// planned are the names whose enabled state or presence a sync plan
// changes, for its planId.
func (s *syncPlan) planned() (enable, disable, remove, learn, relink []string) {
	if s == nil {
		return nil, nil, nil, nil, nil
	}
	for _, n := range s.toggles {
		if s.enabled[n] {
			enable = append(enable, n)
		} else {
			disable = append(disable, n)
		}
	}
	for _, e := range s.removes {
		remove = append(remove, e.Name)
	}
	return enable, disable, remove, s.learns, s.relinks
}

// applySync makes next, the registry a sync's publication writes, say
// what the lock says of every locked plugin (enabled, a dependency) and
// drops what --prune removes; the removed entries are retired, and their
// config/ files released, after the write.
func (s *syncPlan) apply(next *Registry) (removed []Entry, released []string) {
	for _, name := range slices.Sorted(maps.Keys(s.enabled)) {
		if e, ok := next.Find(name); ok {
			e.Enabled, e.Dependency = s.enabled[name], s.dependency[name]
			if lm, ok := s.markets[name]; ok && slices.Contains(s.relinks, name) {
				e.MarketplaceName, e.Marketplace = lm.Name, lm.Source
			}
		}
	}
	for _, e := range s.removes {
		if _, ok := next.Find(e.Name); ok {
			next.Delete(e.Name)
			removed = append(removed, e)
			if e.ConfigFile != "" {
				released = append(released, e.ConfigFile)
			}
		}
	}
	return removed, released
}

// stillInstalled refuses to apply a sync plan when a plugin whose
// enabled state it sets, or that it removes, was removed by another
// process since it was made (reg is the registry under the home lock).
func (s *syncPlan) stillInstalled(reg *Registry) error {
	if s == nil {
		return nil
	}
	names := slices.Concat(s.toggles, s.relinks)
	for _, e := range s.removes {
		names = append(names, e.Name)
	}
	for _, n := range names {
		if _, ok := reg.Find(n); !ok {
			return plugind.Errorf(plugind.CodeApprovalDenied, "plugin %q was removed by another process since this plan was made; plan again", n)
		}
	}
	return nil
}
