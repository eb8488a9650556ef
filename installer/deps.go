package installer

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/resolver/source"
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
	src   source.Source
	name  string   // its known name ("" when it is not known)
	doc   string   // the name its document gives itself
	label string   // for messages
	allow []string // the plan's root marketplace's allowCrossMarketplaceDependenciesOn
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
	if src.IsRemote() && f.Commit != "" {
		src = src.At(f.Commit).WithSubdir(f.Subdir)
	}
	label := knownName
	if label == "" {
		label = f.Market.Name
	}
	if label == "" {
		label = f.Source
	}
	return &depSite{src: src, name: knownName, doc: f.Market.Name, label: label, allow: f.Market.AllowDependenciesFrom}
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
}

// planDependencies adds to p every plugin its ready plugins need and
// blocks those whose needs cannot be met.
func (in *Installer) planDependencies(ctx context.Context, req Request, p *Plan, reg *Registry) error {
	dp := &depPlanner{in: in, req: req, p: p, reg: reg, index: map[string]int{}, edges: map[int][]depEdge{}, sites: map[string]*depSite{}}
	var queue []int
	for i := range p.Actions {
		dp.own(i)
		queue = append(queue, i)
	}
	for len(queue) > 0 {
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
		var err error
		if queue, err = dp.resolvePending(ctx); err != nil {
			return err
		}
	}
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
			dp.block(i, "it needs %s, from marketplace %q; plugins of %s may only pull dependencies from the marketplaces its allowCrossMarketplaceDependenciesOn lists, and %q is not one (install %s@%s yourself first)",
				d, d.Marketplace, site.label, d.Marketplace, d.Name, d.Marketplace)
			return
		}
		other, err := dp.knownSite(d.Marketplace, site)
		if err != nil {
			dp.block(i, "it needs %s: %v", d, err)
			return
		}
		site = other
	}
	if j, ok := dp.index[d.Name]; ok {
		b := &dp.p.Actions[j]
		if site != nil && b.site != nil && b.site != site && b.site.label != site.label {
			dp.block(i, "it needs %s from %s, but this plan installs %s from %s", d.Name, site.label, d.Name, b.site.label)
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
		dp.block(i, "it needs plugin %q, which is not installed; %s did not come from a marketplace, so there is nowhere to look for %q: install it first", d.Name, a.Name, d.Name)
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
	src, err := source.Parse(k.Source)
	if err != nil {
		return nil, fmt.Errorf("known marketplace %q: %w", name, err)
	}
	if k.Subdir != "" {
		src = src.WithSubdir(k.Subdir)
	}
	s := &depSite{src: src, name: name, label: name}
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
	sites := make([]*depSite, 0, len(dp.pending))
	for s := range dp.pending {
		sites = append(sites, s)
	}
	sort.Slice(sites, func(i, j int) bool { return sites[i].label < sites[j].label })
	var added []int
	for _, site := range sites {
		wanted := dp.pending[site]
		names := make([]string, 0, len(wanted))
		for n := range wanted {
			names = append(names, n)
		}
		sort.Strings(names)
		f, err := dp.in.sources.Resolve(ctx, resolver.Request{
			Source: site.src, Names: names, KeepMissing: true,
			Offline: dp.req.Offline, AllowUnpinned: dp.req.AllowUnpinned, Refresh: dp.req.Refresh,
		})
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err != nil {
			for _, n := range names {
				for _, i := range wanted[n] {
					dp.block(i, "it needs %s from marketplace %s, which cannot be read: %v", n, site.label, err)
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
				dp.block(i, "it needs %s, which marketplace %s does not list", n, site.label)
			}
		}
		for _, c := range f.Candidates {
			a := dp.in.planCandidate(ctx, Request{}, c, false, dp.reg, nil)
			a.MarketplaceName, a.site, a.Dependency = site.name, site, true
			if a.Name == "" {
				a.Name = c.Name
			}
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

// check settles the closed plan: versions, cycles, and dependents of what
// cannot be installed, until nothing changes; then records the edges.
func (dp *depPlanner) check() {
	acts := dp.p.Actions
	for i, edges := range dp.edges {
		for _, e := range edges {
			version, where := dp.versionOf(e)
			if where != "" && !e.dep.Allows(version) {
				shown := version
				if shown == "" {
					shown = "no version"
				}
				dp.block(i, "it needs %s %s, but %s has %s", e.dep.Name, e.dep.Version, where, shown)
			}
		}
	}
	for _, cycle := range dp.cycles() {
		names := make([]string, 0, len(cycle)+1)
		for _, i := range cycle {
			names = append(names, acts[i].Name)
		}
		names = append(names, names[0])
		for _, i := range cycle {
			dp.block(i, "dependency cycle: %s", strings.Join(names, " → "))
		}
	}
	for changed := true; changed; {
		changed = false
		for i, edges := range dp.edges {
			if !acts[i].applicable() {
				continue
			}
			for _, e := range edges {
				if e.target < 0 || acts[e.target].applicable() || dp.staysInstalled(e.target) {
					continue
				}
				t := &acts[e.target]
				dp.block(i, "it needs %s, which cannot be installed (%s: %s)", t.Name, t.Status, t.ErrorText())
				changed = true
				break
			}
		}
		// A plugin planned only as a dependency goes only with a dependent.
		for j := range acts {
			if !acts[j].Dependency || !acts[j].applicable() || dp.needed(j) {
				continue
			}
			acts[j].Action = ActionSkip
			acts[j].fail(ActionSkipped, plugind.Errorf(plugind.CodeBlocked, "%s was planned only as a dependency, and nothing that needs it can be installed", acts[j].Name))
			changed = true
		}
	}
	for i, edges := range dp.edges {
		for _, e := range edges {
			name := e.dep.Name
			acts[i].DependsOn = append(acts[i].DependsOn, name)
			if e.target >= 0 && acts[i].applicable() {
				acts[e.target].DependencyOf = append(acts[e.target].DependencyOf, acts[i].Name)
			}
		}
	}
	for i := range acts {
		acts[i].DependsOn = sortedUnique(acts[i].DependsOn)
		acts[i].DependencyOf = sortedUnique(acts[i].DependencyOf)
	}
}

// versionOf is the version a dependency edge lands on and what holds it
// ("" when the target cannot be installed; the dependent is blocked for
// that instead).
func (dp *depPlanner) versionOf(e depEdge) (version, where string) {
	if e.target < 0 {
		return e.installed.Version, "the installed " + e.installed.Name
	}
	t := dp.p.Actions[e.target]
	switch {
	case t.applicable():
		return t.Version, fmt.Sprintf("%s at %s", t.Name, describeAt(t))
	case dp.staysInstalled(e.target):
		if inst, ok := dp.reg.Find(t.Name); ok {
			return inst.Version, "the installed " + t.Name
		}
	}
	return "", ""
}

func describeAt(a Action) string {
	if a.Commit != "" {
		return short(a.Commit)
	}
	return a.Source
}

// staysInstalled reports a planned action that leaves an installed copy in
// place (a conflict without --replace, an update that keeps): that copy
// satisfies dependents.
func (dp *depPlanner) staysInstalled(j int) bool {
	a := dp.p.Actions[j]
	if a.Status != ActionConflict && a.Action != ActionKeep {
		return false
	}
	_, ok := dp.reg.Find(a.Name)
	return ok
}

// needed reports whether a ready action needs action j.
func (dp *depPlanner) needed(j int) bool {
	for i, edges := range dp.edges {
		if !dp.p.Actions[i].applicable() {
			continue
		}
		for _, e := range edges {
			if e.target == j {
				return true
			}
		}
	}
	return false
}

// cycles finds the dependency cycles among ready actions (strongly
// connected components of more than one action, or one that needs
// itself), each in a stable order.
func (dp *depPlanner) cycles() [][]int {
	var (
		index   = map[int]int{}
		low     = map[int]int{}
		onStack = map[int]bool{}
		stack   []int
		next    int
		out     [][]int
	)
	var visit func(v int)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, e := range dp.edges[v] {
			w := e.target
			if w < 0 || !dp.p.Actions[w].applicable() {
				continue
			}
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var comp []int
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			comp = append(comp, w)
			if w == v {
				break
			}
		}
		if len(comp) > 1 || dp.selfLoop(v) {
			sort.Slice(comp, func(i, j int) bool { return dp.p.Actions[comp[i]].Name < dp.p.Actions[comp[j]].Name })
			out = append(out, comp)
		}
	}
	nodes := make([]int, 0, len(dp.edges))
	for v := range dp.edges {
		nodes = append(nodes, v)
	}
	sort.Ints(nodes)
	for _, v := range nodes {
		if _, seen := index[v]; !seen && dp.p.Actions[v].applicable() {
			visit(v)
		}
	}
	return out
}

func (dp *depPlanner) selfLoop(v int) bool {
	for _, e := range dp.edges[v] {
		if e.target == v {
			return true
		}
	}
	return false
}

// block marks action i blocked for a dependency reason (once: the first
// reason stands).
func (dp *depPlanner) block(i int, format string, args ...any) {
	a := &dp.p.Actions[i]
	if !a.applicable() {
		return
	}
	a.Action = ActionSkip
	a.fail(ActionBlocked, plugind.Errorf(plugind.CodeBlocked, "%s cannot be installed: %s", a.Name, fmt.Sprintf(format, args...)))
}

// addWarnings adds warnings the plan does not already carry.
func (p *Plan) addWarnings(ws ...string) {
	for _, w := range ws {
		if !slices.Contains(p.Warnings, w) {
			p.Warnings = append(p.Warnings, w)
		}
	}
}

// addSnapshots adds store snapshots the plan reads from.
func (p *Plan) addSnapshots(ds ...string) {
	for _, d := range ds {
		if !slices.Contains(p.Snapshots, d) {
			p.Snapshots = append(p.Snapshots, d)
		}
	}
	sort.Strings(p.Snapshots)
}
