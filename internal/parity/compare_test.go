package parity

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// allowedAll is an allowed-differences file naming every rule.
func allowedFile(t *testing.T, rules ...string) Allowed {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"about": "test", "allowed": [`)
	for i, r := range rules {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"rule": "` + r + `", "reason": "because"}`)
	}
	b.WriteString("]}")
	p := filepath.Join(t.TempDir(), "allowed.json")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := LoadAllowed(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func golden(details *Details, mcp ...string) *Golden {
	return &Golden{Plugin: "p", Listed: true, Enabled: true, Details: details, LoadedMCPServers: mcp}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	all := allowedFile(t, RuleClaudeDir, RuleRemotePath, RuleLSPOnly, RuleNothingMapped, RuleHostSkips, RuleValidateError, RuleDanglingLink)
	none := allowedFile(t)
	empty := func() *Details {
		return &Details{Skills: []string{}, Agents: []string{}, Hooks: []string{}, MCPServers: []string{}, LSPServers: []string{}}
	}
	rel := Entry{Name: "p", Kind: "relative", Path: "./p"}
	skills := func(names ...string) *Details {
		return &Details{Skills: names, Agents: []string{}, Hooks: []string{}, MCPServers: []string{}, LSPServers: []string{}}
	}
	installed := func(o Ours) *Ours { o.Name, o.Status, o.Listed, o.Enabled = "p", "installed", true, true; return &o }
	tests := []struct {
		name    string
		g       *Golden
		o       *Ours
		e       Entry
		allowed Allowed
		diffs   []string
		ok      []string // allowed differences, by prefix
	}{
		{name: "equal, skills and commands together", g: golden(skills("a", "c"), "srv"), e: rel, allowed: all,
			o: installed(Ours{Skills: []Item{{Name: "a"}}, Commands: []Item{{Name: "c"}}, MCPServers: []Item{{Name: "srv"}}})},
		{name: "a skill and a command of one name count twice", g: golden(skills("a", "a")), e: rel, allowed: all,
			o: installed(Ours{Skills: []Item{{Name: "a"}}}), diffs: []string{"skills and commands only Claude has: a"}},
		{name: "inventory differences", e: rel, allowed: all,
			g: golden(&Details{Skills: []string{"a"}, Agents: []string{"top"}, Hooks: []string{"Stop"}, LSPServers: []string{"gopls"}}, "srv"),
			// details names agents by file: "renamed" (its front matter's
			// name) is agents/top.md.
			o: installed(Ours{Skills: []Item{{Name: "b"}}, Agents: []Item{{Name: "renamed", Path: "agents/top.md"}, {Name: "deep", Path: "x/deep.md"}},
				Hooks: []Item{{Name: "Stop"}, {Name: "Stop"}, {Name: "PreToolUse"}}}),
			diffs: []string{"LSP servers only Claude has: gopls", "MCP servers only Claude has: srv", "agents only reasonix has: deep",
				"hook events only reasonix has: PreToolUse", "skills and commands only Claude has: a", "skills and commands only reasonix has: b"}},
		// A session's names: nested files and front-matter names, and no
		// file details cannot see left out.
		{name: "held to the session", e: rel, allowed: all,
			g: &Golden{Plugin: "p", Listed: true, Enabled: true, Details: &Details{Agents: []string{"top"}},
				Session: &Session{Agents: []string{"renamed", "sub:custom"}, Commands: []string{"grp:cmd", "s"}}},
			o: installed(Ours{Skills: []Item{{Name: "s", Path: "skills/s"}}, Commands: []Item{{Name: "grp:cmd", Path: "commands/grp/cmd.md"}},
				Agents: []Item{{Name: "renamed", Path: "agents/top.md"}, {Name: "sub:foo", Path: "agents/sub/foo.md"}}}),
			diffs: []string{"agents (session) only Claude has: sub:custom", "agents (session) only reasonix has: sub:foo"}},
		{name: "enabled and display name", e: rel, allowed: all,
			g: &Golden{Plugin: "p", Listed: true, Enabled: false, DisplayName: "Nice", Details: skills()},
			o: installed(Ours{}), diffs: []string{`display name: Claude "Nice", reasonix ""`, "enabled: Claude false, reasonix true"}},
		{name: "Claude refuses at install", e: rel, allowed: all, g: &Golden{Plugin: "p", Install: Install{Exit: 1, Error: "bad manifest"}},
			o: installed(Ours{}), diffs: []string{"verdict: Claude refuses it (install failed: bad manifest), reasonix installs it"}},
		{name: "Claude fails to load", e: rel, allowed: all, g: &Golden{Plugin: "p", Listed: true, LoadErrors: []string{"Hook load failed: x"}, Details: skills()},
			o: installed(Ours{}), diffs: []string{"verdict: Claude refuses it (failed to load: Hook load failed: x), reasonix installs it"}},
		{name: "a missing declared path is no refusal", e: rel, allowed: all,
			g: &Golden{Plugin: "p", Listed: true, Enabled: true, LoadErrors: []string{"Path not found: x (commands)"}, Details: skills()},
			o: &Ours{Name: "p", Status: "blocked", Reason: "does not exist"}, diffs: []string{"verdict: Claude installs it, reasonix: blocked"}},
		{name: "both refuse", e: rel, allowed: all, g: &Golden{Plugin: "p", Install: Install{Exit: 1}}, o: &Ours{Name: "p", Status: "blocked"}},
		{name: "no action", e: rel, allowed: all, g: golden(skills()), diffs: []string{"reasonix planned no action for this entry"}},
		{name: ".claude/ fallbacks allowed", e: rel, allowed: all, g: golden(skills("a")),
			o: installed(Ours{Skills: []Item{{Name: "a", Path: "skills/a"}, {Name: "f", Path: ".claude/skills/f"}},
				Hooks: []Item{{Name: "Stop", Path: ".claude/settings.json"}}}),
			ok: []string{RuleClaudeDir + ": reasonix also has skill f", RuleClaudeDir + ": reasonix also has hook Stop"}},
		{name: ".claude/ fallbacks not allowed without the rule", e: rel, allowed: none, g: golden(skills("a")),
			o:     installed(Ours{Skills: []Item{{Name: "a", Path: "skills/a"}, {Name: "f", Path: ".claude/skills/f"}}}),
			diffs: []string{"skills and commands only reasonix has: f"}},
		{name: "path on a github entry allowed", e: Entry{Name: "p", Kind: "github", Repo: "o/r", Path: "plugins/p"}, allowed: all,
			g: golden(skills("root-skill")), o: installed(Ours{Skills: []Item{{Name: "p-skill"}}}),
			ok: []string{RuleRemotePath + ": skills and commands only Claude has", RuleRemotePath + ": skills and commands only reasonix has"}},
		{name: "path on a git-subdir entry is no excuse", e: Entry{Name: "p", Kind: "git-subdir", Repo: "o/r", Path: "plugins/p"}, allowed: all,
			g: golden(skills("a")), o: installed(Ours{}), diffs: []string{"skills and commands only Claude has: a"}},
		{name: "LSP-only blocked allowed", e: rel, allowed: all,
			g: golden(&Details{LSPServers: []string{"gopls"}}), o: &Ours{Name: "p", Status: "blocked", Reason: "LSP only", Compatibility: "none"},
			ok: []string{RuleLSPOnly + ": Claude installs it, reasonix blocked it"}},
		{name: "blocked with skills is no LSP-only plugin", e: rel, allowed: all,
			g: golden(&Details{Skills: []string{"a"}, LSPServers: []string{"gopls"}}), o: &Ours{Name: "p", Status: "blocked"},
			diffs: []string{"verdict: Claude installs it, reasonix: blocked"}},
		{name: "LSP-only blocked not allowed without the rule", e: rel, allowed: none,
			g: golden(&Details{LSPServers: []string{"gopls"}}), o: &Ours{Name: "p", Status: "blocked"},
			diffs: []string{"verdict: Claude installs it, reasonix: blocked"}},
		{name: "nothing mapped blocked allowed", e: rel, allowed: all, g: golden(empty()), o: &Ours{Name: "p", Status: "blocked", Reason: "nothing maps", Compatibility: "none"},
			ok: []string{RuleNothingMapped + ": Claude installs it, reasonix blocked it (nothing maps)"}},
		{name: "blocked with items of its own is no empty plugin", e: rel, allowed: all, g: golden(empty()),
			o: &Ours{Name: "p", Status: "blocked", Compatibility: "none", Skills: []Item{{Name: "s"}}}, diffs: []string{"verdict: Claude installs it, reasonix: blocked"}},
		{name: "blocked where Claude loads an MCP server is no empty plugin", e: rel, allowed: all, g: golden(empty(), "srv"),
			o: &Ours{Name: "p", Status: "blocked", Compatibility: "none"}, diffs: []string{"verdict: Claude installs it, reasonix: blocked"}},
		{name: "nothing mapped not allowed without the rule", e: rel, allowed: none, g: golden(empty()), o: &Ours{Name: "p", Status: "blocked", Compatibility: "none"},
			diffs: []string{"verdict: Claude installs it, reasonix: blocked"}},
		{name: "hook events and MCP servers the plan says it skipped", e: rel, allowed: all,
			g: golden(&Details{Hooks: []string{"SessionEnd", "Stop", "PreCompact"}}, "gmail", "srv", "other"),
			o: installed(Ours{MCPServers: []Item{{Name: "srv"}}, Warnings: []string{
				"hooks/hooks.json: SessionEnd hooks have no Reasonix event; 1 group(s) skipped",
				`hooks/hooks.json: Stop[0].hooks[0]: "prompt" hook skipped: Reasonix runs only command hooks`,
				"hooks/hooks.json: PreCompact hooks are noted",
				`.mcp.json: MCP server "gmail": a http server needs a url; skipped`}}),
			diffs: []string{"MCP servers only Claude has: other", "hook events only Claude has: PreCompact"},
			ok:    []string{RuleHostSkips + ": reasonix's plan says it skipped SessionEnd", RuleHostSkips + ": reasonix's plan says it skipped Stop", RuleHostSkips + ": reasonix's plan says it skipped gmail"}},
		{name: "skips said are not allowed without the rule", e: rel, allowed: none, g: golden(&Details{Hooks: []string{"SessionEnd"}}),
			o:     installed(Ours{Warnings: []string{"hooks/hooks.json: SessionEnd hooks have no Reasonix event; 1 group(s) skipped"}}),
			diffs: []string{"hook events only Claude has: SessionEnd"}},
		{name: "validate error blocked allowed", e: rel, allowed: all,
			g:  &Golden{Plugin: "p", Listed: true, Enabled: true, LoadErrors: []string{"Path not found: x (skills)"}, Details: empty()},
			o:  &Ours{Name: "p", Status: "blocked", Reason: "plugin.json does not follow Claude Code's plugin manifest rules " + ValidateRefusal + ": skills[0]: path"},
			ok: []string{RuleValidateError + ": Claude installs it, reasonix blocked it"}},
		{name: "a validate error Claude's loader does not report is a difference", e: rel, allowed: all, g: golden(skills("a")),
			o:     &Ours{Name: "p", Status: "blocked", Reason: "plugin.json does not follow Claude Code's plugin manifest rules " + ValidateRefusal},
			diffs: []string{"verdict: Claude installs it, reasonix: blocked"}},
		{name: "dangling link refused allowed", e: rel, allowed: all, g: golden(skills("a")),
			o:  &Ours{Name: "p", Status: "blocked", Reason: `plugin "p": refusing entry "skills/a/LICENSE": symlink to "../../LICENSE": "LICENSE" is not in the tree`},
			ok: []string{RuleDanglingLink + ": Claude installs it, reasonix blocked it"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare("m", tc.g, tc.o, tc.e, tc.allowed, DetailsBlind{})
			if !reflect.DeepEqual(r.Differences, tc.diffs) && (len(r.Differences) > 0 || len(tc.diffs) > 0) {
				t.Errorf("differences\n got %q\nwant %q", r.Differences, tc.diffs)
			}
			if len(r.Allowed) != len(tc.ok) {
				t.Fatalf("allowed %q, want %d starting %q", r.Allowed, len(tc.ok), tc.ok)
			}
			for i, p := range tc.ok {
				if !strings.HasPrefix(r.Allowed[i], p) {
					t.Errorf("allowed[%d] = %q, want prefix %q", i, r.Allowed[i], p)
				}
			}
		})
	}
}

func TestLoadAllowedRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, doc, err string }{
		{"unknown rule", `{"allowed": [{"rule": "anything-goes", "reason": "x"}]}`, `unknown rule "anything-goes"`},
		{"no reason", `{"allowed": [{"rule": "lsp-only-blocked", "reason": " "}]}`, "has no reason"},
		{"twice", `{"allowed": [{"rule": "lsp-only-blocked", "reason": "x"}, {"rule": "lsp-only-blocked", "reason": "y"}]}`, "twice"},
		{"unknown field", `{"allowed": [], "extra": 1}`, "unknown field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "a.json")
			if err := os.WriteFile(p, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadAllowed(p); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
		})
	}
}

func TestCount(t *testing.T) {
	t.Parallel()
	got := Count([]Result{
		{Claude: true, Reasonix: true},
		{Claude: true, Reasonix: true, Allowed: []string{"x"}},
		{Claude: true, Reasonix: true, Differences: []string{"x"}},
		{Claude: true},
		{Reasonix: true},
		{},
	})
	want := Tally{Entries: 6, Both: 3, Equal: 1, EqualAllowed: 1, Different: 1, OnlyClaude: 1, OnlyReasonix: 1, Neither: 1}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestDetailsBlind(t *testing.T) {
	t.Parallel()
	blind := DetailsView([]byte(`{"commands":["./commands/a.md","./more"],"agents":"./x/ag.md"}`),
		[]byte(`{"name":"p","commands":{"named":{"source":"./c/named.md"}},"skills":["./skills/s.md"]}`))
	for p, want := range map[string]string{
		"commands/a.md":     "declared file commands/a.md", // plugin.json declares commands: commands/ is not read
		"x/ag.md":           "declared file x/ag.md",
		"c/named.md":        "declared file c/named.md",
		"more/m.md":         "",
		"more/sub/m.md":     "file more/sub/m.md in a subfolder of more",
		"agents/sub/foo.md": "", // plugin.json declares agents: agents/ is not read, so not left out
		"elsewhere/e.md":    "",
	} {
		if got := blind.unseen(p); got != want {
			t.Errorf("unseen(%s) = %q, want %q", p, got, want)
		}
	}
	o := &Ours{Name: "p", Status: "installed", Listed: true, Enabled: true,
		Commands: []Item{{Name: "a", Path: "commands/a.md"}, {Name: "m", Path: "more/m.md"}, {Name: "sub:m", Path: "more/sub/m.md"}},
		Agents:   []Item{{Name: "ag", Path: "x/ag.md"}}}
	r := Compare("m", golden(&Details{}), o, Entry{Kind: "relative"}, Allowed{}, blind)
	if strings.Join(r.Differences, "|") != "skills and commands only reasonix has: m" || len(r.Unseen) != 3 {
		t.Fatalf("differences %q unseen %q", r.Differences, r.Unseen)
	}
	// Without a plugin.json the default folders are read beside what the
	// entry declares.
	loose := DetailsView(nil, []byte(`{"commands":["./commands/y.md"]}`))
	if got := loose.unseen("commands/y.md"); got != "" {
		t.Errorf("a file of the default folder the entry declares too: %q", got)
	}
	if got := loose.unseen("agents/sub/foo.md"); got != "file agents/sub/foo.md in a subfolder of agents" {
		t.Errorf("a nested agent of the default folder: %q", got)
	}
	if got := DetailsView(nil, []byte("not json")).unseen("commands/sub/x.md"); got == "" {
		t.Error("a nested command of an unreadable entry is seen")
	}
}
