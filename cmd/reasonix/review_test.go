package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/muesli/termenv"
	"github.com/spf13/cobra"

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
				Submodules: []plugind.Submodule{{Path: "vendor/lib", URL: "https://github.com/acme/lib\x1b[2J", Commit: "1234567890abcdef1234567890abcdef12345678"}},
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
	writeReviewTo(&b, resp, shown{approve: approveWith(approveOf(t, resp.PlanID, "install", "https://github.com/acme/market", "--replace", "--dry-run"))})
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
		"\nsubmodules in alpha (their files are part of it):\n  vendor/lib  https://github.com/acme/lib\\x1b[2J at 1234567890ab\n",
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
	if got := strings.Join(lines["alpha"], " "); got != "alpha fce67da29501 medium 2 skills, 1 command, 1 hook, 1 MCP server" {
		t.Errorf("alpha's line: %q", got)
	}
	if got := strings.Join(lines["beta"], " "); got != "beta (replaces 999988887777) aaaabbbbcccc high FULL TRUST runtime" {
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
	writeReviewTo(&b, refused, shown{approve: approveWith(approveOf(t, "p", "install", "/x", "--dry-run"))})
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
		terminal: func(io.Writer) bool { return terminal }, columns: 10000}
	code := m.Run(context.Background(), args)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// TestDryRunReviewOnATerminal: the review goes to stderr only when it is a
// terminal, stdout is the same JSON either way, and the command the review
// prints installs exactly the reviewed plan.
func TestDryRunReviewOnATerminal(t *testing.T) {
	t.Parallel()
	// A home reasonix creates (private from the start): t.TempDir's
	// folders are 0755, and the first command would say it tightened it.
	home := filepath.Join(t.TempDir(), "home")
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
	command := strings.TrimSpace(strings.SplitN(review.stderr[i:], "\n\n", 2)[0]) // the result line follows
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

func TestWriteUpdateReview(t *testing.T) {
	t.Parallel()
	const (
		oldSHA = "fce67da29501d3f9375784addb22c2fab9ca2ac8"
		newSHA = "0012b77fedc8be2a0e868445861c8bf60a65d3bb"
	)
	resp := &installer.Response{
		OK: true, Status: installer.StatusPlanned, PlanID: "high:sha256:00112233445566778899aabbccddeeff", Source: "update --all --marketplace acme",
		Actions: []installer.Action{
			{Name: "alpha", Action: installer.ActionReplace, Status: installer.ActionReady, Commit: newSHA, PreviousCommit: oldSHA, Version: "1.1.0", Risk: installer.RiskHigh,
				Previous: &installer.Previous{Commit: oldSHA, Version: "1.0.0", Risk: installer.RiskMedium},
				Diff: &installer.Diff{
					Added:   []installer.Change{{Kind: installer.ChangeHook, Name: "SessionStart", Detail: "phone-home.sh"}},
					Summary: []string{"adds hook SessionStart → ${CLAUDE_PLUGIN_ROOT}/scripts/phone-home.sh \x1b]8;;http://evil\x07x"},
				},
				Inventory: installer.Inventory{Hooks: []manifest.Hook{{Event: "PreToolUse"}, {Event: "SessionStart"}}, MCPServers: []manifest.MCPServer{{Name: "weather"}}},
				Warnings:  []string{"moves from fce67da29501 to 0012b77fedc8"}},
			{Name: "delta", Action: installer.ActionReplace, Status: installer.ActionReady, Commit: newSHA, Risk: installer.RiskLow,
				Previous: &installer.Previous{Commit: oldSHA, Version: "2.0.0", Risk: installer.RiskLow}, Version: "2.0.0", Diff: &installer.Diff{}},
			{Name: "gamma", Action: installer.ActionKeep, Status: installer.ActionUpToDate, Commit: oldSHA, Warnings: []string{}},
			{Name: "gone", Action: installer.ActionKeep, Status: installer.ActionUpToDate, Commit: oldSHA,
				Warnings: []string{"marketplace acme no longer lists gone; the installed copy (fce67da29501) stays"}},
			{Name: "broken", Action: installer.ActionSkip, Status: installer.ActionBlocked, Err: plugind.Errorf(plugind.CodeBlocked, "update broken: no manifest")},
		},
		Warnings: []string{},
	}
	var b bytes.Buffer
	writeReviewTo(&b, resp, shown{cmd: cmdUpdate, approve: approveWith(approveOf(t, resp.PlanID, "update", "--all", "--marketplace", "acme", "--offline", "--dry-run"))})
	out := b.String()
	t.Log("\n" + out)
	for _, want := range []string{
		"Review of update --all --marketplace acme\n",
		"2 plugins to update:",
		"\nalpha (1.0.0 → 1.1.0) changes:\n  adds hook SessionStart → ${CLAUDE_PLUGIN_ROOT}/scripts/phone-home.sh \\x1b]8;;http://evil\\x07x\n",
		"\ndelta: what it contributes stays the same\n",
		"\nup to date (2): gamma, gone\n  gone: marketplace acme no longer lists gone; the installed copy (fce67da29501) stays\n",
		"\nblocked (1):\n  update broken: no manifest [install.blocked]: broken\n",
		"To apply exactly this plan:\n  reasonix plugin update --all --marketplace acme --offline --yes --plan-id high:sha256:00112233445566778899aabbccddeeff\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("review lacks %q", want)
		}
	}
	// One table row per move, its counts in order.
	row := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  alpha ") {
			row = strings.Join(strings.Fields(l), " ")
		}
	}
	if row != "alpha fce67da29501 0012b77fedc8 high (was medium) 2 hooks, 1 MCP server" {
		t.Errorf("alpha's row: %q", row)
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Error("the review holds a raw escape")
	}

	// Up to date: said plainly, with no command to run.
	b.Reset()
	upToDate := &installer.Response{OK: true, Status: installer.StatusUpToDate, PlanID: "low:sha256:0", Source: "update gamma", Actions: resp.Actions[2:3]}
	writeReviewTo(&b, upToDate, shown{cmd: cmdUpdate, approve: approveWith(approveOf(t, upToDate.PlanID, "update", "gamma", "--dry-run"))})
	if got := b.String(); !strings.Contains(got, "up to date (1): gamma\n") || !strings.Contains(got, "Everything is up to date: there is nothing to apply.") || strings.Contains(got, "--yes") {
		t.Errorf("up-to-date review:\n%s", got)
	}

	// Refused before any plan: the reason, no command.
	b.Reset()
	refused := installer.ErrorResponse("", plugind.Errorf(plugind.CodeNotFound, "plugin \"nope\" is not installed"))
	writeReviewTo(&b, refused, shown{cmd: cmdUpdate, approve: approveWith(approveOf(t, "", "update", "nope", "--dry-run"))})
	if got := b.String(); !strings.Contains(got, "\nReview\n") || !strings.Contains(got, "This plan cannot be applied: plugin \"nope\" is not installed") || strings.Contains(got, "--yes") {
		t.Errorf("refused review:\n%s", got)
	}
}

func TestApproveUpdateCommand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"b", "a", "--dry-run"}, "reasonix plugin update b a --yes --plan-id P"},
		{[]string{"--refresh", "--all", "--allow-unpinned", "--dry-run"}, "reasonix plugin update --all --allow-unpinned --refresh --yes --plan-id P"},
		{[]string{"--offline", "--all", "--marketplace", "acme", "--dry-run"}, "reasonix plugin update --all --marketplace acme --offline --yes --plan-id P"},
	} {
		if got := shellJoin(approveOf(t, "P", append([]string{"update"}, c.args...)...)); got != c.want {
			t.Errorf("%q: %q, want %q", c.args, got, c.want)
		}
	}
}

// TestUpdateDryRunReviewOnATerminal: `plugin update --dry-run` reviews the
// update on a terminal (the move, the diff, what stays), stdout keeps the
// same JSON, and the printed command, run by a shell, applies exactly that
// planId; an up-to-date update says so and offers nothing to run.
func TestUpdateDryRunReviewOnATerminal(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	market := writeFiles(t, filepath.Join(t.TempDir(), "shelf"), map[string]string{
		".claude-plugin/marketplace.json": `{"name":"shelf","owner":{"name":"o"},"plugins":[{"name":"one","source":"./one"},{"name":"two","source":"./two"}]}`,
		"one/.claude-plugin/plugin.json":  `{"name":"one","version":"1.0.0"}`,
		"one/skills/s/SKILL.md":           "---\ndescription: one\n---\n",
		"two/.claude-plugin/plugin.json":  `{"name":"two","version":"1.0.0"}`,
		"two/skills/s/SKILL.md":           "---\ndescription: two\n---\n",
	})
	inst := runReview(t, home, false, "plugin", "install", market, "--yes")
	if inst.code != 0 {
		t.Fatalf("install: %d %s %s", inst.code, inst.stdout, inst.stderr)
	}
	installedDigest := actionsOf(t, inst)["one"]["contentDigest"].(string)
	writeFiles(t, filepath.Join(market, "one"), map[string]string{
		".claude-plugin/plugin.json": `{"name":"one","version":"1.1.0"}`,
		"hooks/hooks.json":           `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"echo hi"}]}]}}`,
	})

	args := []string{"plugin", "update", "--all", "--marketplace", "shelf", "--dry-run"}
	plain := runReview(t, home, false, args...)
	review := runReview(t, home, true, args...)
	if plain.code != 0 || review.code != 0 {
		t.Fatalf("dry runs: %d %d %s %s", plain.code, review.code, plain.stderr, review.stderr)
	}
	if plain.stdout != review.stdout {
		t.Fatalf("stdout differs with a terminal:\n%s\n---\n%s", plain.stdout, review.stdout)
	}
	if strings.Contains(plain.stderr, "Review of") {
		t.Fatalf("a review went to a stderr that is no terminal: %s", plain.stderr)
	}
	planID, _ := plain.json(t)["planId"].(string)
	digest := func(name string) string {
		for _, a := range plain.json(t)["actions"].([]any) {
			if a := a.(map[string]any); a["name"] == name {
				return a["contentDigest"].(string)
			}
		}
		return ""
	}
	row := fmt.Sprintf("  one   %s  %s  ", plugind.ShortDigest(installedDigest), plugind.ShortDigest(digest("one")))
	if !strings.Contains(review.stderr, row) {
		t.Errorf("the move of a plugin without commits shows no digests (%q):\n%s", row, review.stderr)
	}
	for _, want := range []string{"Review of update --all --marketplace shelf", "1 plugin to update:", "one (1.0.0 → 1.1.0) changes:\n  adds hook SessionStart → echo hi\n",
		"up to date (1): two\n", "To apply exactly this plan:\n  reasonix plugin update --all --marketplace shelf --yes --plan-id " + planID + "\n"} {
		if !strings.Contains(review.stderr, want) {
			t.Errorf("review lacks %q:\n%s", want, review.stderr)
		}
	}

	// The printed command, run by a shell, applies exactly that plan.
	i := strings.LastIndex(review.stderr, "  reasonix plugin update ")
	command := strings.TrimSpace(strings.SplitN(review.stderr[i:], "\n\n", 2)[0]) // the result line follows
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

	// Now it is up to date: the review says so, with nothing to run.
	again := runReview(t, home, true, "plugin", "update", "one", "--dry-run")
	if again.code != 0 || !strings.Contains(again.stderr, "up to date (1): one") || !strings.Contains(again.stderr, "Everything is up to date") || strings.Contains(again.stderr, "--plan-id") {
		t.Fatalf("up-to-date review: exit %d\n%s", again.code, again.stderr)
	}
}

// TestSuggestedCommandRunsTheSameBinary: a review's approve line starts
// with the name the user typed when pasting it back runs the same binary.
func TestSuggestedCommandRunsTheSameBinary(t *testing.T) {
	for _, c := range []struct{ argv0, want string }{
		{"reasonix", "reasonix"},
		{"./reasonix", "./reasonix"},
		{"bin/reasonix", "bin/reasonix"},
		{"/usr/local/bin/reasonix", "reasonix"},
		{"/tmp/go-build123/b001/exe/reasonix", "reasonix"},
	} {
		if got := progName(c.argv0); got != c.want {
			t.Errorf("progName(%q) = %q, want %q", c.argv0, got, c.want)
		}
	}
	got := shellJoin(approveArgs(progName("./reasonix"), parsed(t, "install", "./p", "--dry-run"), []string{"./p"}, nil, "P"))
	if want := "./reasonix plugin install ./p --yes --plan-id P"; got != want {
		t.Errorf("approve line %q, want %q", got, want)
	}
}

// TestListCounts: the CAPABILITIES column counts in words (one skill, two
// hooks), never "1 skills".
func TestListCounts(t *testing.T) {
	p := installer.PluginInfo{}
	if got := contributes(p.Inventory); got != "-" {
		t.Errorf("nothing: %q", got)
	}
	p.Skills = make([]manifest.Skill, 1)
	p.Hooks = make([]manifest.Hook, 2)
	p.MCPServers = make([]manifest.MCPServer, 1)
	if got, want := contributes(p.Inventory), "1 skill, 2 hooks, 1 MCP server"; got != want {
		t.Errorf("counts = %q, want %q", got, want)
	}
}

// writeReviewTo prints the review of resp as a console without colour or
// width would.
func writeReviewTo(w io.Writer, resp *installer.Response, sh shown) {
	plainConsole(w, 0).review(resp, sh)
}

// approveOf is the approve command of `reasonix plugin ARGS…`'s plan,
// planID, as its review prints it.
func approveOf(t *testing.T, planID string, args ...string) []string {
	cmd := parsed(t, args...)
	return approveArgs("reasonix", cmd, cmd.Flags().Args(), nil, planID)
}

// parsed is the plugin subcommand args name, its flags parsed from args.
func parsed(t *testing.T, args ...string) *cobra.Command {
	t.Helper()
	cmd, rest, err := (&Main{Getenv: func(string) string { return "" }}).rootCommand().Find(append([]string{"plugin"}, args...))
	if err == nil {
		err = cmd.ParseFlags(rest)
	}
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

// approveWith is a shown.approve that answers args for any plan.
func approveWith(args []string) func(*installer.Response) []string {
	return func(*installer.Response) []string { return args }
}

// plainConsole is a console of width columns (0: not a terminal) that
// writes no colour.
func plainConsole(w io.Writer, width int) *console {
	return &console{w: w, terminal: width > 0, width: width, out: termenv.NewOutput(w, termenv.WithProfile(termenv.Ascii))}
}
