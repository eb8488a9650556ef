package manifest

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"reasonix.io/plugind/secrets"
)

func TestClaudeFixture(t *testing.T) {
	t.Parallel()
	p, err := Load("testdata/claude", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != KindClaude || p.ManifestPath != ClaudeManifest || p.Name != "superkit" || p.Version != "2.1.0" || p.Blocked {
		t.Errorf("header = %+v", p)
	}
	// Skipped: a prompt hook, a Notification hook, lspServers; gaps: Stop, "if".
	if p.Compatibility != CompatPartial {
		t.Errorf("compatibility = %q, want partial", p.Compatibility)
	}
	wantSkills := []Skill{
		{Name: "debugging", Invocation: "/superkit:debugging", Description: "Systematic debugging, one hypothesis at a time", Path: "skills/debugging"},
		{Name: "tdd", Invocation: "/superkit:tdd", Description: "Use when: writing tests first", Path: "skills/tdd",
			AllowedTools: []string{"Read", "Edit", "Bash(go test:*)"}},
	}
	if !reflect.DeepEqual(p.Skills, wantSkills) {
		t.Errorf("skills = %+v", p.Skills)
	}
	// The manifest declares commands, which replaces the commands/ folder
	// (Claude Code's rule), saying so.
	wantCommands := []Command{
		{Name: "release", Invocation: "/superkit:release", Description: "Cut a release", ArgumentHint: "<version>", Path: "extra/release.md"},
	}
	if !reflect.DeepEqual(p.Commands, wantCommands) {
		t.Errorf("commands = %+v", p.Commands)
	}
	if want := []Agent{{Name: "code-reviewer", Invocation: "/superkit:agent:code-reviewer", Description: "Reviews diffs for bugs", Path: "agents/reviewer.md"}}; !reflect.DeepEqual(p.Agents, want) {
		t.Errorf("agents = %+v", p.Agents)
	}
	wantHooks := []Hook{
		{Event: "SessionStart", Matcher: "startup|resume", Command: "${CLAUDE_PLUGIN_ROOT}/hooks/session-start.sh", Form: HookExec, Source: "hooks/hooks.json"},
		{Event: "PreToolUse", Matcher: "Bash", Command: "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh", Form: HookShell, Timeout: 10, Source: "hooks/hooks.json"},
		{Event: "Stop", Command: "echo done", Form: HookShell, Async: true, Source: "hooks/hooks.json"},
		{Event: "UserPromptSubmit", Command: "./scripts/prompt-check.sh", Form: HookShell, Source: ".claude/settings.json"},
	}
	if !reflect.DeepEqual(p.Hooks, wantHooks) {
		t.Errorf("hooks = %+v\nwant %+v", p.Hooks, wantHooks)
	}
	// docs is declared inline and again, identically, in .mcp.json: one entry.
	wantMCP := []MCPServer{
		{Name: "docs", Transport: "http", URL: "https://docs.example.com/mcp?api_key=***&lang=***",
			Headers: map[string]string{"Authorization": secrets.Masked, "X-Team": secrets.Masked}, ToolPrefix: "mcp__plugin_superkit_docs__", Source: ClaudeManifest},
		{Name: "github", Transport: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"},
			Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": secrets.Masked, "LOG_LEVEL": "${LOG_LEVEL}"}, ToolPrefix: "mcp__plugin_superkit_github__", Source: ".mcp.json"},
	}
	if !reflect.DeepEqual(p.MCPServers, wantMCP) {
		t.Errorf("mcpServers = %+v\nwant %+v", p.MCPServers, wantMCP)
	}
	for _, w := range []string{
		`unknown field "category" ignored`,
		"LSP server \"gopls\" (gopls serve) is declared, but Reasonix has no language-server runtime",
		`PreToolUse[0].hooks[1]: "prompt" hook skipped`,
		"Stop hooks are mapped but cannot block",
		"Notification hooks have no Reasonix event",
		`"if" condition`,
		"skills/tdd/SKILL.md: front matter is not valid YAML",
		`commands/ is not read: the manifest declares "commands"`,
		".claude/settings.json: read by Reasonix's .claude/ fallback",
	} {
		if !hasWarning(p, w) {
			t.Errorf("no warning %q in %q", w, p.Warnings)
		}
	}
	// Claude plugins ignore a root CLAUDE.md.
	for _, h := range p.Hooks {
		if h.ContextFile != "" {
			t.Errorf("Claude package mapped a context file: %+v", h)
		}
	}
	if got, want := CredentialFiles(p), []string{".claude-plugin/plugin.json", ".claude/settings.json", ".lsp.json", ".mcp.json", "hooks/hooks.json"}; !reflect.DeepEqual(got, want) {
		t.Errorf("CredentialFiles = %q, want %q", got, want)
	}
	if len(p.LSPServers) != 1 || p.LSPServers[0].Name != "gopls" || p.LSPServers[0].Mapped || !reflect.DeepEqual(p.LSPServers[0].Extensions, []string{".go"}) {
		t.Errorf("LSPServers = %+v", p.LSPServers)
	}
}

// A plugin that holds only LSP servers maps nothing: it is blocked, and the
// reason says what it does hold (the official marketplace's LSP plugins).
func TestLSPOnlyPluginSaysWhatItHolds(t *testing.T) {
	t.Parallel()
	for name, files := range map[string]map[string]string{
		"inline": {".claude-plugin/plugin.json": `{"name":"go-lsp","lspServers":{"gopls":{"command":"gopls","extensionToLanguage":{".go":"go"}}}}`},
		"file":   {".claude-plugin/plugin.json": `{"name":"go-lsp"}`, ".lsp.json": `{"gopls":{"command":"gopls"},"rust":{"command":"rust-analyzer"}}`},
	} {
		root := t.TempDir()
		for p, c := range files {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		pkg, err := Load(root, LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !pkg.Blocked || !strings.Contains(pkg.BlockReason, "declares only LSP servers (gopls") || len(pkg.LSPServers) == 0 {
			t.Errorf("%s: blocked %v reason %q servers %+v", name, pkg.Blocked, pkg.BlockReason, pkg.LSPServers)
		}
	}
}

func TestCodexFixture(t *testing.T) {
	t.Parallel()
	p, err := Load("testdata/codex", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != KindCodex || p.ManifestPath != CodexManifest || p.Name != "codexkit" || p.Compatibility != CompatPartial {
		t.Errorf("header = %+v", p)
	}
	if want := []Skill{{Name: "brainstorm", Invocation: "/codexkit:brainstorm", Description: "Brainstorm before building", Path: "skills/brainstorm"}}; !reflect.DeepEqual(p.Skills, want) {
		t.Errorf("skills = %+v", p.Skills)
	}
	wantHooks := []Hook{
		{Event: "SessionStart", ContextFile: "CLAUDE.md", Form: HookContext, Source: "CLAUDE.md"},
		{Event: "SessionStart", Command: "${REASONIX_PLUGIN_ROOT}/hooks/session-start-codex", Args: []string{}, Form: HookExec, Source: "hooks/session-start-codex"},
	}
	if !reflect.DeepEqual(p.Hooks, wantHooks) {
		t.Errorf("hooks = %+v", p.Hooks)
	}
	if len(p.MCPServers) != 2 || p.MCPServers[0].Name != "counter" || p.MCPServers[0].Transport != "http" || p.MCPServers[0].AutoStart {
		t.Fatalf("mcpServers = %+v", p.MCPServers)
	}
	// A non-ASCII server name gets a stable ASCII ID in the tool prefix.
	if s := p.MCPServers[1]; s.Name != "局部" || s.ToolPrefix != toolPrefix("codexkit", "局部") || !strings.HasPrefix(s.ToolPrefix, "mcp__plugin_codexkit_s") {
		t.Errorf("non-ASCII server = %+v", s)
	}
	if !hasWarning(p, "apps is not supported") || !hasWarning(p, `unknown field "commands" ignored`) {
		t.Errorf("warnings = %q", p.Warnings)
	}
}

func TestCompatibility(t *testing.T) {
	t.Parallel()
	const claudeHead = `"name": "kit", "version": "1.0.0", "description": "d"`
	tests := []struct {
		name     string
		kind     Kind
		manifest string // members after claudeHead
		files    map[string]string
		links    map[string]string // "OUTSIDE" is rewritten to an outside dir
		want     Compatibility
		warnings []string
		check    func(t *testing.T, p *Package)
	}{
		{name: "conventional skills only", kind: KindClaude, files: map[string]string{"skills/a/SKILL.md": "---\ndescription: A\n---\n"}, want: CompatFull},
		{name: ".claude dirs", kind: KindClaude, files: map[string]string{".claude/skills/a/SKILL.md": "x", ".claude/commands/c.md": "x"}, want: CompatFull,
			check: func(t *testing.T, p *Package) {
				if len(p.Skills) != 1 || len(p.Commands) != 1 || p.Commands[0].Invocation != "/kit:c" {
					t.Errorf("got %+v %+v", p.Skills, p.Commands)
				}
			}},
		// Claude Code names a path that is a skill by its SKILL.md's name;
		// the skills of a folder of skills keep their folders' names.
		{name: "declared skill named by its front matter", kind: KindClaude, manifest: `"skills": ["./tools/folder-name", "./more"]`,
			files: map[string]string{"tools/folder-name/SKILL.md": "---\nname: front-matter-name\n---\n", "more/inner/SKILL.md": "---\nname: other\n---\n"},
			want:  CompatFull, check: func(t *testing.T, p *Package) {
				if len(p.Skills) != 2 || p.Skills[0].Name != "front-matter-name" || p.Skills[0].Invocation != "/kit:front-matter-name" || p.Skills[1].Name != "inner" {
					t.Errorf("skills = %+v", p.Skills)
				}
			}},
		// Claude Code lists the skills/ folder before the paths declared:
		// a declared skill in it keeps its folder's name.
		{name: "declared skill in skills/ keeps its folder's name", kind: KindClaude, manifest: `"skills": ["./skills/brand-check"]`,
			files: map[string]string{"skills/brand-check/SKILL.md": "---\nname: canva-brand-check\n---\n", "skills/other/SKILL.md": "x"},
			want:  CompatFull, check: func(t *testing.T, p *Package) {
				if len(p.Skills) != 2 || p.Skills[0].Name != "brand-check" || p.Skills[1].Name != "other" {
					t.Errorf("skills = %+v", p.Skills)
				}
			}},
		{name: "a front-matter name that cannot name a skill keeps the folder's", kind: KindClaude, manifest: `"skills": "./tools/x"`,
			files: map[string]string{"tools/x/SKILL.md": "---\nname: Not A Name\n---\n"}, want: CompatFull,
			warnings: []string{`the name "Not A Name" in its SKILL.md cannot name a skill`},
			check: func(t *testing.T, p *Package) {
				if len(p.Skills) != 1 || p.Skills[0].Name != "x" {
					t.Errorf("skills = %+v", p.Skills)
				}
			}},
		// Agents as a Claude Code session names them (2.1.197, the init
		// message of `claude -p --output-format stream-json --verbose`):
		// agents/ read with the folders below it, each agent named by its
		// folders and then its front matter's name, or its file's name
		// when that is missing or empty; a YAML number is its text.
		{name: "agents named as a session names them", kind: KindClaude,
			files: map[string]string{
				"agents/top.md":            "---\nname: renamed-top\n---\n",
				"agents/plain.md":          "---\ndescription: d\n---\n",
				"agents/spaced.md":         "---\nname: My Agent\n---\n",
				"agents/sub/foo.md":        "---\nname: custom\n---\n",
				"agents/sub/deeper/bar.md": "x",
				"agents/odd/num.md":        "---\nname: 42\n---\n",
				"agents/odd/empty.md":      "---\nname: \"\"\n---\n",
				"agents/.hidden/h.md":      "x",
				"agents/xdir/AGENT.md":     "---\ndescription: no name\n---\n", // not "xdir": a session says xdir:AGENT
			},
			want: CompatFull, check: func(t *testing.T, p *Package) {
				var got []string
				for _, a := range p.Agents {
					got = append(got, a.Name+"="+a.Path)
				}
				sort.Strings(got)
				want := []string{"My Agent=agents/spaced.md", "odd:42=agents/odd/num.md", "odd:empty=agents/odd/empty.md", "plain=agents/plain.md",
					"renamed-top=agents/top.md", "sub:custom=agents/sub/foo.md", "sub:deeper:bar=agents/sub/deeper/bar.md", "xdir:AGENT=agents/xdir/AGENT.md"}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("agents = %q, want %q", got, want)
				}
			}},
		// A declared agent file is named by its front matter alone, not its
		// folders (decl:zed in the session), and replaces agents/.
		{name: "declared agent file", kind: KindClaude, manifest: `"agents": ["./extra/deep/z.md"]`,
			files: map[string]string{"extra/deep/z.md": "---\nname: zed\n---\n", "agents/s/i.md": "x"},
			want:  CompatFull, check: func(t *testing.T, p *Package) {
				if len(p.Agents) != 1 || p.Agents[0].Name != "zed" || p.Agents[0].Invocation != "/kit:agent:zed" {
					t.Errorf("agents = %+v", p.Agents)
				}
			}},
		// Two agents a session would name alike: a session loads one
		// (measured); the first is kept, and the plan says so.
		{name: "agents named alike", kind: KindClaude,
			files: map[string]string{"agents/a.md": "---\nname: b\n---\n", "agents/b.md": "x"},
			want:  CompatPartial, warnings: []string{`agent "b" at agents/b.md duplicates the one at agents/a.md`},
			check: func(t *testing.T, p *Package) {
				if len(p.Agents) != 1 || p.Agents[0].Path != "agents/a.md" {
					t.Errorf("agents = %+v", p.Agents)
				}
			}},
		// A plugin that is one skill: SKILL.md at its root, no skills/
		// folder, no skills declared (Claude Code's loader).
		{name: "root SKILL.md is the plugin's skill", kind: KindClaude, files: map[string]string{"SKILL.md": "---\nname: whole\n---\n"},
			want: CompatFull, check: func(t *testing.T, p *Package) {
				if len(p.Skills) != 1 || p.Skills[0].Name != "whole" || p.Skills[0].Path != "." {
					t.Errorf("skills = %+v", p.Skills)
				}
			}},
		{name: "root SKILL.md beside skills/ is not a skill", kind: KindClaude,
			files: map[string]string{"SKILL.md": "---\nname: whole\n---\n", "skills/a/SKILL.md": "x"},
			want:  CompatFull, check: func(t *testing.T, p *Package) {
				if len(p.Skills) != 1 || p.Skills[0].Name != "a" {
					t.Errorf("skills = %+v", p.Skills)
				}
			}},
		{name: "root SKILL.md with skills declared is not a skill", kind: KindClaude, manifest: `"skills": "./sk"`,
			files: map[string]string{"SKILL.md": "---\nname: whole\n---\n", "sk/b/SKILL.md": "x"},
			want:  CompatFull, check: func(t *testing.T, p *Package) {
				if len(p.Skills) != 1 || p.Skills[0].Name != "b" {
					t.Errorf("skills = %+v", p.Skills)
				}
			}},
		{name: "root SKILL.md of a Codex plugin is not a skill", kind: KindCodex, files: map[string]string{"SKILL.md": "x", "commands/c.md": "x"},
			want: CompatFull, check: func(t *testing.T, p *Package) {
				if len(p.Skills) != 0 {
					t.Errorf("skills = %+v", p.Skills)
				}
			}},
		// Claude Code loads a server without a command only when its type
		// says it is remote; Codex takes a url for one.
		{name: "Claude MCP server with a url and no type is not loaded", kind: KindClaude,
			files: map[string]string{".mcp.json": `{"mcpServers": {"typeless": {"url": "https://example.com/mcp"}, "typed": {"type": "http", "url": "https://example.com/mcp"}}}`},
			want:  CompatPartial, warnings: []string{`MCP server "typeless" has a url but no type`},
			check: func(t *testing.T, p *Package) {
				if len(p.MCPServers) != 1 || p.MCPServers[0].Name != "typed" {
					t.Errorf("MCP servers = %+v", p.MCPServers)
				}
			}},
		{name: "Codex MCP server with a url and no type is remote", kind: KindCodex, manifest: `"mcpServers": "./.mcp.json"`,
			files: map[string]string{".mcp.json": `{"mcpServers": {"typeless": {"url": "https://example.com/mcp"}}}`},
			want:  CompatFull, check: func(t *testing.T, p *Package) {
				if len(p.MCPServers) != 1 || p.MCPServers[0].Transport != "http" {
					t.Errorf("MCP servers = %+v", p.MCPServers)
				}
			}},
		{name: "metadata only is blocked", kind: KindClaude, want: CompatNone, check: func(t *testing.T, p *Package) {
			if !p.Blocked || !strings.Contains(p.BlockReason, "nothing in this claude plugin maps") {
				t.Errorf("blocked=%v reason=%q", p.Blocked, p.BlockReason)
			}
		}},
		{name: "only missing paths is none", kind: KindCodex, manifest: `"skills": "./skills/"`, want: CompatNone,
			warnings: []string{`skills path "./skills/" does not exist`}},
		{name: "escaping symlinked skill is skipped", kind: KindClaude, files: map[string]string{"skills/ok/SKILL.md": "x"},
			links: map[string]string{"skills/evil": "OUTSIDE/evil"}, want: CompatPartial, warnings: []string{"skills/evil leaves the package root"},
			check: func(t *testing.T, p *Package) {
				if len(p.Skills) != 1 || p.Skills[0].Name != "ok" {
					t.Errorf("skills = %+v", p.Skills)
				}
			}},
		{name: "escaping symlinked command is skipped", kind: KindClaude, files: map[string]string{"commands/ok.md": "x"},
			links: map[string]string{"commands/evil.md": "OUTSIDE/secret.md"}, want: CompatPartial, warnings: []string{"commands/evil.md is a symlink"}},
		{name: "unsupported features", kind: KindClaude, manifest: `"outputStyles": "./styles", "monitors": [{"name": "m", "command": "watch.sh", "description": "Watches"}], "userConfig": {}`,
			files: map[string]string{"skills/a/SKILL.md": "x"}, want: CompatPartial,
			warnings: []string{"outputStyles is not supported", "monitors is not supported"}},
		{name: "unknown metadata fields only warn", kind: KindClaude, manifest: `"category": "x", "tier": "gold"`, files: map[string]string{"skills/a/SKILL.md": "x"},
			want: CompatFull, warnings: []string{`unknown field "category"`, `unknown field "tier"`}},
		{name: "inline hooks", kind: KindClaude, manifest: `"hooks": {"PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "fmt.sh", "args": ["-w"], "env": {"K": "v"}}]}]}`,
			want: CompatFull, check: func(t *testing.T, p *Package) {
				want := []Hook{{Event: "PostToolUse", Matcher: "Write|Edit", Command: "fmt.sh", Args: []string{"-w"}, Form: HookExec, Env: map[string]string{"K": secrets.Masked}, Source: ClaudeManifest}}
				if !reflect.DeepEqual(p.Hooks, want) {
					t.Errorf("hooks = %+v", p.Hooks)
				}
			}},
		{name: "hooks path plus default hooks.json", kind: KindClaude, manifest: `"hooks": "./extra-hooks.json"`,
			files: map[string]string{
				"extra-hooks.json": `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "a"}]}]}}`,
				"hooks/hooks.json": `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "b"}]}]}}`,
			}, want: CompatFull, check: func(t *testing.T, p *Package) {
				if len(p.Hooks) != 2 || p.Hooks[0].Source != "extra-hooks.json" || p.Hooks[1].Source != "hooks/hooks.json" {
					t.Errorf("hooks = %+v", p.Hooks)
				}
			}},
		{name: "wildcard matcher gaps once per file", kind: KindClaude,
			files: map[string]string{"hooks/hooks.json": `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "a"}, {"type": "command", "command": "b"}]}], "PostToolUse": [{"hooks": [{"type": "command", "command": "c"}]}]}}`},
			want:  CompatPartial, check: func(t *testing.T, p *Package) {
				n := 0
				for _, w := range p.Warnings {
					if strings.Contains(w, "WebFetch") {
						n++
					}
				}
				if n != 1 || !hasWarning(p, "NotebookEdit") || !hasWarning(p, "TaskOutput") || len(p.Hooks) != 3 {
					t.Errorf("WebFetch warnings = %d; warnings %q; hooks %d", n, p.Warnings, len(p.Hooks))
				}
			}},
		{name: "asyncRewake and agent hooks", kind: KindClaude,
			files: map[string]string{"hooks/hooks.json": `{"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "a", "asyncRewake": true}, {"type": "agent", "prompt": "verify"}, {"type": "http", "url": "https://x"}]}]}}`},
			want:  CompatPartial, warnings: []string{"asyncRewake is not honored", `"agent" hook skipped`, `"http" hook skipped`}},
		{name: "only unsupported hooks is none", kind: KindClaude,
			files: map[string]string{"hooks/hooks.json": `{"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "a"}]}]}}`},
			want:  CompatNone, warnings: []string{"SessionEnd hooks have no Reasonix event"}},
		{name: "malformed hooks.json is skipped, not fatal", kind: KindClaude,
			files: map[string]string{"hooks/hooks.json": "{\n  \"hooks\": {,\n}", "skills/a/SKILL.md": "x"},
			want:  CompatPartial, warnings: []string{"hooks/hooks.json is not valid JSON at line 2"}},
		{name: "bare .mcp.json map", kind: KindClaude, files: map[string]string{".mcp.json": `{"db": {"type": "local", "command": "db-mcp", "env": {"DB_PASSWORD": "p4ss"}}}`},
			want: CompatFull, check: func(t *testing.T, p *Package) {
				want := []MCPServer{{Name: "db", Transport: "stdio", Command: "db-mcp", Env: map[string]string{"DB_PASSWORD": secrets.Masked}, ToolPrefix: "mcp__plugin_kit_db__", Source: ".mcp.json"}}
				if !reflect.DeepEqual(p.MCPServers, want) {
					t.Errorf("mcp = %+v", p.MCPServers)
				}
			}},
		{name: "mcp path, mcpb and conflicting duplicate", kind: KindClaude, manifest: `"mcpServers": ["./servers.json", "./bundle.mcpb", {"s": {"command": "other"}}]`,
			files: map[string]string{"servers.json": `{"mcpServers": {"s": {"command": "one"}, "w": {"type": "ws", "url": "wss://x"}}}`},
			want:  CompatPartial, warnings: []string{"MCPB bundle", `"s" is declared again with a different definition`, `transport "ws" is not supported`},
			check: func(t *testing.T, p *Package) {
				if len(p.MCPServers) != 1 || p.MCPServers[0].Command != "one" || p.MCPServers[0].AutoStart {
					t.Errorf("mcp = %+v", p.MCPServers)
				}
			}},
		{name: "commands object form", kind: KindClaude, manifest: `"commands": {"about": {"source": "./docs/about.md", "description": "About us", "argumentHint": "[topic]"}, "inline": {"content": "hi"}}`,
			files: map[string]string{"docs/about.md": "About."}, want: CompatPartial, warnings: []string{"commands.inline: inline command content is not supported"},
			check: func(t *testing.T, p *Package) {
				want := []Command{{Name: "about", Invocation: "/kit:about", Description: "About us", ArgumentHint: "[topic]", Path: "docs/about.md"}}
				if !reflect.DeepEqual(p.Commands, want) {
					t.Errorf("commands = %+v", p.Commands)
				}
			}},
		{name: "codex CLAUDE.md context hook", kind: KindCodex, files: map[string]string{"CLAUDE.md": "rules"}, want: CompatFull,
			check: func(t *testing.T, p *Package) {
				if len(p.Hooks) != 1 || p.Hooks[0].ContextFile != "CLAUDE.md" || p.Hooks[0].Form != HookContext {
					t.Errorf("hooks = %+v", p.Hooks)
				}
			}},
		{name: "skill names must be usable", kind: KindClaude, files: map[string]string{"skills/bad name/SKILL.md": "x", "skills/good/SKILL.md": "x"},
			want: CompatPartial, warnings: []string{"skill at skills/bad name skipped"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			manifestPath := ClaudeManifest
			if tc.kind == KindCodex {
				manifestPath = CodexManifest
			}
			body := claudeHead
			if tc.manifest != "" {
				body += ", " + tc.manifest
			}
			files := map[string]string{manifestPath: "{" + body + "}"}
			for k, v := range tc.files {
				files[k] = v
			}
			links := map[string]string{}
			if len(tc.links) > 0 {
				out := outsideDir(t)
				for k, v := range tc.links {
					links[k] = strings.Replace(v, "OUTSIDE", out, 1)
				}
			}
			p, err := Load(layout(t, files, links), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Kind != tc.kind || p.Compatibility != tc.want {
				t.Errorf("kind %q compatibility %q, want %q %q; warnings %q", p.Kind, p.Compatibility, tc.kind, tc.want, p.Warnings)
			}
			if p.Blocked != (tc.want == CompatNone) {
				t.Errorf("blocked = %v", p.Blocked)
			}
			for _, w := range tc.warnings {
				if !hasWarning(p, w) {
					t.Errorf("no warning %q in %q", w, p.Warnings)
				}
			}
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

func TestCompatErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		kind     Kind
		manifest string
		opts     LoadOptions
		want     []string
	}{
		{name: "malformed claude JSON", kind: KindClaude, manifest: "{\"name\": \"x\",\n\"version\": 1.0.0}", want: []string{ClaudeManifest, "line 2"}},
		{name: "malformed codex JSON", kind: KindCodex, manifest: `{"name": "x"`, want: []string{CodexManifest, "not valid JSON"}},
		{name: "bad name", kind: KindClaude, manifest: `{"name": "my plugin"}`, want: []string{"name", `"my plugin"`}},
		{name: "slash in name", kind: KindCodex, manifest: `{"name": "@scope/x"}`, want: []string{"name", `"@scope/x"`}},
		{name: "missing name", kind: KindClaude, manifest: `{"description": "x"}`, want: []string{"name", "required"}},
		{name: "name not a string", kind: KindClaude, manifest: `{"name": 7}`, want: []string{"name", "must be a string"}},
		{name: "not an object", kind: KindClaude, manifest: `"x"`, want: []string{"JSON object"}},
		{name: "bad override", kind: KindClaude, manifest: `{"name": "ok"}`, opts: LoadOptions{Name: "a/b"}, want: []string{"--name", `"a/b"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(tc.kind, []byte(tc.manifest), t.TempDir(), tc.opts)
			wantError(t, err, tc.want...)
		})
	}
	// An override rescues a manifest whose own name Reasonix cannot use
	// (Claude Code accepts it).
	p, err := Parse(KindClaude, []byte(`{"name": "a/b"}`), t.TempDir(), LoadOptions{Name: "mine"})
	if err != nil || p.Name != "mine" {
		t.Errorf("override: %v %+v", err, p)
	}
}
