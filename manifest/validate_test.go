package manifest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// validateExpect is a fixture's expect.json. claude, claudeErrors and
// claudeWarnings were measured: `claude plugin validate DIR` of Claude
// Code 2.1.197 on the fixture. reasonix (with why) is set only where this
// product's verdict differs on purpose; errors and warnings are JSON paths
// Reasonix must report.
type validateExpect struct {
	Claude         string   `json:"claude"`
	ClaudeErrors   []string `json:"claudeErrors"`
	ClaudeWarnings []string `json:"claudeWarnings"`
	Reasonix       string   `json:"reasonix"`
	Why            string   `json:"why"`
	Errors         []string `json:"errors"`
	Warnings       []string `json:"warnings"`
}

// ReadValidateExpect reads dir/expect.json.
func readValidateExpect(t *testing.T, dir string) validateExpect {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e validateExpect
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatalf("%s/expect.json: %v", dir, err)
	}
	if e.Claude != "ok" && e.Claude != "error" {
		t.Fatalf("%s/expect.json: claude verdict %q", dir, e.Claude)
	}
	if e.Reasonix != "" && e.Why == "" {
		t.Fatalf("%s/expect.json: a verdict that differs from Claude Code's needs a why", dir)
	}
	return e
}

func verdict(r Report) string {
	if r.OK() {
		return "ok"
	}
	return "error"
}

func hasPath(fs []Finding, p string) bool {
	for _, f := range fs {
		if f.Path == p {
			return true
		}
	}
	return false
}

var claudeIndex = regexp.MustCompile(`\.(\d+)(\.|$)`)

// coveredBy reports whether a path Claude Code reported an error at is
// one Reasonix reports too, at the same field or one inside it (Claude
// names a failing union by its field: "agents" for "agents[0]").
func coveredBy(claudePath string, fs []Finding) bool {
	switch claudePath {
	case "json", "root", "directory", "file":
		claudePath = ""
	}
	for {
		next := claudeIndex.ReplaceAllString(claudePath, "[$1]$2")
		if next == claudePath {
			break
		}
		claudePath = next
	}
	for _, f := range fs {
		if f.Path == claudePath || claudePath == "" ||
			strings.HasPrefix(f.Path, claudePath+".") || strings.HasPrefix(f.Path, claudePath+"[") {
			return true
		}
	}
	return false
}

// TestValidateFixtures runs every plugin fixture under testdata/validate:
// the verdict must be Claude Code's measured one (unless the fixture says
// why not), every field Claude reported an error at must be reported, and
// the paths the fixture pins must be there.
func TestValidateFixtures(t *testing.T) {
	t.Parallel()
	dirs, err := os.ReadDir(filepath.Join("testdata", "validate"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 40 {
		t.Fatalf("only %d fixtures", len(dirs))
	}
	for _, d := range dirs {
		dir := filepath.Join("testdata", "validate", d.Name())
		t.Run(d.Name(), func(t *testing.T) {
			t.Parallel()
			want := readValidateExpect(t, dir)
			r := ValidatePluginDir(dir, ValidateOptions{})
			wantVerdict := want.Claude
			if want.Reasonix != "" {
				wantVerdict = want.Reasonix
			}
			if got := verdict(r); got != wantVerdict {
				t.Errorf("verdict %s, want %s; errors %+v", got, wantVerdict, r.Errors)
			}
			if want.Reasonix == "" {
				for _, cp := range want.ClaudeErrors {
					if !coveredBy(cp, r.Errors) {
						t.Errorf("Claude Code reports an error at %q; Reasonix does not: %+v", cp, r.Errors)
					}
				}
			}
			for _, p := range want.Errors {
				if !hasPath(r.Errors, p) {
					t.Errorf("no error at %q: %+v", p, r.Errors)
				}
			}
			for _, p := range want.Warnings {
				if !hasPath(r.Warnings, p) {
					t.Errorf("no warning at %q: %+v", p, r.Warnings)
				}
			}
			for _, f := range append(append([]Finding{}, r.Errors...), r.Warnings...) {
				if f.Message == "" {
					t.Errorf("finding without a message: %+v", f)
				}
			}
		})
	}
}

// TestCheckClaudeManifest pins rules one document at a time, without a
// folder (no path is looked up).
func TestCheckClaudeManifest(t *testing.T) {
	t.Parallel()
	const head = `"name": "kit", "version": "1.0.0", "description": "d", "author": {"name": "a"}`
	tests := []struct {
		name     string
		members  string // after head
		errors   []string
		warnings []string
		message  string // in the first error
	}{
		{name: "minimal", members: ``},
		{name: "every path form", members: `, "commands": ["./c.md", "./cmds"], "agents": ["./a.md"], "skills": "./skills", "outputStyles": ["./styles"], "themes": "./themes", "workflows": ["./w"]`,
			warnings: []string{"themes"}},
		{name: "agents directory", members: `, "agents": ["./agents"]`, errors: []string{"agents[0]"}, message: ".md"},
		{name: "agents bare", members: `, "agents": "agents/x.md"`, errors: []string{"agents"}, message: `start with "./"`},
		{name: "commands absolute", members: `, "commands": ["/etc/passwd"]`, errors: []string{"commands[0]"}},
		{name: "commands number", members: `, "commands": 3`, errors: []string{"commands"}},
		{name: "command object needs one of source or content", members: `, "commands": {"a": {"description": "x"}}`, errors: []string{"commands.a"}},
		{name: "command allowedTools", members: `, "commands": {"a": {"content": "x", "allowedTools": "Bash"}}`, errors: []string{"commands.a.allowedTools"}},
		{name: "hooks array of path and object", members: `, "hooks": ["./h.json", {"Stop": [{"hooks": [{"type": "prompt", "prompt": "p"}]}]}]`},
		{name: "hook type unknown", members: `, "hooks": {"Stop": [{"hooks": [{"type": "script", "command": "x"}]}]}`, errors: []string{"hooks.Stop[0].hooks[0].type"}},
		{name: "hook matcher without hooks", members: `, "hooks": {"Stop": [{"matcher": "x"}]}`, errors: []string{"hooks.Stop[0].hooks"}},
		{name: "hook shell", members: `, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "shell": "zsh"}]}]}`, errors: []string{"hooks.Stop[0].hooks[0].shell"}},
		{name: "mcp tool hook", members: `, "hooks": {"Stop": [{"hooks": [{"type": "mcp_tool", "server": "s"}]}]}`, errors: []string{"hooks.Stop[0].hooks[0].tool"}},
		{name: "mcp stdio empty command", members: `, "mcpServers": {"s": {"command": ""}}`, errors: []string{"mcpServers.s.command"}},
		{name: "mcp timeout must be a positive integer", members: `, "mcpServers": {"s": {"command": "x", "timeout": 1.5}}`, errors: []string{"mcpServers.s.timeout"}},
		{name: "mcp oauth https", members: `, "mcpServers": {"s": {"type": "http", "url": "https://x", "oauth": {"authServerMetadataUrl": "http://x/meta"}}}`, errors: []string{"mcpServers.s.oauth.authServerMetadataUrl"}},
		{name: "mcp sdk needs name", members: `, "mcpServers": {"s": {"type": "sdk"}}`, errors: []string{"mcpServers.s.name"}},
		{name: "mcp path must be json", members: `, "mcpServers": "./servers.yaml"`, errors: []string{"mcpServers"}},
		{name: "mcp bundle url", members: `, "mcpServers": "https://example.com/s.mcpb"`},
		{name: "lsp command with spaces", members: `, "lspServers": {"go": {"command": "go pls", "extensionToLanguage": {".go": "go"}}}`, errors: []string{"lspServers.go.command"}},
		{name: "lsp empty extension map", members: `, "lspServers": {"go": {"command": "gopls", "extensionToLanguage": {}}}`, errors: []string{"lspServers.go.extensionToLanguage"}},
		{name: "lsp maxRestarts negative", members: `, "lspServers": {"go": {"command": "gopls", "extensionToLanguage": {".go": "go"}, "maxRestarts": -1}}`, errors: []string{"lspServers.go.maxRestarts"}},
		{name: "monitors duplicate names", members: `, "experimental": {"monitors": [{"name": "m", "command": "a", "description": "d"}, {"name": "m", "command": "b", "description": "d"}]}`, errors: []string{"experimental.monitors[1].name"}},
		{name: "monitor when", members: `, "experimental": {"monitors": [{"name": "m", "command": "a", "description": "d", "when": "on-skill-invoke:"}]}`, errors: []string{"experimental.monitors[0].when"}},
		{name: "experimental unknown component", members: `, "experimental": {"widgets": []}`, warnings: []string{"experimental.widgets"}},
		{name: "dependencies forms", members: `, "dependencies": ["a", "b@m", "c@m@^1.0", {"name": "d", "marketplace": "m", "version": "1"}]`},
		{name: "dependency object bad name", members: `, "dependencies": [{"name": "a b"}]`, errors: []string{"dependencies[0].name"}},
		{name: "dependencies not array", members: `, "dependencies": "a"`, errors: []string{"dependencies"}},
		{name: "keywords not strings", members: `, "keywords": ["a", 1]`, errors: []string{"keywords[1]"}},
		{name: "defaultEnabled", members: `, "defaultEnabled": "yes"`, errors: []string{"defaultEnabled"}},
		{name: "userConfig option", members: `, "userConfig": {"K": {"type": "list", "title": "t", "description": "d", "default": {}}}`, errors: []string{"userConfig.K.type", "userConfig.K.default"}},
		{name: "userConfig option missing title", members: `, "userConfig": {"K": {"type": "string", "description": "d"}}`, errors: []string{"userConfig.K.title"}},
		{name: "channels", members: `, "channels": [{"server": ""}]`, errors: []string{"channels[0].server"}},
		{name: "binaries too many", members: `, "binaries": {` + manyBinaries(17) + `}`, warnings: []string{"binaries"}},
		{name: "unknown field typo", members: `, "skils": "./skills"`, warnings: []string{"skils"}, message: ""},
		{name: "entry-only field", members: `, "strict": false`, warnings: []string{"strict"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := CheckClaudeManifest([]byte("{"+head+tc.members+"}"), "")
			if len(r.Errors) != len(tc.errors) {
				t.Errorf("errors %+v, want at %q", r.Errors, tc.errors)
			}
			for _, p := range tc.errors {
				if !hasPath(r.Errors, p) {
					t.Errorf("no error at %q: %+v", p, r.Errors)
				}
			}
			for _, p := range tc.warnings {
				if !hasPath(r.Warnings, p) {
					t.Errorf("no warning at %q: %+v", p, r.Warnings)
				}
			}
			if tc.message != "" && (len(r.Errors) == 0 || !strings.Contains(r.Errors[0].Message, tc.message)) {
				t.Errorf("first error %+v does not say %q", r.Errors, tc.message)
			}
		})
	}
}

func manyBinaries(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = `"tool` + strings.Repeat("x", i) + `": {"sha256": "` + strings.Repeat("a", 64) + `"}`
	}
	return strings.Join(parts, ", ")
}

// TestUnknownFieldAdvice: a near miss names the field meant; a marketplace
// field says where it belongs.
func TestUnknownFieldAdvice(t *testing.T) {
	t.Parallel()
	r := CheckClaudeManifest([]byte(`{"name": "k", "skils": "./s", "category": "x", "zzzzzzzz": 1}`), "")
	msgs := map[string]string{}
	for _, w := range r.Warnings {
		msgs[w.Path] = w.Message
	}
	if !strings.Contains(msgs["skils"], `did you mean "skills"`) {
		t.Errorf("skils: %q", msgs["skils"])
	}
	if !strings.Contains(msgs["category"], "marketplace entry") {
		t.Errorf("category: %q", msgs["category"])
	}
	if strings.Contains(msgs["zzzzzzzz"], "did you mean") {
		t.Errorf("zzzzzzzz: %q", msgs["zzzzzzzz"])
	}
	// Advice about missing metadata comes only on a manifest that parses.
	r = CheckClaudeManifest([]byte(`{"name": "k"}`), "")
	if !hasPath(r.Warnings, "version") || !hasPath(r.Warnings, "description") || !hasPath(r.Warnings, "author") {
		t.Errorf("no metadata advice: %+v", r.Warnings)
	}
	r = CheckClaudeManifest([]byte(`{"name": 1}`), "")
	if hasPath(r.Warnings, "version") {
		t.Errorf("advice on a manifest with errors: %+v", r.Warnings)
	}
}

// TestCheckFrontMatter pins the front-matter rules Claude applies.
func TestCheckFrontMatter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		errors     []string
		warnings   []string
	}{
		{name: "fine", text: "---\ndescription: d\nallowed-tools: [Read, Grep]\nshell: Bash\n---\nbody"},
		{name: "crlf", text: "---\r\ndescription: d\r\n---\r\nbody"},
		{name: "none", text: "body", warnings: []string{"frontmatter"}},
		{name: "no description", text: "---\nname: x\n---\n", warnings: []string{"description"}},
		{name: "numeric description", text: "---\ndescription: 42\n---\n"},
		{name: "description mapping", text: "---\ndescription: {a: b}\n---\n", errors: []string{"description"}},
		{name: "name number", text: "---\ndescription: d\nname: 3\n---\n", errors: []string{"name"}},
		{name: "allowed-tools mixed", text: "---\ndescription: d\nallowed-tools: [Read, 3]\n---\n", errors: []string{"allowed-tools"}},
		{name: "allowed-tools mapping", text: "---\ndescription: d\nallowed-tools: {a: 1}\n---\n", errors: []string{"allowed-tools"}},
		{name: "scalar", text: "---\njust text\n---\n", errors: []string{"frontmatter"}},
		{name: "list", text: "---\n- a\n---\n", errors: []string{"frontmatter"}},
		{name: "duplicate key", text: "---\ndescription: a\ndescription: b\n---\n"},
		{name: "alias", text: "---\nx: &d text\ndescription: *d\n---\n"},
		{name: "tab indent", text: "---\ndescription: d\n\tname: x\n---\n", errors: []string{"frontmatter"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := checkFrontMatter(tc.text, "skill")
			if len(r.Errors) != len(tc.errors) {
				t.Errorf("errors %+v, want at %q", r.Errors, tc.errors)
			}
			for _, p := range tc.errors {
				if !hasPath(r.Errors, p) {
					t.Errorf("no error at %q: %+v", p, r.Errors)
				}
			}
			if len(r.Warnings) != len(tc.warnings) {
				t.Errorf("warnings %+v, want at %q", r.Warnings, tc.warnings)
			}
		})
	}
}

// TestReportMergeAndSummary: merged findings keep their entry and are
// placed under the folder given; the summary is bounded.
func TestReportMergeAndSummary(t *testing.T) {
	t.Parallel()
	var inner Report
	inner.Errorf("agents[0]", "bad")
	inner.Errors[0].File = ClaudeManifest
	inner.Warnf("", "w")
	inner.Checked = []Checked{{Kind: "manifest", File: ClaudeManifest}}
	var outer Report
	outer.Merge(inner, "plugins[2]", "plugins/x")
	if e := outer.Errors[0]; e.Entry != "plugins[2]" || e.File != "plugins/x/.claude-plugin/plugin.json" || e.Path != "agents[0]" {
		t.Errorf("merged error %+v", e)
	}
	if w := outer.Warnings[0]; w.File != "plugins/x" {
		t.Errorf("merged warning %+v", w)
	}
	if c := outer.Checked[0]; c.Entry != "plugins[2]" || c.File != "plugins/x/.claude-plugin/plugin.json" {
		t.Errorf("merged checked %+v", c)
	}
	var many Report
	for i := range 5 {
		many.Errorf("f", "e%d", i)
	}
	if s := many.Summary(2); s != "f: e0; f: e1; and 3 more (run: reasonix plugin validate)" {
		t.Errorf("summary %q", s)
	}
	many.Demote("why")
	if len(many.Errors) != 0 || len(many.Warnings) != 5 || !strings.HasSuffix(many.Warnings[0].Message, "(why)") {
		t.Errorf("demoted %+v", many)
	}
}
