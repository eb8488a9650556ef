package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/manifest"
)

func TestWriteReview(t *testing.T) {
	t.Parallel()
	notPinnable := func(name string, i int) error {
		return plugind.Errorf(plugind.CodeNotPinnable, "marketplace entry %q (plugins[%d]): npm sources are not supported", name, i)
	}
	resp := &installer.Response{
		OK: true, Status: installer.StatusPlanned, PlanID: "high:sha256:0123456789abcdef0123456789abcdef",
		Source:   "https://github.com/acme/market",
		Resolved: &installer.Resolved{Kind: "marketplace", Repo: "github.com/acme/market", Ref: "main", Commit: "fce67da29501d3f9375784addb22c2fab9ca2ac8"},
		Actions: []installer.Action{
			{Name: "alpha", Action: installer.ActionInstall, Status: installer.ActionReady, Commit: "fce67da29501d3f9375784addb22c2fab9ca2ac8", Risk: installer.RiskMedium,
				Inventory: installer.Inventory{
					Skills:     []manifest.Skill{{Name: "greet"}, {Name: "wave"}},
					Commands:   []manifest.Command{{Name: "c"}},
					Hooks:      []manifest.Hook{{Event: "PreToolUse", Command: "guard.sh"}},
					MCPServers: []manifest.MCPServer{{Name: "weather"}},
				}},
			{Name: "beta", Action: installer.ActionReplace, Status: installer.ActionReady, Commit: "aaaabbbbccccddddeeeeffff0000111122223333", PreviousCommit: "9999888877776666555544443333222211110000", Risk: installer.RiskHigh,
				Inventory: installer.Inventory{Runtime: &manifest.Runtime{
					Command: "${REASONIX_PLUGIN_ROOT}/bin/sidecar", Args: []string{"--serve", "\x1b]8;;http://evil\x07x"},
					Env:          map[string]string{"TOKEN": "***"},
					Capabilities: []string{"tools"},
					Tools:        []manifest.RuntimeTool{{Name: "lookup", ModelName: "ext__beta__lookup", Description: "Look\nthings up", ReadOnly: true}},
					FullTrust:    true, Warning: "FULL TRUST: this plugin runs sidecar outside the sandbox.",
				}}},
			{Name: "npm-one", Action: installer.ActionSkip, Status: installer.ActionSkipped, Err: notPinnable("npm-one", 2)},
			{Name: "npm-two", Action: installer.ActionSkip, Status: installer.ActionSkipped, Err: notPinnable("npm-two", 3)},
			{Name: "evil\u202e", Action: installer.ActionSkip, Status: installer.ActionBlocked,
				Err: plugind.Errorf(plugind.CodeBlocked, "manifest says \x1b[8mhidden\x1b[0m")},
		},
		Warnings: []string{"skipped npm-one: marketplace entry \"npm-one\": npm sources are not supported", "the marketplace names no owner"},
	}
	var b bytes.Buffer
	writeReview(&b, resp, approveCommand("https://github.com/acme/market", installer.Request{Replace: true}, resp.PlanID))
	out := b.String()
	t.Log("\n" + out)

	for _, want := range []string{
		"Review of https://github.com/acme/market\n",
		"resolved: marketplace, github.com/acme/market, at main, commit fce67da29501\n",
		"plan: high:sha256:0123456789abcdef0123456789abcdef\n",
		"2 plugins to install:",
		"!! FULL TRUST runtime in beta: ${REASONIX_PLUGIN_ROOT}/bin/sidecar --serve \\x1b]8;;http://evil\\x07x\n",
		"   FULL TRUST: this plugin runs sidecar outside the sandbox.\n",
		"   env: TOKEN=***\n",
		"   capabilities: tools; intercepts: none; replaces: none\n",
		"   tool ext__beta__lookup (read-only): Look things up\n",
		"\nskipped (2):\n  npm sources are not supported [install.not_pinnable]: npm-one, npm-two\n",
		"\nblocked (1):\n  manifest says \\x1b[8mhidden\\x1b[0m [install.blocked]: evil\\u202e\n",
		"warnings:\n  the marketplace names no owner\n",
		"To install exactly this plan:\n  reasonix plugin install https://github.com/acme/market --replace --yes --plan-id high:sha256:0123456789abcdef0123456789abcdef\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("review lacks %q", want)
		}
	}
	// One line per plugin to install, with its counts in order.
	lines := map[string][]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = f
		}
	}
	if got := strings.Join(lines["alpha"], " "); got != "alpha fce67da29501 medium 2 1 0 1 1" {
		t.Errorf("alpha's line: %q", got)
	}
	if got := strings.Join(lines["beta"], " "); got != "beta (replaces 999988887777) aaaabbbbcccc high FULL TRUST 0 0 0 0 0" {
		t.Errorf("beta's line: %q", got)
	}
	if strings.Contains(out, "skipped npm-one:") {
		t.Error("a warning repeats a skipped entry")
	}
	if strings.ContainsAny(out, "\x1b\x07\u202e") {
		t.Error("the review holds a raw escape or bidi character")
	}

	// A plan that cannot be installed says why, and offers no command.
	b.Reset()
	refused := &installer.Response{OK: false, Status: installer.StatusRefused, Source: "/x", Actions: resp.Actions[2:4],
		Err: plugind.Errorf(plugind.CodeBlocked, "none of the 2 plugins in /x can be installed")}
	writeReview(&b, refused, approveCommand("/x", installer.Request{}, "p"))
	if !strings.Contains(b.String(), "This plan cannot be installed: none of the 2 plugins") || strings.Contains(b.String(), "--yes") {
		t.Errorf("refused review:\n%s", b.String())
	}
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://github.com/acme/x/tree/main/p": "https://github.com/acme/x/tree/main/p",
		"/tmp/my plugins":                       "'/tmp/my plugins'",
		"it's":                                  `'it'\''s'`,
		"a;rm -rf ~":                            "'a;rm -rf ~'",
		"$(x)":                                  "'$(x)'",
		"":                                      "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

// runReview runs the CLI in-process with stderr taken for a terminal
// (or not).
func runReview(t *testing.T, home string, terminal bool, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{
		"REASONIX_HOME":           home,
		"REASONIX_GITHUB_URL":     "http://127.0.0.1:1",
		"REASONIX_GITHUB_API_URL": "http://127.0.0.1:1/api/v3",
	}
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] },
		terminal: func(io.Writer) bool { return terminal }}
	code := m.Run(context.Background(), args)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// TestDryRunReviewOnATerminal: the review goes to stderr only when it is a
// terminal, stdout is the same JSON either way, and the command the review
// prints installs exactly the reviewed plan.
func TestDryRunReviewOnATerminal(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	// A folder name that needs quoting in a shell.
	market := copyDir(t, filepath.Join("..", "..", "examples"), filepath.Join(t.TempDir(), "examples(copy)"))

	plain := runReview(t, home, false, "plugin", "install", market, "--dry-run")
	review := runReview(t, home, true, "plugin", "install", market, "--dry-run")
	if plain.code != 0 || review.code != 0 {
		t.Fatalf("dry runs: %d %d %s %s", plain.code, review.code, plain.stderr, review.stderr)
	}
	if plain.stdout != review.stdout {
		t.Fatalf("stdout differs with a terminal:\n%s\n---\n%s", plain.stdout, review.stdout)
	}
	if strings.Contains(review.stderr, "warnings:") {
		t.Errorf("a warnings heading with nothing under it:\n%s", review.stderr)
	}
	if strings.Contains(plain.stderr, "Review of") {
		t.Fatalf("a review went to a stderr that is no terminal: %s", plain.stderr)
	}
	planID, _ := plain.json(t)["planId"].(string)
	for _, want := range []string{"Review of " + market, "2 plugins to install:", "hello-claude", "hello-native",
		"skipped (1):\n  npm sources are not supported", "To install exactly this plan:\n  reasonix plugin install '" + market + "' --yes --plan-id " + planID + "\n"} {
		if !strings.Contains(review.stderr, want) {
			t.Errorf("review lacks %q:\n%s", want, review.stderr)
		}
	}

	// The printed command, run by a shell, installs exactly that plan.
	i := strings.LastIndex(review.stderr, "  reasonix plugin install ")
	command := strings.TrimSpace(review.stderr[i:])
	sh := exec.Command("sh", "-c", binPath+strings.TrimPrefix(command, "reasonix"))
	sh.Env = append(os.Environ(), "REASONIX_HOME="+home)
	out, err := sh.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("approve command %q: %v\n%s\n%s", command, err, out, ee.Stderr)
	} else if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"applied": true`)) || !bytes.Contains(out, []byte(`"planId": "`+planID+`"`)) {
		t.Fatalf("approve command output: %s", out)
	}
}
