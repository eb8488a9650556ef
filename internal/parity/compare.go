package parity

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// pathNotFound starts the load error Claude gives a declared component
// path that does not exist. Claude loads the rest of such a plugin (on the
// fixture, sf-paths' skills and default commands load), so it is not a
// refusal; every other load error (a hook file it cannot read, conflicting
// manifests, …) is one in effect (issue 22).
const pathNotFound = "Path not found: "

// ClaudeInstalls reports whether Claude installed and loads the plugin,
// and why not when it does not.
func (g *Golden) ClaudeInstalls() (bool, string) {
	switch {
	case g.Install.Exit != 0:
		return false, "install failed: " + g.Install.Error
	case !g.Listed:
		return false, "not listed after install"
	}
	for _, e := range g.LoadErrors {
		if !strings.HasPrefix(e, pathNotFound) {
			return false, "failed to load: " + e
		}
	}
	return true, ""
}

// Result is the comparison of one entry with its golden: the differences
// no rule allows, and those an allowed rule explains ("RULE: difference").
type Result struct {
	Marketplace string `json:"marketplace"` // the goldens' folder name
	Plugin      string `json:"plugin"`
	// Claude and Reasonix say whether each installed it.
	Claude   bool `json:"claude"`
	Reasonix bool `json:"reasonix"`
	// ClaudeError and ReasonixError say why one did not install it.
	ClaudeError   string   `json:"claudeError,omitempty"`
	ReasonixError string   `json:"reasonixError,omitempty"`
	Differences   []string `json:"differences,omitempty"`
	Allowed       []string `json:"allowed,omitempty"`
	// Unseen are reasonix's items from declared command and agent files,
	// which `claude plugin details` cannot show (DetailsBlind).
	Unseen []string `json:"unseen,omitempty"`
}

// Compare holds reasonix's outcome for one entry (o; nil when its plan had
// no action for it) to Claude's golden g. e is the entry; allowed the rules
// that may explain a difference; blind the declared files details cannot
// show.
func Compare(market string, g *Golden, o *Ours, e Entry, allowed Allowed, blind DetailsBlind) Result {
	r := Result{Marketplace: market, Plugin: g.Plugin}
	if o == nil {
		r.Claude, _ = g.ClaudeInstalls()
		r.Differences = []string{"reasonix planned no action for this entry"}
		return r
	}
	o = allowed.dropClaudeDirItems(o, &r)
	if g.Session == nil {
		o = blind.hide(o, &r)
	}
	cIn, cWhy := g.ClaudeInstalls()
	oIn := o.Installed()
	r.Claude, r.Reasonix = cIn, oIn
	r.ClaudeError = cWhy
	if !oIn {
		r.ReasonixError = o.Status + ": " + o.Reason
	}
	switch {
	case cIn && !oIn:
		if rule := allowed.whyBlocked(g, o); rule != "" {
			r.Allowed = append(r.Allowed, fmt.Sprintf("%s: Claude installs it, reasonix %s it (%s)", rule, o.Status, oneLineCut(o.Reason)))
			break
		}
		r.Differences = append(r.Differences, fmt.Sprintf("verdict: Claude installs it, reasonix: %s", o.Status))
	case !cIn && oIn:
		r.Differences = append(r.Differences, fmt.Sprintf("verdict: Claude refuses it (%s), reasonix installs it", oneLineCut(cWhy)))
	case cIn && oIn:
		diffs, ok := compareInventories(g, o, allowed)
		r.Differences = append(r.Differences, diffs...)
		r.Allowed = append(r.Allowed, ok...)
	}
	sort.Strings(r.Differences)
	if len(r.Differences) > 0 && allowed.remotePath(e) {
		for _, d := range r.Differences {
			r.Allowed = append(r.Allowed, RuleRemotePath+": "+d)
		}
		r.Differences = nil
	}
	return r
}

// compareInventories lists how two installs' inventories differ, and the
// differences allowed (the hook events and MCP servers only Claude has
// that reasonix's plan says it skipped: RuleHostSkips).
func compareInventories(g *Golden, o *Ours, allowed Allowed) (diffs, ok []string) {
	if g.Details == nil {
		return []string{"Claude installed it but showed no details"}, nil
	}
	skills := append(names(o.Skills), names(o.Commands)...)
	if s := g.Session; s != nil {
		diffs = append(diffs, diffNames("skills and commands (session)", s.Commands, skills, nil)...)
		diffs = append(diffs, diffNames("agents (session)", s.Agents, names(o.Agents), nil)...)
	} else {
		diffs = append(diffs, diffNames("skills and commands", g.Details.Skills, skills, nil)...)
		diffs = append(diffs, diffNames("agents", g.Details.Agents, fileNames(o.Agents), nil)...)
	}
	said := func(mentions func(string) *regexp.Regexp) func(string) bool {
		return func(name string) bool {
			if allowed.skippedSaid(o, mentions(name)) {
				ok = append(ok, fmt.Sprintf("%s: reasonix's plan says it skipped %s", RuleHostSkips, name))
				return true
			}
			return false
		}
	}
	diffs = append(diffs, diffNames("hook events", g.Details.Hooks, distinct(names(o.Hooks)), said(hookEventSaid))...)
	diffs = append(diffs, diffNames("MCP servers", g.LoadedMCPServers, names(o.MCPServers), said(mcpServerSaid))...)
	diffs = append(diffs, diffNames("LSP servers", g.Details.LSPServers, names(o.LSPServers), nil)...)
	if o.Listed && g.Enabled != o.Enabled {
		diffs = append(diffs, fmt.Sprintf("enabled: Claude %t, reasonix %t", g.Enabled, o.Enabled))
	}
	if g.DisplayName != o.DisplayName {
		diffs = append(diffs, fmt.Sprintf("display name: Claude %q, reasonix %q", g.DisplayName, o.DisplayName))
	}
	sort.Strings(ok)
	return diffs, ok
}

// diffNames compares two lists of names as multisets: details lists a
// skill and a command of the same name twice. A name only Claude has that
// excused accepts (nil: none) is no difference.
func diffNames(what string, claude, ours []string, excused func(string) bool) []string {
	count := map[string]int{}
	for _, n := range claude {
		count[n]++
	}
	for _, n := range ours {
		count[n]--
	}
	var onlyC, onlyR []string
	for n, c := range count {
		if c > 0 && excused != nil && excused(n) {
			continue
		}
		for ; c > 0; c-- {
			onlyC = append(onlyC, n)
		}
		for ; c < 0; c++ {
			onlyR = append(onlyR, n)
		}
	}
	var out []string
	if len(onlyC) > 0 {
		sort.Strings(onlyC)
		out = append(out, fmt.Sprintf("%s only Claude has: %s", what, strings.Join(onlyC, ", ")))
	}
	if len(onlyR) > 0 {
		sort.Strings(onlyR)
		out = append(out, fmt.Sprintf("%s only reasonix has: %s", what, strings.Join(onlyR, ", ")))
	}
	return out
}

func names(items []Item) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.Name)
	}
	return out
}

// fileNames are the items' file names without the extension: details
// names an agent by its file, where a session (and reasonix) name it by
// its front matter.
func fileNames(items []Item) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, strings.TrimSuffix(path.Base(it.Path), path.Ext(it.Path)))
	}
	return out
}

func distinct(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// oneLineCut is s on one line, cut to a length a report line can hold.
func oneLineCut(s string) string {
	s = OneLine(s)
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	return s
}

// Tally counts a marketplace's results for the parity table.
type Tally struct {
	Entries int // with a golden
	// Both installed it: with the same inventory (Equal), the same but
	// for allowed differences (EqualAllowed), or not (Different).
	Both, Equal, EqualAllowed, Different int
	// Only one installed it; Neither did.
	OnlyClaude, OnlyReasonix, Neither int
}

// Count tallies results.
func Count(results []Result) Tally {
	var t Tally
	for _, r := range results {
		t.Entries++
		switch {
		case r.Claude && r.Reasonix:
			t.Both++
			switch {
			case len(r.Differences) > 0:
				t.Different++
			case len(r.Allowed) > 0:
				t.EqualAllowed++
			default:
				t.Equal++
			}
		case r.Claude:
			t.OnlyClaude++
		case r.Reasonix:
			t.OnlyReasonix++
		default:
			t.Neither++
		}
	}
	return t
}

func (t Tally) String() string {
	return fmt.Sprintf("%d entries with goldens; installed by both %d (inventory equal %d, equal but for allowed differences %d, different %d); only Claude %d; only reasonix %d; neither %d",
		t.Entries, t.Both, t.Equal, t.EqualAllowed, t.Different, t.OnlyClaude, t.OnlyReasonix, t.Neither)
}
