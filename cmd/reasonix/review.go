package main

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/lazyregexp"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/resolver/host"
)

// The terminal review (SPEC §11): what a planning command prints on stderr
// when that is a terminal, after the JSON on stdout, so that it is what
// stays on screen. A plan shows one line per plugin that would be
// installed or moved, what each update changes, who needs whom, what will
// not be installed grouped by reason, and then — last, right above the
// exact command that approves this plan — every FULL TRUST runtime in
// full. An applied response shows the same of what was done. Every string
// that came from a plugin, a marketplace or a source is escaped (safeText,
// safeCell, safeLine): a review that the reviewed package can repaint
// reviews nothing.

// entryPrefix is how a marketplace entry's error begins; grouping by
// reason drops it, so entries refused for the same reason share a line.
var entryPrefix = lazyregexp.New(`^marketplace entry "[^"]*"(?: \(plugins\[\d+\]\))?: `)

// review prints resp as sh says to show it.
func (s *console) review(resp *installer.Response, sh shown) {
	update := sh.cmd == cmdUpdate || sh.cmd == cmdSync || sh.cmd == cmdLock // plans of moves, with capability diffs
	var ready, kept, other []installer.Action
	for _, a := range resp.Actions {
		switch {
		case a.Status == installer.ActionReady || a.Status == installer.ActionInstalled:
			ready = append(ready, a)
		case update && a.Action == installer.ActionKeep:
			kept = append(kept, a)
		default:
			other = append(other, a)
		}
	}

	s.blank()
	switch {
	case resp.Applied:
		s.line("%s", s.strong("Applied: "+safeText(resp.Source)))
	case resp.Source != "":
		s.line("%s", s.strong("Review of "+safeText(resp.Source)))
	default:
		// A request refused before any plan names no source.
		s.line("%s", s.strong("Review"))
	}
	if rs := resp.Resolved; rs != nil && rs.Kind != "installed" {
		parts := slices.DeleteFunc([]string{rs.Kind, rs.Repo, prefixed("at ", rs.Ref), prefixed("commit ", host.Short(rs.Commit)), prefixed("folder ", rs.Subdir)},
			func(p string) bool { return p == "" })
		s.line("  resolved: %s", safeText(strings.Join(parts, ", ")))
	}
	if resp.PlanID != "" {
		s.line("  plan: %s", safeText(resp.PlanID))
	}

	if len(ready) > 0 {
		s.readyTable(ready, update, resp.Applied)
		s.dependencies(ready)
		for _, a := range ready {
			if update {
				s.move(a)
			} else if a.Diff != nil && !a.Diff.Empty() {
				// A replace that moves the plugin to another source.
				s.diff(a, "")
			}
		}
	}
	s.submodules(ready)
	s.options(resp.Actions)
	s.kept(kept)
	s.notInstalled(other)

	// A warning that only repeats an entry listed above is left out.
	s.warnings(slices.DeleteFunc(slices.Clone(resp.Warnings), func(warn string) bool { return repeatsAction(warn, other) }))

	// Code fetched at run time, then FULL TRUST last: nothing comes
	// between them and the approval.
	s.runtimeFetches(ready)
	for _, a := range ready {
		if a.Runtime != nil {
			s.fullTrust(a)
		}
	}

	done := "installed"
	if update {
		done = "applied"
	}
	switch {
	case resp.Applied:
	case resp.Status == installer.StatusUpToDate && update:
		s.blank()
		s.line("%s", s.good("Everything is up to date: there is nothing to apply."))
	case resp.Status == installer.StatusRefused || resp.Status == installer.StatusFailed:
		reason := cmp.Or(resp.ErrorText(), "nothing in it can be "+done)
		s.blank()
		s.line("%s %s", s.bad("This plan cannot be "+done+":"), errorBody(resp.Err, reason))
	case sh.approve != nil && resp.PlanID != "" && len(ready) > 0:
		verb := "install"
		if update {
			verb = "apply"
		}
		s.blank()
		s.line("To %s exactly this plan:", verb)
		for _, l := range commandLines(sh.approve(resp), 2, s.width) {
			fmt.Fprintln(s.w, safeText(l))
		}
		s.sensitiveNote(ready)
	}
}

// warnings lists what the backend warned about.
func (s *console) warnings(warnings []string) {
	titled(s, s.warn("warnings:"), warnings, func(warn string) string { return safeLine(warn, 0) })
}

// readyTable prints the plugins a plan installs or moves (or an applied
// one did): one row each, with the risk of approving it and what it
// contributes; an update's rows say from and to which commit.
func (s *console) readyTable(ready []installer.Action, update, applied bool) {
	what := map[[2]bool]string{ // by {update, applied}
		{false, false}: "to install", {false, true}: "installed", {true, false}: "to update", {true, true}: "updated",
	}[[2]bool{update, applied}]
	s.blank()
	s.line("%s %s:", plural(len(ready), "plugin"), what)
	t := &table{indent: 2, header: []string{"NAME", "COMMIT", "RISK", "CONTRIBUTES"}, shrink: []int{3, 0}}
	if update {
		t = &table{indent: 2, header: []string{"NAME", "FROM", "TO", "RISK", "CONTRIBUTES"}, shrink: []int{4, 0}}
	}
	for _, a := range ready {
		name := safeCell(a.Name, 40)
		risk := s.risk(string(a.Risk), dash(safeText(string(a.Risk))))
		if a.Runtime != nil {
			risk += " " + s.trust("FULL TRUST")
		}
		if !update {
			if a.Action == installer.ActionReplace {
				name += " (replaces " + dash(host.Short(a.PreviousCommit)) + ")"
			}
			t.add(name, commitCell(host.Short(a.Commit), a.Tag), risk, contributes(a.Inventory))
			continue
		}
		from, to := host.Short(a.PreviousCommit), host.Short(a.Commit)
		if p := a.Previous; p != nil {
			from = host.Short(p.Commit)
			if from == "" && to == "" {
				// A plugin with no commit (a local folder) moves by its
				// content digest.
				from, to = plugind.ShortDigest(p.ContentDigest), plugind.ShortDigest(a.ContentDigest)
			}
			if p.Risk != "" && p.Risk != a.Risk {
				risk += " (was " + safeText(string(p.Risk)) + ")"
			}
		}
		if a.RenamedFrom != "" {
			name += " (was " + safeCell(a.RenamedFrom, 40) + ")"
		}
		t.add(name, dash(safeText(from)), commitCell(to, a.Tag), risk, contributes(a.Inventory))
	}
	t.write(s.w, s.width)
}

// commitCell is a (shortened) commit as the review's tables show it, with
// the release tag a dependency's range took it at beside it.
func commitCell(commit, tag string) string {
	c := dash(safeText(commit))
	if tag != "" {
		c += " (" + safeCell(tag, 60) + ")"
	}
	return c
}

// submodules lists, per plugin, the git submodules its tree holds:
// content from another repository, at the commit the plugin's pins.
func (s *console) submodules(ready []installer.Action) {
	for _, a := range ready {
		titled(s, "submodules in "+safeText(a.Name)+" (their files are part of it):", a.Submodules, func(sm plugind.Submodule) string {
			return safeText(sm.Path) + "  " + safeText(sm.URL) + " at " + dash(safeText(host.Short(sm.Commit)))
		})
	}
}

// dependencies says who needs whom among the plugins shown.
func (s *console) dependencies(ready []installer.Action) {
	var lines []string
	for _, a := range ready {
		if len(a.DependsOn) > 0 {
			lines = append(lines, fmt.Sprintf("%s needs %s", safeCell(a.Name, 40), safeText(strings.Join(a.DependsOn, ", "))))
		}
	}
	for _, a := range ready {
		if a.Dependency {
			by := ""
			if len(a.DependencyOf) > 0 {
				by = " of " + safeText(strings.Join(a.DependencyOf, ", "))
			}
			lines = append(lines, fmt.Sprintf("%s comes as a dependency%s (prune removes it once nothing needs it)", safeCell(a.Name, 40), by))
		}
	}
	titled(s, "dependencies:", lines, func(l string) string { return l })
}

// move prints what an update changes in one plugin, as its diff says it.
func (s *console) move(a installer.Action) {
	version := ""
	if a.Previous != nil && a.Previous.Version != "" && a.Previous.Version != a.Version {
		version = fmt.Sprintf(" (%s → %s)", safeText(a.Previous.Version), safeText(a.Version))
	}
	if a.Diff == nil || a.Diff.Empty() {
		s.blank()
		s.line("%s%s: what it contributes stays the same", safeText(a.Name), version)
		return
	}
	s.diff(a, version)
}

// diff prints what an action changes, one line each, as its diff says
// it: a move to another source first, on its own line.
func (s *console) diff(a installer.Action, version string) {
	titled(s, safeText(a.Name)+version+" changes:", a.Diff.Summary, func(line string) string { return safeLine(line, 0) })
}

// kept lists the plugins an update leaves where they are, with what it
// says about them (an entry that vanished or lost its pin) — and apart,
// those whose source could not be reached: they are not up to date, only
// unchanged as far as the cache knows.
func (s *console) kept(kept []installer.Action) {
	var fresh, stale []string
	for _, a := range kept {
		if a.Unchecked != "" {
			stale = append(stale, safeCell(a.Name, 40))
		} else {
			fresh = append(fresh, safeCell(a.Name, 40))
		}
	}
	if len(fresh) > 0 {
		s.blank()
		s.line("up to date (%d): %s", len(fresh), strings.Join(fresh, ", "))
	}
	if len(stale) > 0 {
		s.blank()
		s.line("%s %s", s.warn(fmt.Sprintf("could not check (%d):", len(stale))), strings.Join(stale, ", "))
		s.line("  their sources could not be reached; this is what was cached")
	}
	for _, a := range kept {
		for _, warn := range a.Warnings {
			s.line("  %s: %s", safeCell(a.Name, 40), safeLine(warn, 0))
		}
	}
}

// notInstalled groups what will not be installed by status and reason:
// one line per reason, naming its entries.
func (s *console) notInstalled(other []installer.Action) {
	type group struct {
		status, reason string
		names          []string
	}
	var groups []*group
	byKey, count := map[string]*group{}, map[string]int{}
	for _, a := range other {
		count[string(a.Status)]++
		reason := cmp.Or(entryPrefix.ReplaceAllString(a.ErrorText(), ""), "no reason given")
		if code := a.Code(); code != "" {
			reason += " [" + string(code) + "]"
		}
		key := string(a.Status) + "\x00" + reason
		g, ok := byKey[key]
		if !ok {
			g = &group{status: string(a.Status), reason: reason}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.names = append(g.names, a.Name)
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].status < groups[j].status })
	last := ""
	for _, g := range groups {
		if g.status != last {
			head := fmt.Sprintf("%s (%d):", safeText(g.status), count[g.status])
			if g.status != string(installer.ActionSkipped) {
				head = s.bad(head)
			}
			s.blank()
			s.line("%s", head)
			last = g.status
		}
		names := make([]string, len(g.names))
		for i, n := range g.names {
			names[i] = safeCell(n, 40)
		}
		s.line("  %s: %s", safeLine(g.reason, 0), strings.Join(names, ", "))
	}
}

// runtimeFetches shows, per plugin, the code it fetches when it runs that
// no pin fixes (SPEC §17), one line each, marked so it is not read past:
// the plugin's commit does not say what that code is. The remote services
// it talks to follow, unmarked.
func (s *console) runtimeFetches(ready []installer.Action) {
	var unpinned, remote []string
	for _, a := range ready {
		for _, f := range a.Inventory.RuntimeFetches {
			switch {
			case f.Kind == manifest.FetchRemote:
				remote = append(remote, safeCell(a.Name, 40)+" talks to "+safeLine(f.Describe(), 0))
			case !f.Pinned:
				unpinned = append(unpinned, fmt.Sprintf("%s %s runs unpinned code fetched at run time: %s", s.trust("!!"), safeCell(a.Name, 40), safeLine(f.Describe(), 0)))
			}
		}
	}
	if len(unpinned) > 0 {
		s.blank()
		for _, l := range unpinned {
			s.line("%s", l)
		}
		s.line("   what runs is whatever its registry serves at that moment, not what this plan reviewed")
	}
	titled(s, "remote services:", remote, func(l string) string { return l })
}

// fullTrust prints a runtime's FULL TRUST block in full: the command it
// runs outside the sandbox, its environment, what it may intercept and
// replace, and its tools.
func (s *console) fullTrust(a installer.Action) {
	rt := a.Runtime
	s.blank()
	s.line("%s runtime in %s: %s", s.trust("!! FULL TRUST"), safeText(a.Name), safeText(strings.Join(append([]string{rt.Command}, rt.Args...), " ")))
	if rt.Warning != "" {
		s.line("   %s", safeText(rt.Warning))
	}
	if len(rt.Env) > 0 {
		env := make([]string, 0, len(rt.Env))
		for _, k := range slices.Sorted(maps.Keys(rt.Env)) {
			env = append(env, k+"="+rt.Env[k])
		}
		s.line("   env: %s", safeText(strings.Join(env, " ")))
	}
	s.line("   capabilities: %s; intercepts: %s; replaces: %s",
		safeText(listOrNone(rt.Capabilities)), safeText(listOrNone(rt.Intercepts)), safeText(listOrNone(rt.Replaces)))
	for _, tool := range rt.Tools {
		ro := ""
		if tool.ReadOnly {
			ro = " (read-only)"
		}
		s.line("   tool %s%s: %s", safeText(tool.ModelName), ro, safeLine(tool.Description, maxCell))
	}
	if rt.Required {
		s.line("   required: sessions do not start without it")
	}
}

// repeatsAction reports whether a plan warning only repeats an entry that
// is not installed ("skipped NAME: reason"), which the review lists by
// reason already.
func repeatsAction(warn string, other []installer.Action) bool {
	return slices.ContainsFunc(other, func(a installer.Action) bool { return strings.HasPrefix(warn, string(a.Status)+" "+a.Name+": ") })
}

// contributes says what a plugin adds, in a few words: "2 skills, 1 hook,
// runtime".
func contributes(inv installer.Inventory) string {
	return countWords(len(inv.Skills), len(inv.Commands), len(inv.Agents), len(inv.Hooks), len(inv.MCPServers), inv.Runtime != nil)
}

// countWords is what a plugin adds from its counts ("-" for nothing).
func countWords(skills, commands, agents, hooks, mcp int, runtime bool) string {
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{skills, "skill"}, {commands, "command"}, {agents, "agent"}, {hooks, "hook"}, {mcp, "MCP server"}} {
		if c.n > 0 {
			parts = append(parts, plural(c.n, c.what))
		}
	}
	if runtime {
		parts = append(parts, "runtime")
	}
	return dash(strings.Join(parts, ", "))
}

// progName is the program name a suggested command should start with:
// argv0 itself when it is a relative path ("./reasonix", "bin/reasonix"),
// which the user can paste back; otherwise "reasonix" (found on PATH, or an
// absolute path such as go run's temporary binary, which is no better to
// suggest).
func progName(argv0 string) string {
	if strings.ContainsRune(argv0, '/') && !filepath.IsAbs(argv0) {
		return argv0
	}
	return "reasonix"
}

var shellSafe = lazyregexp.New(`^[A-Za-z0-9_@%+=:,./-]+$`)

func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if stem, ok := strings.CutSuffix(word, "y"); ok && !strings.HasSuffix(stem, "e") && !strings.HasSuffix(stem, "a") && !strings.HasSuffix(stem, "o") {
		return strconv.Itoa(n) + " " + stem + "ies" // entry, dependency
	}
	return strconv.Itoa(n) + " " + word + "s"
}
