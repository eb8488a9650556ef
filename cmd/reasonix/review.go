package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
)

// The terminal review of a dry run (SPEC §11): what `plugin install
// --dry-run` and `plugin update --dry-run` print on stderr when that is a
// terminal, beside the JSON on stdout. One line per plugin that would be
// installed or moved, what each update changes, every FULL TRUST runtime in
// full, the entries that would not be installed grouped by reason, and the
// exact command that approves this plan. Every string that
// came from a plugin, a marketplace or a source is escaped (safeText,
// safeCell, safeLine): a review that the reviewed package can repaint
// reviews nothing.

// stderrIsTerminal reports whether the review should be printed: stderr
// is a terminal (tests replace the check through Main.terminal).
func (m *Main) stderrIsTerminal() bool {
	if m.terminal != nil {
		return m.terminal(m.Stderr)
	}
	f, ok := m.Stderr.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// entryPrefix is how a marketplace entry's error begins; grouping by
// reason drops it, so entries refused for the same reason share a line.
var entryPrefix = plugind.LazyRegexp(`^marketplace entry "[^"]*"(?: \(plugins\[\d+\]\))?: `)

// writeReview prints the review of resp, an install dry-run response, to
// w. approve is the command line that applies exactly this plan (its planId
// included); nil when the plan cannot be applied.
func writeReview(w io.Writer, resp *installer.Response, approve []string) {
	writePlanReview(w, resp, approve, false)
}

// writeUpdateReview prints the review of resp, an update dry-run
// response: each move from its installed commit, with the capability diff
// the plan carries, and what stays where it is.
func writeUpdateReview(w io.Writer, resp *installer.Response, approve []string) {
	writePlanReview(w, resp, approve, true)
}

func writePlanReview(w io.Writer, resp *installer.Response, approve []string, update bool) {
	var ready, kept, other []installer.Action
	for _, a := range resp.Actions {
		switch {
		case a.Status == installer.ActionReady:
			ready = append(ready, a)
		case update && a.Action == installer.ActionKeep:
			kept = append(kept, a)
		default:
			other = append(other, a)
		}
	}

	if resp.Source != "" {
		fmt.Fprintf(w, "\nReview of %s\n", safeText(resp.Source))
	} else {
		// A request refused before any plan names no source.
		fmt.Fprintf(w, "\nReview\n")
	}
	if r := resp.Resolved; r != nil {
		var parts []string
		for _, p := range []string{r.Kind, r.Repo, prefixed("at ", r.Ref), prefixed("commit ", shortCommit(r.Commit)), prefixed("folder ", r.Subdir)} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		fmt.Fprintf(w, "  resolved: %s\n", safeText(strings.Join(parts, ", ")))
	}
	if resp.PlanID != "" {
		fmt.Fprintf(w, "  plan: %s\n", safeText(resp.PlanID))
	}

	if update && len(ready) > 0 {
		writeMoves(w, ready)
	} else if len(ready) > 0 {
		fmt.Fprintf(w, "\n%s to install:\n", plural(len(ready), "plugin"))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  NAME\tCOMMIT\tRISK\tSKILLS\tCOMMANDS\tAGENTS\tHOOKS\tMCP SERVERS\t")
		for _, a := range ready {
			name := safeCell(a.Name, 40)
			if a.Action == installer.ActionReplace {
				name += " (replaces " + dash(shortCommit(a.PreviousCommit)) + ")"
			}
			risk := string(a.Risk)
			if a.Runtime != nil {
				risk += " FULL TRUST"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t\n", name, commitCell(shortCommit(a.Commit), a.Tag), dash(safeText(risk)),
				len(a.Skills), len(a.Commands), len(a.Agents), len(a.Hooks), len(a.MCPServers))
		}
		_ = tw.Flush()
		for _, a := range ready {
			if a.Diff != nil && !a.Diff.Empty() {
				// A replace that moves the plugin to another source.
				writeDiff(w, a, "")
			}
		}
	}

	for _, a := range ready {
		if a.Runtime == nil {
			continue
		}
		rt := a.Runtime
		fmt.Fprintf(w, "\n!! FULL TRUST runtime in %s: %s\n", safeText(a.Name), safeText(strings.Join(append([]string{rt.Command}, rt.Args...), " ")))
		if rt.Warning != "" {
			fmt.Fprintf(w, "   %s\n", safeText(rt.Warning))
		}
		if len(rt.Env) > 0 {
			keys := make([]string, 0, len(rt.Env))
			for k := range rt.Env {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			env := make([]string, 0, len(keys))
			for _, k := range keys {
				env = append(env, k+"="+rt.Env[k])
			}
			fmt.Fprintf(w, "   env: %s\n", safeText(strings.Join(env, " ")))
		}
		fmt.Fprintf(w, "   capabilities: %s; intercepts: %s; replaces: %s\n",
			safeText(listOrNone(rt.Capabilities)), safeText(listOrNone(rt.Intercepts)), safeText(listOrNone(rt.Replaces)))
		for _, tool := range rt.Tools {
			ro := ""
			if tool.ReadOnly {
				ro = " (read-only)"
			}
			fmt.Fprintf(w, "   tool %s%s: %s\n", safeText(tool.ModelName), ro, safeLine(tool.Description, maxCell))
		}
		if rt.Required {
			fmt.Fprintln(w, "   required: sessions do not start without it")
		}
	}

	writeSubmodules(w, ready)
	writeOptions(w, configurable(resp.Actions))
	writeKept(w, kept)
	writeNotInstalled(w, other)

	var warnings []string
	for _, warn := range resp.Warnings {
		if !repeatsAction(warn, other) { // else listed with its entry above
			warnings = append(warnings, warn)
		}
	}
	if len(warnings) > 0 {
		fmt.Fprintf(w, "\nwarnings:\n")
		for _, warn := range warnings {
			fmt.Fprintf(w, "  %s\n", safeLine(warn, 0))
		}
	}

	verb, done := "install", "installed"
	if update {
		verb, done = "apply", "applied"
	}
	switch {
	case update && resp.Status == installer.StatusUpToDate:
		fmt.Fprintf(w, "\nEverything is up to date: there is nothing to apply.\n")
	case approve == nil || !resp.OK:
		reason := resp.ErrorText()
		if reason == "" {
			reason = "nothing in it can be " + done
		}
		fmt.Fprintf(w, "\nThis plan cannot be %s: %s\n", done, safeText(reason))
	default:
		fmt.Fprintf(w, "\nTo %s exactly this plan:\n  %s\n", verb, safeText(shellJoin(approve)))
		writeSensitiveNote(w, ready)
	}
}

// writeSubmodules lists, per plugin, the git submodules its tree holds:
// content from another repository, at the commit the plugin's pins.
func writeSubmodules(w io.Writer, ready []installer.Action) {
	for _, a := range ready {
		if len(a.Submodules) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nsubmodules in %s (their files are part of it):\n", safeText(a.Name))
		for _, sm := range a.Submodules {
			fmt.Fprintf(w, "  %s  %s at %s\n", safeText(sm.Path), safeText(sm.URL), dash(safeText(shortCommit(sm.Commit))))
		}
	}
}

// writeMoves prints the plugins an update moves: one line each (from and
// to which commit, the risk of approving it, what it will contribute),
// then what each move changes, as the plan's diff says it.
func writeMoves(w io.Writer, ready []installer.Action) {
	fmt.Fprintf(w, "\n%s to update:\n", plural(len(ready), "plugin"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tFROM\tTO\tRISK\tSKILLS\tCOMMANDS\tAGENTS\tHOOKS\tMCP SERVERS\t")
	for _, a := range ready {
		from, to, risk := shortCommit(a.PreviousCommit), shortCommit(a.Commit), string(a.Risk)
		if a.Previous != nil {
			from = shortCommit(a.Previous.Commit)
			if from == "" && to == "" {
				// A plugin with no commit (a local folder) moves by its
				// content digest.
				from, to = shortDigest(a.Previous.ContentDigest), shortDigest(a.ContentDigest)
			}
			if a.Previous.Risk != "" && a.Previous.Risk != a.Risk {
				risk += " (was " + string(a.Previous.Risk) + ")"
			}
		}
		if a.Runtime != nil {
			risk += " FULL TRUST"
		}
		name := safeCell(a.Name, 40)
		if a.RenamedFrom != "" {
			name += " (was " + safeCell(a.RenamedFrom, 40) + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t\n", name, dash(safeText(from)), commitCell(to, a.Tag),
			dash(safeText(risk)), len(a.Skills), len(a.Commands), len(a.Agents), len(a.Hooks), len(a.MCPServers))
	}
	_ = tw.Flush()
	for _, a := range ready {
		version := ""
		if a.Previous != nil && a.Previous.Version != "" && a.Previous.Version != a.Version {
			version = fmt.Sprintf(" (%s → %s)", safeText(a.Previous.Version), safeText(a.Version))
		}
		if a.Diff == nil || a.Diff.Empty() {
			fmt.Fprintf(w, "\n%s%s: what it contributes stays the same\n", safeText(a.Name), version)
			continue
		}
		writeDiff(w, a, version)
	}
}

// commitCell is a (shortened) commit as the review's tables show it, with
// the release tag a dependency's range took it at beside it.
func commitCell(commit, tag string) string {
	s := dash(safeText(commit))
	if tag != "" {
		s += " (" + safeCell(tag, 60) + ")"
	}
	return s
}

// writeDiff prints what an action changes, one line each, as its diff
// says it: a move to another source first, on its own line.
func writeDiff(w io.Writer, a installer.Action, version string) {
	fmt.Fprintf(w, "\n%s%s changes:\n", safeText(a.Name), version)
	for _, line := range a.Diff.Summary {
		fmt.Fprintf(w, "  %s\n", safeLine(line, 0))
	}
}

// writeKept lists the plugins an update leaves where they are, with what
// it says about them (an entry that vanished or lost its pin).
func writeKept(w io.Writer, kept []installer.Action) {
	if len(kept) == 0 {
		return
	}
	names := make([]string, len(kept))
	for i, a := range kept {
		names[i] = safeCell(a.Name, 40)
	}
	fmt.Fprintf(w, "\nup to date (%d): %s\n", len(kept), strings.Join(names, ", "))
	for _, a := range kept {
		for _, warn := range a.Warnings {
			fmt.Fprintf(w, "  %s: %s\n", safeCell(a.Name, 40), safeLine(warn, 0))
		}
	}
}

// writeNotInstalled groups what will not be installed by status and
// reason: one line per reason, naming its entries.
func writeNotInstalled(w io.Writer, other []installer.Action) {
	type group struct {
		status, reason string
		names          []string
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, a := range other {
		reason := entryPrefix.ReplaceAllString(a.ErrorText(), "")
		if reason == "" {
			reason = "no reason given"
		}
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
			n := 0
			for _, h := range groups {
				if h.status == g.status {
					n += len(h.names)
				}
			}
			fmt.Fprintf(w, "\n%s (%d):\n", safeText(g.status), n)
			last = g.status
		}
		names := make([]string, len(g.names))
		for i, n := range g.names {
			names[i] = safeCell(n, 40)
		}
		fmt.Fprintf(w, "  %s: %s\n", safeLine(g.reason, 0), strings.Join(names, ", "))
	}
}

// repeatsAction reports whether a plan warning only repeats an entry that
// is not installed ("skipped NAME: reason"), which the review lists by
// reason already.
func repeatsAction(warn string, other []installer.Action) bool {
	for _, a := range other {
		if strings.HasPrefix(warn, string(a.Status)+" "+a.Name+": ") {
			return true
		}
	}
	return false
}

// approveCommand is the install command line that applies exactly the plan
// of req, as reviewed: the same source and the flags that shape the plan,
// with --yes and --plan-id.
func approveCommand(prog, source string, req installer.Request, planID string) []string {
	args := []string{prog, "plugin", "install", source}
	if req.Name != "" {
		args = append(args, "--name", req.Name)
	}
	for _, f := range []struct {
		on   bool
		flag string
	}{{req.Replace, "--replace"}, {req.Link, "--link"}, {req.Offline, "--offline"}, {req.AllowUnpinned, "--allow-unpinned"}} {
		if f.on {
			args = append(args, f.flag)
		}
	}
	return append(args, "--yes", "--plan-id", planID)
}

// approveUpdateCommand is the update command line that applies exactly the
// reviewed update plan: the same plugins (or --all and --marketplace) and
// the flags that shape the plan, with --yes and --plan-id.
func approveUpdateCommand(prog string, ur installer.UpdateRequest, req installer.Request, planID string) []string {
	args := []string{prog, "plugin", "update"}
	if ur.All {
		args = append(args, "--all")
		if ur.Marketplace != "" {
			args = append(args, "--marketplace", ur.Marketplace)
		}
	} else {
		args = append(args, ur.Names...)
	}
	for _, f := range []struct {
		on   bool
		flag string
	}{{req.Offline, "--offline"}, {req.AllowUnpinned, "--allow-unpinned"}, {req.Refresh, "--refresh"}} {
		if f.on {
			args = append(args, f.flag)
		}
	}
	return append(args, "--yes", "--plan-id", planID)
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

// prog is the program name for suggested commands.
func (m *Main) prog() string {
	if m.Prog == "" {
		return "reasonix"
	}
	return m.Prog
}

// shellJoin quotes args for a POSIX shell: words of safe characters as
// they are, anything else in single quotes.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = shellQuote(a)
	}
	return strings.Join(out, " ")
}

var shellSafe = plugind.LazyRegexp(`^[A-Za-z0-9_@%+=:,./-]+$`)

func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shortDigest is a content digest cut like a commit: "sha256:" and 12 hex
// digits.
func shortDigest(d string) string {
	algo, hex, ok := strings.Cut(d, ":")
	if !ok {
		return shortCommit(d)
	}
	return algo + ":" + shortCommit(hex)
}

// shortCommit is a commit as people read it: 12 hex digits.
func shortCommit(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
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
	return strconv.Itoa(n) + " " + word + "s"
}
