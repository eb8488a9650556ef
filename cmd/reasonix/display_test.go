package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

// runIn runs the CLI in-process (Main.Run) with REASONIX_HOME=home and no
// route to the internet.
func runIn(t *testing.T, home string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{
		"REASONIX_HOME":           home,
		"REASONIX_GITHUB_URL":     "http://127.0.0.1:1",
		"REASONIX_GITHUB_API_URL": "http://127.0.0.1:1/api/v3",
	}
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	code := m.Run(context.Background(), args)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func TestTermEscape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       string
		collapse bool
		max      int
		want     string
	}{
		{"plain", "hello world", false, 0, "hello world"},
		{"csi", "a\x1b[8mhidden\x1b[0m", false, 0, `a\x1b[8mhidden\x1b[0m`},
		{"osc link", "\x1b]8;;http://evil\x07click\x1b]8;;\x07", false, 0, `\x1b]8;;http://evil\x07click\x1b]8;;\x07`},
		{"c1 csi", "x\u009b31m", false, 0, `x\u009b31m`},
		{"bidi", "abc\u202eexe.txt \u2066x\u2069 \u200f\u061c", false, 0, `abc\u202eexe.txt \u2066x\u2069 \u200f\u061c`},
		{"newlines kept visible", "a\nb\r\tc", false, 0, `a\nb\r\tc`},
		{"newlines collapsed", "  First line.\n\n  Second\tline. \u2028Third ", true, 0, "First line. Second line. Third"},
		{"invalid utf-8", "a\xffb", false, 0, `a\xffb`},
		{"del and nul", "a\x7fb\x00", false, 0, `a\x7fb\x00`},
		{"unicode kept", "日本語 — ok ✓", false, 0, "日本語 — ok ✓"},
		{"cut", "abcdefghij", false, 6, "abcde…"},
		{"fits exactly", "abcdef", false, 6, "abcdef"},
		{"cut never splits an escape", "abc\x1b[8m", false, 6, "abc…"},
		{"cut counts runes", "ääääääää", false, 5, "ääää…"},
	}
	for _, tc := range tests {
		if got := termEscape(tc.in, tc.collapse, tc.max); got != tc.want {
			t.Errorf("%s: termEscape(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// hostile holds the characters a plugin's metadata must not send raw to a
// terminal.
var hostile = []string{"\x1b", "\x07", "\u009b", "\u202e", "\u2066", "\u200f"}

// TestTextOutputIsTerminalSafe installs a plugin whose metadata is full of
// terminal escapes and bidi controls: every text command prints them as
// visible escapes, one row per item; JSON keeps them as they are.
func TestTextOutputIsTerminalSafe(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	desc := "Line one \x1b[8mhidden\x1b[0m and \x1b]8;;http://evil.example\x07a link\x1b]8;;\x07.\nSecond line \u202eexe.txt\n\nThird \u009b31m line"
	manifest, _ := json.Marshal(map[string]any{"name": "escapes", "version": "1.0.0\x1b[2J", "description": desc})
	src := writeFiles(t, filepath.Join(t.TempDir(), "escapes"), map[string]string{
		".claude-plugin/plugin.json": string(manifest),
		"skills/hello/SKILL.md":      "---\nname: hello\ndescription: \"Say \\e[8mhi\\u202e \\x07 there\"\n---\nHello.\n",
		"commands/wave.md":           "---\ndescription: \"Wave \\e]0;pwned\\a at people\"\nargument-hint: \"<who>\\e[8m\"\n---\nWave at $1\n",
		"hooks/hooks.json":           `{"hooks":{"Stop":[{"matcher":"\u001b[8m","hooks":[{"type":"command","command":"echo \u001b[31mred\u202e\nrm -rf x"}]}]}}`,
	})
	if r := runIn(t, home, "plugin", "install", src, "--yes"); r.code != 0 {
		t.Fatalf("install: %d %s %s", r.code, r.stdout, r.stderr)
	}

	show := runIn(t, home, "plugin", "show", "escapes")
	if show.code != 0 {
		t.Fatalf("show: %d %s %s", show.code, show.stdout, show.stderr)
	}
	for _, args := range [][]string{
		{"plugin", "show", "escapes"}, {"plugin", "list"}, {"plugin", "doctor", "escapes"}, {"doctor", "capabilities"},
	} {
		r := runIn(t, home, args...)
		if r.code != 0 {
			t.Fatalf("%v: %d %s %s", args, r.code, r.stdout, r.stderr)
		}
		for _, h := range hostile {
			if strings.Contains(r.stdout+r.stderr, h) {
				t.Errorf("%v prints %q raw:\n%s", args, h, r.stdout)
			}
		}
	}
	for _, want := range []string{
		// One row, cut at maxCell characters (escapes count as they print).
		`description:   Line one \x1b[8mhidden\x1b[0m and \x1b]8;;http://evil.example\x07a link\x1b]8;;\x07. Second line \u202eexe.txt Third …`,
		`version:       1.0.0\x1b[2J`,
		`/escapes:hello                   Say \x1b[8mhi\u202e \x07 there`,
		`/escapes:wave                    <who>\x1b[8m Wave \x1b]0;pwned\x07 at people`,
		`Stop             \x1b[8m      echo \x1b[31mred\u202e\nrm -rf x`,
	} {
		if !strings.Contains(show.stdout, want+"\n") {
			t.Errorf("show lacks the line %q:\n%s", want, show.stdout)
		}
	}

	// JSON is unchanged: the same strings come back.
	r := runIn(t, home, "plugin", "show", "escapes", "--json")
	var info struct {
		Description string
		Version     string
		Hooks       []struct{ Command string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &info); err != nil {
		t.Fatalf("show --json: %v\n%s", err, r.stdout)
	}
	if info.Description != desc || info.Version != "1.0.0\x1b[2J" || len(info.Hooks) != 1 || info.Hooks[0].Command != "echo \x1b[31mred\u202e\nrm -rf x" {
		t.Errorf("show --json changed the plugin's strings: %+v", info)
	}
}

// TestLongDescriptionsKeepColumns checks a long multi-line description is
// cut to one row of bounded width.
func TestLongDescriptionsKeepColumns(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	long := strings.Repeat("word ", 100) + "\nnext paragraph"
	src := writeFiles(t, filepath.Join(t.TempDir(), "long"), map[string]string{
		".claude-plugin/plugin.json": `{"name":"long","version":"1.0.0"}`,
		"skills/a/SKILL.md":          "---\nname: a\ndescription: |\n  " + strings.ReplaceAll(long, "\n", "\n  ") + "\n---\nA.\n",
	})
	if r := runIn(t, home, "plugin", "install", src, "--yes"); r.code != 0 {
		t.Fatalf("install: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r := runIn(t, home, "plugin", "show", "long")
	var row string
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, "/long:a") {
			row = line
		}
	}
	if !strings.HasSuffix(row, "…") || len([]rune(row)) > 2+32+1+maxCell || strings.Contains(r.stdout, "next paragraph") {
		t.Errorf("skill row not cut to one bounded line: %q", row)
	}
}

var fixtureSecrets = []string{
	"abc123hooksecret", "tokhooksecret", "sk-ant-api03-hooksecretvalue0123456789", "hunter2hooksecret",
	"argsecret-literal-1", "mcpargsecret9", "dbpass9secret", "urlsecret9", "envsecret9value", "headersecret9",
}

// TestSecretsNeverShown installs the plugin whose hooks and MCP servers hold
// literal credentials and checks every surface: the plan JSON, show (text
// and JSON), list (text and JSON), and the exported zip, whose files
// reference only variables export lists.
func TestSecretsNeverShown(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	src := filepath.Join(t.TempDir(), "secret-hooks")
	if err := os.CopyFS(src, os.DirFS(filepath.Join("..", "..", "manifest", "testdata", "claude-secrets"))); err != nil {
		t.Fatal(err)
	}
	noSecret := func(what, text string) {
		t.Helper()
		for _, s := range fixtureSecrets {
			if strings.Contains(text, s) {
				t.Errorf("%s shows %q", what, s)
			}
		}
	}
	plan := runIn(t, home, "plugin", "install", src, "--dry-run")
	if plan.code != 0 {
		t.Fatalf("plan: %d %s %s", plan.code, plan.stdout, plan.stderr)
	}
	noSecret("plan", plan.stdout+plan.stderr)
	if !strings.Contains(plan.stdout, `Authorization: Bearer ***`) || !strings.Contains(plan.stdout, `--password ***`) {
		t.Errorf("plan does not show the masked hook commands:\n%s", plan.stdout)
	}
	if r := runIn(t, home, "plugin", "install", src, "--yes"); r.code != 0 {
		t.Fatalf("install: %d %s %s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"plugin", "show", "secret-hooks"}, {"plugin", "show", "secret-hooks", "--json"},
		{"plugin", "list"}, {"plugin", "list", "--json"}, {"doctor", "capabilities", "--json"},
	} {
		r := runIn(t, home, args...)
		if r.code != 0 {
			t.Fatalf("%v: %d %s %s", args, r.code, r.stdout, r.stderr)
		}
		noSecret(strings.Join(args, " "), r.stdout+r.stderr)
	}

	zipPath := filepath.Join(t.TempDir(), "out.zip")
	r := runIn(t, home, "plugin", "export", "secret-hooks", "-o", zipPath, "--json")
	if r.code != 0 {
		t.Fatalf("export: %d %s %s", r.code, r.stdout, r.stderr)
	}
	var exp struct {
		Export struct{ RequiredEnv []string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &exp); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	refs := regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	seen := map[string]bool{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		noSecret("exported "+f.Name, string(data))
		for _, m := range refs.FindAllStringSubmatch(string(data), -1) {
			if m[1] == "CLAUDE_PLUGIN_ROOT" {
				continue
			}
			seen[m[1]] = true
			if !slices.Contains(exp.Export.RequiredEnv, m[1]) {
				t.Errorf("exported %s references %s, which export does not list in %q", f.Name, m[0], exp.Export.RequiredEnv)
			}
		}
	}
	for _, v := range []string{"HOOK_AUTH_TOKEN", "HOOK_TOKEN", "ANTHROPIC_API_KEY", "HOOK_PASSWORD", "HOOK_API_KEY", "DB_PASSWORD", "DB_URL_CREDENTIALS", "API_ACCESS_TOKEN"} {
		if !seen[v] {
			t.Errorf("the export does not reference ${%s}", v)
		}
	}
}

// TestErrorsAreMaskedAndEscaped checks the paths that print errors: a
// refused source's JSON response, fail, and a usage error.
func TestErrorsAreMaskedAndEscaped(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	r := runIn(t, home, "plugin", "install", "https://user:pw9secret@github.com/a/b?access_token=qq9secret", "--dry-run")
	if r.code != 1 {
		t.Fatalf("code %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if v := r.json(t); v["errorCode"] != "install.invalid_source" {
		t.Errorf("response: %v", v)
	}
	if strings.Contains(r.stdout+r.stderr, "pw9secret") || strings.Contains(r.stdout+r.stderr, "qq9secret") {
		t.Errorf("refusal repeats the credentials:\n%s%s", r.stdout, r.stderr)
	}

	var buf bytes.Buffer
	_ = fail(&buf, plugind.Errorf(plugind.CodeNotFound, "fetch https://u:p4ss@h/x: \x1b[8mgone\u202e"))
	if got, want := buf.String(), "reasonix: fetch https://***@h/x: \\x1b[8mgone\\u202e [install.not_found]\n"; got != want {
		t.Errorf("fail printed %q, want %q", got, want)
	}
	buf.Reset()
	_ = fail(&buf, errors.New("multi\nline"))
	if got := buf.String(); got != "reasonix: multi\\nline\n" {
		t.Errorf("fail printed %q", got)
	}

	r = runIn(t, home, "plugin", "install", "x", "--bogus\x1b[8m=https://a:b9secret@h")
	if r.code != 2 || strings.Contains(r.stderr, "\x1b") || strings.Contains(r.stderr, "b9secret") {
		t.Errorf("usage error: %d %q", r.code, r.stderr)
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
