package installer

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sort"
	"strings"

	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// Dependencies (SPEC §7): a plan carries the plugins its plugins declare
// they need, resolved in the dependent's marketplace (or the one a
// NAME@MARKETPLACE dependency names), pinned like any entry and marked as
// dependencies. A dependency that is missing, cannot be installed, has
// the wrong version or closes a cycle blocks its dependents; nothing is
// installed half-wired.

// depSite is where an action's bare-named dependencies are looked up: the
// marketplace it came from, at the commit the plan read it.
type depSite struct {
	src source.Source
	// market is its source as a plugin's registry entry records it: at its
	// branch, not the commit read, so update re-reads its head.
	market source.Source
	name   string   // its known name ("" when it is not known)
	doc    string   // the name its document gives itself
	label  string   // for messages
	allow  []string // the plan's root marketplace's allowCrossMarketplaceDependenciesOn
}

// owns reports whether a dependency's marketplace qualifier names this
// site ("" always does).
func (s *depSite) owns(market string) bool {
	return market == "" || market == s.name || market == s.doc
}

// siteOf is the site of the marketplace f was read from, pinned to the
// commit read (src is the source that was resolved).
func siteOf(src source.Source, f *resolver.Fetched, knownName string) *depSite {
	if f.Market == nil {
		return nil
	}
	market := f.Source
	if src.IsRemote() && f.Commit != "" {
		src = src.At(f.Commit).WithSubdir(f.Subdir)
	}
	label := cmp.Or(knownName, f.Market.Name, f.Source.String())
	return &depSite{src: src, market: market, name: knownName, doc: f.Market.Name, label: label, allow: f.Market.AllowDependenciesFrom}
}

// depEdge is one resolved dependency of a planned plugin: another action of
// the plan (target >= 0) or an installed plugin that stays (installed).
type depEdge struct {
	dep       manifest.Dependency
	target    int
	installed *Entry
}

// depPlanner closes a plan over its dependencies.
type depPlanner struct {
	in    *Installer
	req   Request
	p     *Plan
	reg   *Registry
	index map[string]int // action name → index of the action that owns the name
	edges map[int][]depEdge
	sites map[string]*depSite // known marketplaces by name, opened on demand
	// pending: dependencies to resolve, by site, then by name, with the
	// actions that need them.
	pending map[*depSite]map[string][]int
	// Why blocked actions are blocked: reason is an action's own
	// dependency problem, said of it ("needs ghost, which …"); via the
	// action it needs that cannot be installed. An error names the chain
	// of vias down to the first problem, never another error's text.
	reason map[int]string
	via    map[int]int
}

// planDependencies adds to p every plugin its ready plugins need and
// blocks those whose needs cannot be met.
func (in *Installer) planDependencies(ctx context.Context, req Request, p *Plan, reg *Registry) error {
	dp := &depPlanner{in: in, req: req, p: p, reg: reg, index: map[string]int{}, edges: map[int][]depEdge{}, sites: map[string]*depSite{},
		reason: map[int]string{}, via: map[int]int{}}
	var queue []int
	for i := range p.Actions {
		dp.own(i)
		queue = append(queue, i)
	}
	// Each pass reads the next level of dependencies: what the plan's
	// plugins need (level 1), what those need (level 2)… A chain deeper
	// than maxDependencyDepth is not followed: its last plugin is blocked,
	// and with it everything above, so a marketplace cannot make a plan
	// read it a thousand times over.
	for level := 1; len(queue) > 0; level++ {
		dp.pending = map[*depSite]map[string][]int{}
		for _, i := range queue {
			a := &p.Actions[i]
			if !a.applicable() {
				continue
			}
			for _, d := range a.Dependencies {
				dp.link(i, d)
			}
		}
		if level > maxDependencyDepth {
			dp.blockPendingTooDeep()
			break
		}
		var err error
		if queue, err = dp.resolvePending(ctx); err != nil {
			return err
		}
	}
	// The team mirror's runtime rule blocks before the dependencies are
	// settled, so what needs a blocked plugin is blocked with it.
	in.governRuntime(ctx, p)
	dp.check()
	return nil
}

// own indexes action i under its name (a ready action wins the name).
func (dp *depPlanner) own(i int) {
	a := &dp.p.Actions[i]
	if a.Name == "" {
		return
	}
	if j, ok := dp.index[a.Name]; ok && dp.p.Actions[j].applicable() {
		return
	}
	dp.index[a.Name] = i
}

// link resolves dependency d of action i to an action of the plan, an
// installed plugin, or a pending lookup; or blocks i.
func (dp *depPlanner) link(i int, d manifest.Dependency) {
	a := &dp.p.Actions[i]
	site := a.site
	if d.Marketplace != "" && (site == nil || !site.owns(d.Marketplace)) {
		if site != nil && !slices.Contains(site.allow, d.Marketplace) {
			dp.block(i, "needs %s, from marketplace %q; plugins of %s may only pull dependencies from the marketplaces its allowCrossMarketplaceDependenciesOn lists, and %q is not one (install %s@%s yourself first)",
				d, d.Marketplace, site.label, d.Marketplace, d.Name, d.Marketplace)
			return
		}
		other, err := dp.knownSite(d.Marketplace, site)
		if err != nil {
			dp.block(i, "needs %s: %v", d, err)
			return
		}
		site = other
	}
	if j, ok := dp.index[d.Name]; ok {
		b := &dp.p.Actions[j]
		if site != nil && b.site != nil && b.site != site && b.site.label != site.label {
			dp.block(i, "needs %s from %s, but this plan installs %s from %s", d.Name, site.label, d.Name, b.site.label)
			return
		}
		dp.edges[i] = append(dp.edges[i], depEdge{dep: d, target: j})
		return
	}
	if e, ok := dp.reg.Find(d.Name); ok {
		dp.edges[i] = append(dp.edges[i], depEdge{dep: d, target: -1, installed: e})
		return
	}
	if site == nil {
		dp.block(i, "needs plugin %q, which is not installed; %s did not come from a marketplace, so there is nowhere to look for %q: install it first", d.Name, a.Name, d.Name)
		return
	}
	if dp.pending[site] == nil {
		dp.pending[site] = map[string][]int{}
	}
	dp.pending[site][d.Name] = append(dp.pending[site][d.Name], i)
}

// knownSite opens a known marketplace a dependency names (at its head,
// as installing NAME@MARKETPLACE does). Trust does not chain: its plugins'
// own cross-marketplace dependencies answer to the root's allowlist.
func (dp *depPlanner) knownSite(name string, root *depSite) (*depSite, error) {
	if s, ok := dp.sites[name]; ok {
		return s, nil
	}
	k, err := dp.in.knownMarketplace(name)
	if err != nil {
		return nil, err
	}
	s := &depSite{src: k.Source.Beside(k.Subdir), market: k.Source, name: name, label: name}
	if root != nil {
		s.allow = root.allow
	}
	dp.sites[name] = s
	return s, nil
}

// resolvePending reads the pending dependencies, one narrowed resolve per
// marketplace, adds them to the plan as dependencies, and returns the new
// actions (whose own dependencies come next).
func (dp *depPlanner) resolvePending(ctx context.Context) ([]int, error) {
	sites := slices.SortedFunc(maps.Keys(dp.pending), func(a, b *depSite) int { return strings.Compare(a.label, b.label) })
	var added []int
	for _, site := range sites {
		wanted := dp.pending[site]
		names := slices.Sorted(maps.Keys(wanted))
		f, err := dp.in.Sources.Resolve(ctx, resolver.Request{
			Source: site.src, Names: names, KeepMissing: true, Constraints: dp.constraints(wanted),
			Offline: dp.req.Offline, AllowUnpinned: dp.req.AllowUnpinned, Refresh: dp.req.Refresh,
		})
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err != nil {
			for _, n := range names {
				for _, i := range wanted[n] {
					dp.block(i, "needs %s from marketplace %s, which cannot be read: %v", n, site.label, err)
				}
			}
			continue
		}
		if site.doc == "" && f.Market != nil {
			site.doc = f.Market.Name
		}
		dp.p.addWarnings(f.Warnings...)
		dp.p.addSnapshots(f.Snapshots...)
		for _, n := range f.Missing {
			for _, i := range wanted[n] {
				dp.block(i, "needs %s, which marketplace %s does not list", n, site.label)
			}
		}
		depReq := Request{Config: dp.req.Config}
		for k, a := range dp.in.planCandidates(ctx, depReq, f.Candidates, false, dp.reg, dp.in.manifests()) {
			a.MarketplaceName, a.site, a.Dependency = site.name, site, true
			if !site.market.IsZero() {
				a.Marketplace = site.market
			}
			a.Name = cmp.Or(a.Name, f.Candidates[k].Name)
			if _, taken := dp.index[a.Name]; taken {
				continue // two marketplaces answered for one name; the first stands
			}
			dp.p.Actions = append(dp.p.Actions, a)
			j := len(dp.p.Actions) - 1
			dp.own(j)
			added = append(added, j)
			for _, i := range wanted[a.Name] {
				for _, d := range dp.p.Actions[i].Dependencies {
					if d.Name == a.Name {
						dp.edges[i] = append(dp.edges[i], depEdge{dep: d, target: j})
					}
				}
			}
		}
	}
	return added, nil
}

// constraints are what the dependents waiting for each name ask of its
// commit: every range they give (all must hold), and a sha. Dependents
// that pin another sha than the first are blocked: one plugin cannot be
// installed at two commits.
func (dp *depPlanner) constraints(wanted map[string][]int) map[string]resolver.Constraint {
	out := map[string]resolver.Constraint{}
	for name, dependents := range wanted {
		var c resolver.Constraint
		pinnedBy := ""
		for _, i := range dependents {
			for _, d := range dp.p.Actions[i].Dependencies {
				if d.Name != name {
					continue
				}
				if d.Version != "" && !slices.Contains(c.Ranges, d.Version) {
					c.Ranges = append(c.Ranges, d.Version)
				}
				switch {
				case d.SHA == "":
				case c.SHA == "":
					c.SHA, pinnedBy = d.SHA, dp.p.Actions[i].Name
				case d.SHA != c.SHA:
					dp.block(i, "needs %s at commit %s, but %s needs it at commit %s", name, host.Short(d.SHA), pinnedBy, host.Short(c.SHA))
				}
			}
		}
		if c.SHA != "" || len(c.Ranges) > 0 {
			sort.Strings(c.Ranges)
			out[name] = c
		}
	}
	return out
}

// addWarnings adds warnings the plan does not already carry.
func (p *Plan) addWarnings(ws ...string) {
	for _, w := range ws {
		if !slices.Contains(p.Warnings, w) {
			p.Warnings = append(p.Warnings, w)
		}
	}
}

// addSnapshots adds store snapshots the plan reads from, each once and
// sorted.
func (p *Plan) addSnapshots(ds ...string) {
	p.Snapshots = sortedUnique(append(p.Snapshots, ds...))
}
