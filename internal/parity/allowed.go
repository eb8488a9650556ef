package parity

import (
	"fmt"
	"strings"
)

// The differences from Claude that reasonix keeps on purpose (SPEC §7,
// issue 22). Each is a rule here and a line, with its reason, in the
// allowed-differences file the tests read; a rule absent from the file is
// not applied, and the file may name no rule this code does not know.
const (
	// RuleClaudeDir: the seeds read skills, commands and agents from
	// .claude/ folders, and hooks from .claude/settings.json; Claude does
	// not. Reasonix's items from there are left out of the comparison.
	RuleClaudeDir = "claude-dir-fallbacks"
	// RuleRemotePath: on a github or url entry, "path" is the plugin's
	// folder for reasonix; Claude ignores it and installs the whole
	// repository. Any difference of such an entry is allowed.
	RuleRemotePath = "path-on-github-url"
	// RuleLSPOnly: a plugin whose only components are LSP servers is
	// blocked (reasonix has no runtime for them); Claude installs it.
	RuleLSPOnly = "lsp-only-blocked"
)

var knownRules = map[string]bool{RuleClaudeDir: true, RuleRemotePath: true, RuleLSPOnly: true}

// Allowed is the set of allowed-difference rules in force, with reasons.
type Allowed struct {
	reasons map[string]string
	order   []string
}

// LoadAllowed reads the allowed-differences file: {"allowed": [{"rule",
// "reason"}…]}. An unknown rule, a rule twice or one without a reason is
// an error.
func LoadAllowed(path string) (Allowed, error) {
	var doc struct {
		About   string `json:"about"`
		Allowed []struct {
			Rule   string `json:"rule"`
			Reason string `json:"reason"`
		} `json:"allowed"`
	}
	if err := readStrict(path, &doc); err != nil {
		return Allowed{}, fmt.Errorf("allowed differences: %w", err)
	}
	a := Allowed{reasons: map[string]string{}}
	for i, r := range doc.Allowed {
		switch {
		case !knownRules[r.Rule]:
			return Allowed{}, fmt.Errorf("allowed differences %s: allowed[%d]: unknown rule %q", path, i, r.Rule)
		case a.reasons[r.Rule] != "":
			return Allowed{}, fmt.Errorf("allowed differences %s: allowed[%d]: rule %q twice", path, i, r.Rule)
		case strings.TrimSpace(r.Reason) == "":
			return Allowed{}, fmt.Errorf("allowed differences %s: allowed[%d]: rule %q has no reason", path, i, r.Rule)
		}
		a.reasons[r.Rule] = r.Reason
		a.order = append(a.order, r.Rule)
	}
	return a, nil
}

// Rules lists the rules in force as "RULE: reason", in the file's order.
func (a Allowed) Rules() []string {
	out := make([]string, 0, len(a.order))
	for _, r := range a.order {
		out = append(out, r+": "+a.reasons[r])
	}
	return out
}

func (a Allowed) has(rule string) bool { return a.reasons[rule] != "" }

// dropClaudeDirItems returns o without its items from .claude/, noting
// each in r as allowed.
func (a Allowed) dropClaudeDirItems(o *Ours, r *Result) *Ours {
	if !a.has(RuleClaudeDir) {
		return o
	}
	c := *o
	keep := func(what string, in []Item) []Item {
		var out []Item
		for _, it := range in {
			if strings.HasPrefix(it.Path, ".claude/") {
				r.Allowed = append(r.Allowed, fmt.Sprintf("%s: reasonix also has %s %s (from %s)", RuleClaudeDir, what, it.Name, it.Path))
				continue
			}
			out = append(out, it)
		}
		return out
	}
	c.Skills, c.Commands = keep("skill", o.Skills), keep("command", o.Commands)
	c.Agents, c.Hooks = keep("agent", o.Agents), keep("hook", o.Hooks)
	return &c
}

// remotePath reports whether e is a github or url entry with a path.
func (a Allowed) remotePath(e Entry) bool {
	return a.has(RuleRemotePath) && (e.Kind == "github" || e.Kind == "url") && e.Path != ""
}

// lspOnlyBlocked reports whether Claude installed a plugin whose only
// components are LSP servers and reasonix blocked it.
func (a Allowed) lspOnlyBlocked(g *Golden, o *Ours) bool {
	d := g.Details
	return a.has(RuleLSPOnly) && d != nil && o.Status == "blocked" &&
		len(d.Skills) == 0 && len(d.Agents) == 0 && len(d.Hooks) == 0 && len(g.LoadedMCPServers) == 0 && len(d.LSPServers) > 0
}
