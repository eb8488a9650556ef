package parity

import (
	"fmt"
	"regexp"
	"strconv"
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
	// RuleNothingMapped: a plugin in which Claude loads nothing either is
	// blocked, as every package that maps nothing is (SPEC §10).
	RuleNothingMapped = "nothing-mapped-blocked"
	// RuleHostSkips: a hook event or an MCP server only Claude has is
	// allowed when reasonix's plan names it as skipped: what the Reasonix
	// host cannot run (an event it has no counterpart for, a prompt or
	// agent hook, a server with no usable launch or address) is left out
	// and said (SPEC §10 partial compatibility; the seeds map command hooks
	// where the event names match).
	RuleHostSkips = "host-skips-said"
	// RuleValidateError: a plugin Claude installs though its own validate
	// and loader report an error (a declared path that is not there) is
	// blocked: install refuses what validate calls an error (SPEC §7).
	RuleValidateError = "validate-error-blocked"
	// RuleDanglingLink: a plugin holding a link whose target is not in the
	// tree is refused: links are materialized as copies of their targets
	// and nothing installed is a link (SPEC §8), so one that leads nowhere
	// cannot be; Claude's clone keeps it dangling.
	RuleDanglingLink = "dangling-link-refused"
)

var knownRules = map[string]bool{RuleClaudeDir: true, RuleRemotePath: true, RuleLSPOnly: true,
	RuleNothingMapped: true, RuleHostSkips: true, RuleValidateError: true, RuleDanglingLink: true}

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

// whyBlocked says which rule allows reasonix to refuse a plugin Claude
// installs, and how ("" when none does).
func (a Allowed) whyBlocked(g *Golden, o *Ours) string {
	d := g.Details
	claudeMapsNothing := d != nil && len(d.Skills) == 0 && len(d.Agents) == 0 && len(d.Hooks) == 0 && len(g.LoadedMCPServers) == 0
	switch {
	case o.Status == "blocked" && o.mapsNothing() && claudeMapsNothing && len(d.LSPServers) > 0 && a.has(RuleLSPOnly):
		return RuleLSPOnly
	case o.Status == "blocked" && o.mapsNothing() && claudeMapsNothing && len(d.LSPServers) == 0 && a.has(RuleNothingMapped):
		return RuleNothingMapped
	case o.Status == "blocked" && strings.Contains(o.Reason, ValidateRefusal) && claudeLoadError(g) && a.has(RuleValidateError):
		return RuleValidateError
	case danglingLink.MatchString(o.Reason) && a.has(RuleDanglingLink):
		return RuleDanglingLink
	}
	return ""
}

// ValidateRefusal is what reasonix's refusal of a manifest that breaks
// Claude's rules says (manifest.refuseInvalidClaude).
const ValidateRefusal = "(see: reasonix plugin validate)"

// danglingLink is reasonix's refusal of a link whose target is not in the
// tree (tarball's missingError).
var danglingLink = regexp.MustCompile(`symlink to "[^"]*": "[^"]*" is not in the tree`)

// claudeLoadError says Claude reported a load error of its own for the
// plugin (a declared path not found, which its validate calls an error).
func claudeLoadError(g *Golden) bool {
	for _, e := range g.LoadErrors {
		if strings.HasPrefix(e, pathNotFound) {
			return true
		}
	}
	return false
}

// skippedSaid says whether one of reasonix's plan warnings names item
// (matched by mentions) as skipped (RuleHostSkips).
func (a Allowed) skippedSaid(o *Ours, mentions *regexp.Regexp) bool {
	if !a.has(RuleHostSkips) {
		return false
	}
	for _, w := range o.Warnings {
		if strings.Contains(w, "skipped") && mentions.MatchString(w) {
			return true
		}
	}
	return false
}

// hookEventSaid matches a warning about the hooks of event ev ("Stop
// hooks …", "Stop[0].hooks[1]: …").
func hookEventSaid(ev string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[\s:])` + regexp.QuoteMeta(ev) + `( hooks|\[)`)
}

// mcpServerSaid matches a warning about MCP server name.
func mcpServerSaid(name string) *regexp.Regexp {
	return regexp.MustCompile(`MCP server ` + regexp.QuoteMeta(strconv.Quote(name)))
}
