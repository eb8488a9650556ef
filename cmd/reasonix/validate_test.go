package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// writeTree writes files (slash paths) under a new temporary folder.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

type validateOut struct {
	OK     bool `json:"ok"`
	Target struct {
		Kind, Mode, Path, Commit string
	} `json:"target"`
	Errors   []findingOut `json:"errors"`
	Warnings []findingOut `json:"warnings"`
	Checked  []struct {
		Kind, Entry, Name, File, Note string
	} `json:"checked"`
}

type findingOut struct {
	Entry, File, Path, Message string
}

func (v validateOut) has(list []findingOut, entry, file, path string) bool {
	for _, f := range list {
		if f.Entry == entry && f.File == file && f.Path == path {
			return true
		}
	}
	return false
}

func validateJSON(t *testing.T, r result) validateOut {
	t.Helper()
	var v validateOut
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("stdout is not JSON (%v): %s\nstderr: %s", err, r.stdout, r.stderr)
	}
	return v
}

const (
	goodSkill  = "---\ndescription: Does A\n---\nBody\n"
	goodPlugin = `{"name": "a", "version": "1.0.0", "description": "A", "author": {"name": "Ann"}}`
)

// TestValidateCommand drives `plugin validate` in-process on files and
// folders: verdicts, exit status, field paths, JSON shape.
func TestValidateCommand(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	market := writeTree(t, map[string]string{
		".claude-plugin/marketplace.json": `{"name": "m", "description": "d", "owner": {"name": "o"}, "plugins": [
			{"name": "a", "source": "./plugins/a"},
			{"name": "b", "source": "./plugins/b", "version": "9.9.9"},
			{"name": "r", "source": {"source": "github", "repo": "acme/r", "sha": "0123456789abcdef0123456789abcdef01234567"}}]}`,
		"plugins/a/.claude-plugin/plugin.json": goodPlugin,
		"plugins/a/skills/s/SKILL.md":          goodSkill,
		"plugins/b/.claude-plugin/plugin.json": `{"name": "b", "version": "1.0.0", "description": "B", "author": {"name": "Ann"}, "commands": "commands"}`,
		"plugins/b/commands/c.md":              goodSkill,
	})
	plugin := writeTree(t, map[string]string{
		".claude-plugin/plugin.json": `{"name": "kit", "version": "1.0.0", "description": "d", "author": {"name": "a"}, "agents": ["./agents"], "tier": "gold"}`,
		"agents/helper.md":           goodSkill,
	})
	tests := []struct {
		name     string
		args     []string
		code     int
		kind     string
		mode     string
		errors   [][3]string // entry, file, path
		warnings [][3]string
	}{
		{name: "plugin.json file", args: []string{filepath.Join(plugin, ".claude-plugin", "plugin.json")}, code: 1, kind: "plugin", mode: "file",
			errors: [][3]string{{"", "", "agents[0]"}}, warnings: [][3]string{{"", "", "tier"}}},
		{name: "plugin folder", args: []string{plugin}, code: 1, kind: "plugin", mode: "folder",
			errors: [][3]string{{"", ".claude-plugin/plugin.json", "agents[0]"}}},
		{name: "marketplace file", args: []string{filepath.Join(market, ".claude-plugin", "marketplace.json")}, code: 1, kind: "marketplace", mode: "file",
			errors:   [][3]string{{"plugins[1]", "../plugins/b/.claude-plugin/plugin.json", "commands"}},
			warnings: [][3]string{{"plugins[1]", "", "plugins[1].version"}}},
		{name: "marketplace folder", args: []string{market}, code: 1, kind: "marketplace", mode: "folder",
			errors: [][3]string{{"plugins[1]", "plugins/b/.claude-plugin/plugin.json", "commands"}}},
		{name: "valid plugin folder", args: []string{filepath.Join(market, "plugins", "a")}, code: 0, kind: "plugin", mode: "folder"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, home, nil, append([]string{"plugin", "validate", "--json"}, tc.args...)...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d: %s %s", r.code, tc.code, r.stdout, r.stderr)
			}
			v := validateJSON(t, r)
			if v.OK != (tc.code == 0) || v.Target.Kind != tc.kind || v.Target.Mode != tc.mode {
				t.Errorf("ok %v target %+v", v.OK, v.Target)
			}
			for _, e := range tc.errors {
				if !v.has(v.Errors, e[0], e[1], e[2]) {
					t.Errorf("no error %q in %+v", e, v.Errors)
				}
			}
			for _, w := range tc.warnings {
				if !v.has(v.Warnings, w[0], w[1], w[2]) {
					t.Errorf("no warning %q in %+v", w, v.Warnings)
				}
			}
			text := run(t, home, nil, append([]string{"plugin", "validate"}, tc.args...)...)
			if text.code != tc.code {
				t.Errorf("text exit %d", text.code)
			}
			verdict := "✓ Validation passed"
			if tc.code != 0 {
				verdict = "✗ Validation failed"
			}
			if !strings.Contains(text.stdout, verdict) {
				t.Errorf("text output lacks %q:\n%s", verdict, text.stdout)
			}
			for _, e := range tc.errors {
				if !strings.Contains(text.stdout, e[2]+": ") {
					t.Errorf("text output does not name %q:\n%s", e[2], text.stdout)
				}
			}
		})
	}

	// A local marketplace's remote entries are listed, not fetched.
	v := validateJSON(t, run(t, home, nil, "plugin", "validate", "--json", market))
	notes := map[string]string{}
	for _, c := range v.Checked {
		notes[c.Entry+"/"+c.Kind] = c.Note
	}
	if !strings.Contains(notes["plugins[2]/entry"], "not fetched") || notes["plugins[0]/plugin"] != "" {
		t.Errorf("checked: %+v", v.Checked)
	}
}

// TestValidateUsageAndMisses: exit 2 on usage errors, 1 with a message for
// a path that is not there or a source validate cannot take.
func TestValidateUsageAndMisses(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	if r := run(t, home, nil, "plugin", "validate"); r.code != 2 {
		t.Errorf("no argument: exit %d", r.code)
	}
	missing := filepath.Join(t.TempDir(), "nope", "plugin.json")
	r := run(t, home, nil, "plugin", "validate", missing)
	if r.code != 1 || !strings.Contains(r.stderr, "no such file or folder") {
		t.Errorf("missing file: exit %d stderr %q", r.code, r.stderr)
	}
	r = run(t, home, nil, "plugin", "validate", "--json", "tool@market")
	if v := validateJSON(t, r); r.code != 1 || v.OK || len(v.Errors) != 1 || !strings.Contains(v.Errors[0].Message, "known marketplace") {
		t.Errorf("NAME@MARKET: exit %d %s", r.code, r.stdout)
	}
	empty := t.TempDir()
	r = run(t, home, nil, "plugin", "validate", "--json", empty)
	if v := validateJSON(t, r); r.code != 1 || !strings.Contains(v.Errors[0].Message, "no plugin manifest") {
		t.Errorf("empty folder: exit %d %s", r.code, r.stdout)
	}
}

// TestValidateTerminalSafety: text output escapes what a document says;
// JSON keeps it as written.
func TestValidateTerminalSafety(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		".claude-plugin/plugin.json": `{"name": "kit", "version": "1", "description": "d", "author": {"name": "a"}, "x\u001b[2Jy": 1, "homepage": "\u202eevil"}`,
	})
	r := run(t, t.TempDir(), nil, "plugin", "validate", dir)
	if r.code != 1 {
		t.Fatalf("exit %d: %s", r.code, r.stdout)
	}
	if strings.ContainsAny(r.stdout, "\x1b\u202e") || !strings.Contains(r.stdout, `\x1b[2J`) || !strings.Contains(r.stdout, `\u202e`) {
		t.Errorf("text output not escaped:\n%q", r.stdout)
	}
	v := validateJSON(t, run(t, t.TempDir(), nil, "plugin", "validate", "--json", dir))
	found := false
	for _, w := range v.Warnings {
		if w.Path == `["x`+"\x1b"+`[2Jy"]` {
			found = true
		}
	}
	if !found {
		t.Errorf("JSON does not keep the field as written: %+v", v.Warnings)
	}
}

// TestValidateRemoteSource validates a marketplace on the fake GitHub: the
// document and its relative entries come from the fetched tree, its remote
// entries are fetched too, and one that cannot be is a warning.
func TestValidateRemoteSource(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	tool := gh.CreateRepo("acme", "tool")
	toolSHA := tool.Commit("main", map[string]string{
		".claude-plugin/plugin.json": `{"name": "tool", "version": "1.0.0", "description": "T", "author": {"name": "a"}, "agents": ["./agents"]}`,
		"agents/x.md":                goodSkill,
	})
	market := gh.CreateRepo("acme", "market")
	marketSHA := market.Commit("main", map[string]string{
		".claude-plugin/marketplace.json": `{"name": "m", "description": "d", "owner": {"name": "o"}, "plugins": [
			{"name": "a", "source": "./plugins/a"},
			{"name": "tool", "source": {"source": "url", "url": "https://github.com/acme/tool.git", "sha": "` + toolSHA + `"}},
			{"name": "gone", "source": {"source": "github", "repo": "acme/gone", "sha": "` + toolSHA + `"}}]}`,
		"plugins/a/.claude-plugin/plugin.json": goodPlugin,
		"plugins/a/skills/s/SKILL.md":          goodSkill,
	})
	home := t.TempDir()
	r := run(t, home, gh.Env(), "plugin", "validate", "--json", "https://github.com/acme/market")
	if r.code != 1 {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	v := validateJSON(t, r)
	if v.Target.Kind != "marketplace" || v.Target.Mode != "source" || v.Target.Commit != marketSHA {
		t.Errorf("target %+v", v.Target)
	}
	if len(v.Errors) != 1 || v.Errors[0].Entry != "plugins[1]" || v.Errors[0].File != ".claude-plugin/plugin.json" || v.Errors[0].Path != "agents[0]" {
		t.Errorf("errors %+v", v.Errors)
	}
	if !v.has(v.Warnings, "plugins[2]", "", "plugins[2].source") {
		t.Errorf("the unreachable entry is not a warning: %+v", v.Warnings)
	}
	kinds := map[string]bool{}
	for _, c := range v.Checked {
		kinds[c.Entry+"/"+c.Kind] = true
	}
	if !kinds["plugins[0]/plugin"] || !kinds["plugins[1]/plugin"] || !kinds["plugins[2]/entry"] || kinds["plugins[2]/plugin"] {
		t.Errorf("checked %+v", v.Checked)
	}
	// A single plugin source.
	r = run(t, home, gh.Env(), "plugin", "validate", "--json", "https://github.com/acme/tool")
	if v := validateJSON(t, r); r.code != 1 || v.Target.Kind != "plugin" || !v.has(v.Errors, "", ".claude-plugin/plugin.json", "agents[0]") {
		t.Errorf("single plugin: exit %d %s", r.code, r.stdout)
	}
}

// TestInstallRefusesWhatValidateCalls drives install --dry-run over the
// validate fixtures: what validate calls an error in a plugin manifest or
// a marketplace entry is refused by the install path, naming the field.
// The exceptions are pinned too, each with its reason.
func TestInstallRefusesWhatValidateCalls(t *testing.T) {
	t.Parallel()
	fixture := func(kind, name string) string {
		return filepath.Join("..", "..", kind, "testdata", "validate", name)
	}
	refused := []struct{ dir, field string }{
		{fixture("manifest", "hooks-json-bare-events"), "Hook load failed"},
		{fixture("marketplace", "no-owner"), "owner: required"},
		{fixture("manifest", "agents-directory"), "agents[0]"},
		{fixture("manifest", "null-optional-field"), "version"},
		{fixture("manifest", "declared-path-missing"), "commands"},
		{fixture("manifest", "hooks-unknown-event"), "hooks.OnSave"},
		{fixture("manifest", "mcp-url-without-type"), "mcpServers.remote"},
		{fixture("manifest", "skills-entry-is-file"), "skills[0]"},
		{fixture("marketplace", "entry-agents-directory"), "plugins[0].agents[0]"},
		{fixture("marketplace", "strict-null"), "plugins[0].strict"},
		{fixture("marketplace", "entry-version-number"), "plugins[0].version"},
		{fixture("marketplace", "entry-plugin-json-invalid"), "commands"},
	}
	for _, tc := range refused {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			if v := run(t, home, nil, "plugin", "validate", tc.dir); v.code != 1 {
				t.Fatalf("validate exit %d: %s", v.code, v.stdout)
			}
			r := run(t, home, nil, "plugin", "install", tc.dir, "--dry-run")
			if r.code != 1 || !strings.Contains(r.stdout, tc.field) || !strings.Contains(r.stdout, "reasonix plugin validate") && !strings.Contains(r.stdout, "Claude Code fails to load") {
				t.Errorf("install --dry-run: exit %d, want a refusal naming %q: %s", r.code, tc.field, r.stdout)
			}
		})
	}
	// Validate errors the install path deliberately accepts.
	accepted := []struct{ dir, why string }{
		{fixture("marketplace", "bare-source-under-plugin-root"), "SPEC §7 reads a bare source under metadata.pluginRoot; Claude Code does not"},
		{fixture("marketplace", "byte-order-mark"), "Reasonix reads a leading byte-order mark; Claude Code's parser cannot"},
		{fixture("manifest", "frontmatter-bad-yaml"), "content files are read leniently, as Claude Code's loader reads them"},
	}
	for _, tc := range accepted {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			if v := run(t, home, nil, "plugin", "validate", tc.dir); v.code != 1 {
				t.Fatalf("validate exit %d: %s", v.code, v.stdout)
			}
			if r := run(t, home, nil, "plugin", "install", tc.dir, "--dry-run"); r.code != 0 {
				t.Errorf("install --dry-run exit %d (%s): %s", r.code, tc.why, r.stdout)
			}
		})
	}
}
