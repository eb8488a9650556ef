package installer

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"reasonix.io/plugind/internal/lazyregexp"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/secrets"
	"reasonix.io/plugind/source"
)

// Previous is what an update action moves from (SPEC §9): where the
// installed copy came from (its recorded source, and the folder recorded
// beside it on hosts other than GitHub), its commit, content, version and
// risk.
type Previous struct {
	Source        source.Source `json:"source,omitzero"`
	Subdir        string        `json:"subdir,omitempty"`
	Commit        string        `json:"commit,omitempty"`
	ContentDigest string        `json:"contentDigest,omitempty"`
	Version       string        `json:"version,omitempty"`
	Risk          Risk          `json:"risk,omitempty"`
}

// Diff is what an update changes in what a plugin contributes: the review
// that approving the update approves (its planId covers it).
type Diff struct {
	Added   []Change `json:"added"`
	Removed []Change `json:"removed"`
	Changed []Change `json:"changed"`
	// Summary says it in words, one line each: "adds hook PreToolUse Bash
	// → scripts/guard.sh".
	Summary []string `json:"summary"`
}

// Change is one contribution added, removed or changed.
type Change struct {
	Kind   string `json:"kind"` // skill, command, agent, hook, mcpServer, runtime, runtimeFetch, env
	Name   string `json:"name"`
	Detail string `json:"detail,omitempty"`
}

// Kinds of changes.
const (
	ChangeSkill   = "skill"
	ChangeCommand = "command"
	ChangeAgent   = "agent"
	ChangeHook    = "hook"
	ChangeMCP     = "mcpServer"
	ChangeRuntime = "runtime"
	ChangeEnv     = "env"
	// ChangeFetch is code fetched at run time (SPEC §17) or a remote
	// service: Name says what and where, Detail whether it is pinned
	// ("pinned 1.2.3", "unpinned latest", "remote").
	ChangeFetch = "runtimeFetch"
	// ChangeSource is a move to another place: another host, owner,
	// repository or subfolder (Name lists which). Approving it trusts
	// someone else's code, whatever the diff of contributions says.
	ChangeSource = "source"
	// ChangeName is a rename its marketplace made (Name is the new name,
	// Detail "old → new").
	ChangeName = "name"
	// ChangeConfig is a userConfig value the update sets or unsets (Name is
	// the option; a sensitive value is never in Detail).
	ChangeConfig = "config"
)

// Empty reports whether nothing changes.
func (d *Diff) Empty() bool {
	return d == nil || len(d.Added)+len(d.Removed)+len(d.Changed) == 0
}

// raisesRisk reports whether the diff adds something that runs code or
// reads a credential: a hook that runs a command, an MCP server, a runtime,
// a new environment reference, or code fetched at run time that no pin
// fixes (added, or a pinned one that no longer is).
func (d *Diff) raisesRisk() bool {
	for _, c := range d.Added {
		switch c.Kind {
		case ChangeHook, ChangeMCP, ChangeRuntime, ChangeEnv:
			return true
		case ChangeFetch:
			if strings.HasPrefix(c.Detail, fetchUnpinned) {
				return true
			}
		}
	}
	for _, c := range d.Changed {
		if c.Kind == ChangeSource {
			continue // raises the risk on its own terms (updateRisk)
		}
		if c.Kind == ChangeRuntime || c.Kind == ChangeMCP || c.Kind == ChangeHook {
			return true
		}
		if before, after, _ := strings.Cut(c.Detail, " → "); c.Kind == ChangeFetch &&
			strings.HasPrefix(after, fetchUnpinned) && !strings.HasPrefix(before, fetchUnpinned) {
			return true
		}
	}
	return false
}

// fetchUnpinned starts the detail of a run-time fetch no pin fixes.
const fetchUnpinned = "unpinned"

// fetchItem is a run-time fetch as the diff compares it: keyed by what
// runs it (a hook's event, not its number, which moves as hooks are added)
// and what it fetches; its detail is whether a pin fixes it.
func fetchItem(f manifest.RuntimeFetch) item {
	site, _, _ := strings.Cut(f.Where, " #")
	name := strings.TrimSpace(f.Runner + " " + f.Package + " (" + site + ")")
	detail := "remote"
	if f.Kind == manifest.FetchCode {
		detail = fetchUnpinned
		if f.Pinned {
			detail = "pinned"
		}
		if f.Version != "" {
			detail += " " + f.Version
		}
	}
	return item{ChangeFetch, name, name, detail}
}

// item is one contribution, keyed for comparison.
type item struct {
	kind, key, name, detail string
}

// diffInventories compares what the installed copy contributes with what
// the update would.
func diffInventories(old, new Inventory) *Diff {
	before, after := itemsOf(old), itemsOf(new)
	d := emptyDiff()
	for _, k := range sortedUnique(slices.AppendSeq(slices.Collect(maps.Keys(before)), maps.Keys(after))) {
		b, inBefore := before[k]
		a, inAfter := after[k]
		switch {
		case !inBefore:
			d.Added = append(d.Added, Change{Kind: a.kind, Name: a.name, Detail: a.detail})
			d.Summary = append(d.Summary, "adds "+describe(a))
		case !inAfter:
			d.Removed = append(d.Removed, Change{Kind: b.kind, Name: b.name, Detail: b.detail})
			d.Summary = append(d.Summary, "removes "+describe(b))
		case a.detail != b.detail:
			d.Changed = append(d.Changed, Change{Kind: a.kind, Name: a.name, Detail: b.detail + " → " + a.detail})
			d.Summary = append(d.Summary, fmt.Sprintf("changes %s: %s → %s", cmp.Or(kindWords[a.kind], a.kind)+" "+a.name, b.detail, a.detail))
		}
	}
	return d
}

// emptyDiff is a diff with nothing in it, its lists empty rather than null.
func emptyDiff() *Diff {
	return &Diff{Added: []Change{}, Removed: []Change{}, Changed: []Change{}, Summary: []string{}}
}

func describe(it item) string {
	s := cmp.Or(kindWords[it.kind], it.kind) + " " + it.name
	if it.detail != "" && it.kind != ChangeSkill && it.kind != ChangeCommand && it.kind != ChangeAgent {
		s += " → " + it.detail
	}
	return s
}

// kindWords names the kinds a summary does not call by the kind itself.
var kindWords = map[string]string{ChangeMCP: "MCP server", ChangeEnv: "credential reference", ChangeFetch: "run-time fetch"}

// itemsOf lists an inventory's contributions. Skills, commands, agents and
// MCP servers are keyed by name; hooks by event, matcher and what they run
// (a hook has no name: a changed command is one removed and one added); the
// runtime by itself; environment references by variable name.
func itemsOf(inv Inventory) map[string]item {
	out := map[string]item{}
	add := func(it item) { out[it.kind+"\x00"+it.key] = it }
	for _, s := range inv.Skills {
		add(item{ChangeSkill, s.Name, s.Invocation, s.Description})
	}
	for _, c := range inv.Commands {
		add(item{ChangeCommand, c.Name, c.Invocation, c.Description})
	}
	for _, a := range inv.Agents {
		add(item{ChangeAgent, a.Name, a.Invocation, a.Description})
	}
	envs := map[string]bool{}
	for _, h := range inv.Hooks {
		run := strings.Join(append([]string{h.Command}, h.Args...), " ")
		if h.ContextFile != "" {
			run = "context " + h.ContextFile
		}
		name := h.Event
		if h.Matcher != "" {
			name += " " + h.Matcher
		}
		add(item{ChangeHook, name + "\x00" + run, name, run})
		refsOf(envs, h.Env, run)
	}
	for _, m := range inv.MCPServers {
		target := m.Transport + " " + cmp.Or(m.URL, strings.Join(append([]string{m.Command}, m.Args...), " "))
		add(item{ChangeMCP, m.Name, m.Name, strings.TrimSpace(target)})
		refsOf(envs, m.Env, strings.Join(append(append([]string{m.URL}, m.Args...), slices.Collect(maps.Values(m.Headers))...), " "))
		refsOf(envs, m.Headers, "")
	}
	if r := inv.Runtime; r != nil {
		add(item{ChangeRuntime, "runtime", "runtime", strings.TrimSpace(r.Command + " " + strings.Join(r.Args, " "))})
		refsOf(envs, r.Env, strings.Join(r.Args, " "))
	}
	for _, f := range inv.RuntimeFetches {
		add(fetchItem(f))
	}
	for e := range envs {
		add(item{ChangeEnv, e, e, ""})
	}
	return out
}

var envRefRE = lazyregexp.New(`\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}|%([A-Za-z_][A-Za-z0-9_]*)%`)

// refsOf collects the environment variables a contribution reads: its env
// keys and the ${VAR} references in its text.
func refsOf(into map[string]bool, env map[string]string, text string) {
	for k, v := range env {
		into[k] = true
		text += " " + v
	}
	for _, m := range envRefRE.FindAllStringSubmatch(text, -1) {
		name := m[1] + m[2]
		if !secrets.IsHostVar(name) {
			into[name] = true
		}
	}
}

// updateRisk is the risk of an update: what the new version can do, and one
// level above what the installed one could when the update adds something
// that runs code or reads a credential — approving it approves more power.
// A move to another place (host, owner, repository or subfolder) raises
// that by one level more: approving it trusts another publisher's code.
func updateRisk(newRisk, oldRisk Risk, d *Diff) Risk {
	r := newRisk
	if bumped := oneAbove(oldRisk); d.raisesRisk() && riskRank[bumped] > riskRank[r] {
		r = bumped
	}
	if d.moves() {
		r = oneAbove(r)
	}
	return r
}

func oneAbove(r Risk) Risk {
	switch r {
	case RiskLow:
		return RiskMedium
	case RiskMedium, RiskHigh:
		return RiskHigh
	}
	return RiskMedium
}

// moves reports whether the diff has a move to another place.
func (d *Diff) moves() bool {
	return d != nil && slices.ContainsFunc(d.Changed, func(c Change) bool { return c.Kind == ChangeSource })
}

// addMove puts a move to another place first in the diff: its own line,
// ahead of what changes in the plugin's contributions. from and to are
// recorded sources with the folder recorded beside them.
func (d *Diff) addMove(from source.Source, fromSubdir string, to source.Source, toSubdir string) {
	parts, fromWhere, toWhere := sourceMoves(from, fromSubdir, to, toSubdir)
	if len(parts) == 0 {
		return
	}
	what := strings.Join(parts, ", ")
	c := Change{Kind: ChangeSource, Name: what, Detail: fromWhere + " → " + toWhere}
	d.Changed = append([]Change{c}, d.Changed...)
	d.Summary = append([]string{fmt.Sprintf("moves to another source (%s changes): %s → %s", what, fromWhere, toWhere)}, d.Summary...)
}

// addRename puts a rename first in the diff, on its own line.
func (d *Diff) addRename(from, to, market string) {
	d.Changed = append([]Change{{Kind: ChangeName, Name: to, Detail: from + " → " + to}}, d.Changed...)
	d.Summary = append([]string{fmt.Sprintf("renamed: %s → %s (marketplace %s lists it under its new name)", from, to, market)}, d.Summary...)
}

// sourceMoves compares two recorded sources (each with the folder
// recorded beside it) by host, owner, repository and subfolder.
func sourceMoves(from source.Source, fromSubdir string, to source.Source, toSubdir string) (parts []string, fromWhere, toWhere string) {
	a, b := from.Beside(fromSubdir), to.Beside(toSubdir)
	return a.Moves(b), a.Where(), b.Where()
}
