package installer

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
)

// maxDependencyDepth bounds a chain of dependencies (SPEC §7: "Chains have
// a bounded depth"): a plugin that needs one that needs one… more than 32
// levels down is blocked. Real marketplaces go two or three levels deep;
// a deeper chain is a marketplace making a plan do its work over and over.
const maxDependencyDepth = 32

// check settles the closed plan: versions, cycles, chains too deep, and
// dependents of what cannot be installed; then records the edges.
func (dp *depPlanner) check() {
	acts := dp.p.Actions
	for _, i := range dp.nodes() {
		for _, e := range dp.edges[i] {
			dp.checkEdge(i, e)
		}
	}
	for _, cycle := range dp.cycles() {
		names := make([]string, 0, len(cycle)+1)
		for _, i := range cycle {
			names = append(names, acts[i].Name)
		}
		names = append(names, names[0])
		for _, i := range cycle {
			dp.block(i, "is in a dependency cycle: %s", compactChain(names))
		}
	}
	dp.blockTooDeep()
	dp.settle()
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

// nodes are the actions that have dependency edges, in plan order, so
// that which problem is named first does not depend on map order.
func (dp *depPlanner) nodes() []int { return slices.Sorted(maps.Keys(dp.edges)) }

// settle blocks every ready action that needs one that cannot be
// installed (unless an installed copy of it stays), and skips every
// action planned only as a dependency once nothing ready needs it — each
// step in one pass over a work list, so a chain a thousand long costs a
// thousand steps, not a thousand passes.
func (dp *depPlanner) settle() {
	acts := dp.p.Actions
	users := map[int][]int{} // an action → the actions that need it
	needs := map[int]int{}   // an action → how many ready edges point at it
	counted := map[int]bool{}
	for _, i := range dp.nodes() {
		counted[i] = acts[i].applicable()
		for _, e := range dp.edges[i] {
			if e.target < 0 {
				continue
			}
			users[e.target] = append(users[e.target], i)
			if counted[i] {
				needs[e.target]++
			}
		}
	}
	var queue []int // actions that stopped being installable, to propagate
	for j := range acts {
		if !acts[j].applicable() {
			queue = append(queue, j)
		}
	}
	unneeded := func(j int) {
		if acts[j].Dependency && acts[j].applicable() && needs[j] == 0 {
			acts[j].skip(ActionSkipped, plugind.Errorf(plugind.CodeBlocked, "%s was planned only as a dependency, and nothing that needs it can be installed", acts[j].Name))
			queue = append(queue, j)
		}
	}
	for j := range acts {
		unneeded(j)
	}
	for len(queue) > 0 {
		j := queue[0]
		queue = queue[1:]
		if !dp.staysInstalled(j) {
			for _, i := range users[j] {
				if acts[i].applicable() {
					dp.blockVia(i, j)
					queue = append(queue, i)
				}
			}
		}
		if counted[j] {
			counted[j] = false
			for _, e := range dp.edges[j] {
				if e.target >= 0 {
					needs[e.target]--
					unneeded(e.target)
				}
			}
		}
	}
}

// blockTooDeep blocks every ready action whose dependencies, through the
// plan's ready actions, go more than maxDependencyDepth levels down (a
// bulk install of a marketplace whose own plugins form the chain).
func (dp *depPlanner) blockTooDeep() {
	acts := dp.p.Actions
	height := map[int]int{} // levels of dependencies below an action
	next := map[int]int{}   // the dependency its deepest chain goes through
	var measure func(i int) int
	measure = func(i int) int {
		if h, ok := height[i]; ok {
			return h
		}
		height[i] = 0 // cycles are blocked already; this only guards
		best := 0
		for _, e := range dp.edges[i] {
			h := 1
			if e.target >= 0 {
				if !acts[e.target].applicable() {
					continue
				}
				h += measure(e.target)
			}
			if h > best {
				best, next[i] = h, e.target
			}
		}
		height[i] = best
		return best
	}
	var deep []int
	for _, i := range dp.nodes() {
		if acts[i].applicable() && measure(i) > maxDependencyDepth {
			deep = append(deep, i)
		}
	}
	for _, i := range deep {
		names := []string{acts[i].Name}
		for j, n := i, 0; n <= maxDependencyDepth; n++ {
			t, ok := next[j]
			if !ok || t < 0 {
				break
			}
			names = append(names, acts[t].Name)
			j = t
		}
		dp.block(i, "needs a chain of dependencies more than %d levels deep (%s → …); reasonix follows at most %d", maxDependencyDepth, compactChain(names), maxDependencyDepth)
	}
}

// blockPendingTooDeep blocks the actions still waiting for dependencies
// when the plan has followed maxDependencyDepth levels already.
func (dp *depPlanner) blockPendingTooDeep() {
	for _, wanted := range dp.pending {
		for n, dependents := range wanted {
			for _, i := range dependents {
				dp.block(i, "needs %s, which would be dependency level %d; reasonix follows at most %d", n, maxDependencyDepth+1, maxDependencyDepth)
			}
		}
	}
}

// checkEdge blocks dependent i when the plugin edge e lands on is not at
// the commit its sha pins, or not at a version its range allows. A plugin
// taken at a release tag has the tag's version, as in Claude Code.
func (dp *depPlanner) checkEdge(i int, e depEdge) {
	l, ok := dp.landing(e)
	if !ok {
		return
	}
	if e.dep.SHA != "" && l.commit != e.dep.SHA {
		at := "no commit"
		if l.commit != "" {
			at = "commit " + host.Short(l.commit)
		}
		dp.block(i, "needs %s at commit %s, but %s is at %s", e.dep.Name, host.Short(e.dep.SHA), l.where, at)
		return
	}
	if !e.dep.Allows(l.version) {
		why := ""
		if l.tagMiss != "" {
			why = " (" + l.tagMiss + ")"
		}
		dp.block(i, "needs %s %s, but %s has %s%s", e.dep.Name, e.dep.Version, l.where, cmp.Or(l.version, "no version"), why)
	}
}

// landing is what a dependency edge lands on.
type landing struct {
	version, commit, where string
	tagMiss                string // why no release tag was taken
}

// landing is the plugin a dependency edge lands on: a planned action, or
// an installed copy that stays (ok is false when the target cannot be
// installed; the dependent is blocked for that instead).
func (dp *depPlanner) landing(e depEdge) (landing, bool) {
	if e.target < 0 {
		return installedLanding(e.installed), true
	}
	t := dp.p.Actions[e.target]
	switch {
	case t.applicable():
		return landing{version: cmp.Or(t.ResolvedVersion, t.Version), commit: t.Commit, where: fmt.Sprintf("%s at %s", t.Name, cmp.Or(host.Short(t.Commit), t.Source.String())), tagMiss: t.tagMiss}, true
	case dp.staysInstalled(e.target):
		if inst, ok := dp.reg.Find(t.Name); ok {
			return installedLanding(inst), true
		}
	}
	return landing{}, false
}

func installedLanding(e *Entry) landing {
	return landing{version: cmp.Or(e.ResolvedVersion, e.Version), commit: e.Commit, where: "the installed " + e.Name}
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
		selfLoop := slices.ContainsFunc(dp.edges[v], func(e depEdge) bool { return e.target == v })
		if len(comp) > 1 || selfLoop {
			sort.Slice(comp, func(i, j int) bool { return dp.p.Actions[comp[i]].Name < dp.p.Actions[comp[j]].Name })
			out = append(out, comp)
		}
	}
	for _, v := range dp.nodes() {
		if _, seen := index[v]; !seen && dp.p.Actions[v].applicable() {
			visit(v)
		}
	}
	return out
}

// block marks action i blocked for a dependency problem of its own, said
// of it: "needs ghost, which marketplace acme does not list" (once: the
// first reason stands).
func (dp *depPlanner) block(i int, format string, args ...any) {
	a := &dp.p.Actions[i]
	if !a.applicable() {
		return
	}
	reason := fmt.Sprintf(format, args...)
	dp.reason[i] = reason
	a.skip(ActionBlocked, plugind.Errorf(plugind.CodeBlocked, "%s cannot be installed: it %s", a.Name, reason))
}

// blockVia marks action i blocked because it needs action j, which cannot
// be installed. Its error names the chain down to the first problem and
// says that problem in a few words — never another action's error text,
// so a chain of a thousand costs a thousand short errors, not errors that
// quote each other a thousand deep.
func (dp *depPlanner) blockVia(i, j int) {
	a := &dp.p.Actions[i]
	if !a.applicable() {
		return
	}
	acts := dp.p.Actions
	names := []string{a.Name}
	end := j
	for {
		names = append(names, acts[end].Name)
		next, ok := dp.via[end]
		if !ok {
			break
		}
		end = next
	}
	dp.via[i] = j
	last := acts[end]
	why := fmt.Sprintf("%s is %s (its own error says why)", last.Name, last.Status)
	if r, ok := dp.reason[end]; ok {
		why = last.Name + " " + r
	}
	a.skip(ActionBlocked, plugind.Errorf(plugind.CodeBlocked, "%s cannot be installed: %s: %s", a.Name, compactChain(names), why))
}

// compactChain writes a chain of plugin names "a → b → c", eliding the
// middle of a long one: "a → b → c → … (994 more) → y → z".
func compactChain(names []string) string {
	const head, tail = 3, 2
	if len(names) <= head+tail+1 {
		return strings.Join(names, " → ")
	}
	out := append([]string{}, names[:head]...)
	out = append(out, fmt.Sprintf("… (%d more)", len(names)-head-tail))
	out = append(out, names[len(names)-tail:]...)
	return strings.Join(out, " → ")
}
