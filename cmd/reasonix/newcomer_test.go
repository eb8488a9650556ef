package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"reasonix.io/plugind/internal/fakegithub"
)

// The newcomer's issue (15): every mistake a new user makes in the first
// hour is answered with what to do next, through the real binary — exit
// code, stream and message.

// TestMistakesAreAnswered: typos at every level, aliases, plan ids, source
// forms people type from habit, version and help.
func TestMistakesAreAnswered(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	src := writePlugin(t, filepath.Join(t.TempDir(), "p"), "1.0.0")
	tests := []struct {
		name   string
		args   []string
		code   int
		stream string // "stdout" or "stderr": where the message is
		says   []string
	}{
		{"typo below the top", []string{"plugin", "lsit"}, 2, "stderr", []string{`unknown command "lsit" for "reasonix plugin"`, `did you mean "list"?`}},
		{"typo two levels down", []string{"cache", "stat"}, 2, "stderr", []string{`did you mean "stats"?`}},
		{"typo with the subcommand's flags", []string{"plugin", "isntall", "X", "--dry-run"}, 2, "stderr", []string{`did you mean "install"?`}},
		{"typo at the top", []string{"plugni", "list"}, 2, "stderr", []string{`did you mean "plugin"?`}},
		{"typo at the top before a flag", []string{"plugni", "--dry-run"}, 2, "stderr", []string{`did you mean "plugin"?`}},
		{"typo three levels down", []string{"mirror", "token", "crate"}, 2, "stderr", []string{`did you mean "create"?`}},
		{"no such word at all", []string{"plugin", "zzzzzz"}, 2, "stderr", []string{"run 'reasonix plugin --help'"}},
		{"a group alone shows its help", []string{"plugin"}, 0, "stdout", []string{"Available Commands", "install"}},
		{"ls", []string{"plugin", "ls"}, 0, "stdout", []string{"No plugins installed."}},
		{"rm", []string{"plugin", "rm", "ghost", "--yes"}, 1, "stdout", []string{`plugin \"ghost\" is not installed`}},
		{"-y", []string{"plugin", "install", src, "-y", "--json"}, 0, "stdout", []string{`"status": "applied"`}},
		{"malformed plan id", []string{"plugin", "install", src, "--yes", "--plan-id", "low:sha256:12"}, 2, "stderr", []string{`plan id "low:sha256:12" is malformed`, "32 hex digits"}},
		{"empty plan id (an unset variable)", []string{"plugin", "install", src, "--yes", "--plan-id", ""}, 2, "stderr", []string{`plan id is empty`, "32 hex digits"}},
		{"plan id never made", []string{"plugin", "install", src, "--yes", "--replace", "--plan-id", "low:sha256:0123456789abcdef0123456789abcdef"}, 1, "stdout", []string{"no plan low:sha256:0123456789abcdef0123456789abcdef was made here", "install.approval_denied"}},
		{"o/r", []string{"plugin", "install", "acme/tools", "--dry-run"}, 1, "stdout", []string{"did you mean git:github.com/acme/tools?"}},
		{"github.com/o/r", []string{"plugin", "install", "github.com/acme/tools", "--dry-run"}, 1, "stdout", []string{"did you mean git:github.com/acme/tools?"}},
		{"scp form with a ref on github.com", []string{"plugin", "install", "git@github.com:acme/tools.git#v1", "--dry-run"}, 1, "stdout", []string{"name a ref with https://github.com/OWNER/REPO/tree/REF", "install.invalid_source"}},
		{"gh:o/r", []string{"plugin", "install", "gh:acme/tools", "--dry-run"}, 1, "stdout", []string{"did you mean git:github.com/acme/tools?"}},
		{"empty source", []string{"plugin", "install", "", "--dry-run"}, 1, "stdout", []string{"empty source", "install.invalid_source"}},
		{"blank source", []string{"plugin", "install", "  ", "--dry-run"}, 1, "stdout", []string{"empty source", "install.invalid_source"}},
		{"version", []string{"version"}, 0, "stdout", []string{"reasonix ", "go1."}},
		{"--version", []string{"--version"}, 0, "stdout", []string{"reasonix ", "go1."}},
		{"--json where JSON is printed anyway", []string{"plugin", "install", src, "--dry-run", "--json"}, 0, "stdout", []string{`"status": "up-to-date"`}},
		{"--json on version", []string{"version", "--json"}, 0, "stdout", []string{`"version": "reasonix `}},
		{"help environment", []string{"help", "environment"}, 0, "stdout", []string{"REASONIX_HOME", "REASONIX_OFFLINE", "REASONIX_GIT", "REASONIX_GITHUB_URL", "REASONIX_GITHUB_API_URL",
			"GITHUB_TOKEN", "GH_TOKEN", "REASONIX_URL_REWRITE", "REASONIX_MIRROR", "REASONIX_MIRROR_TOKEN", "REASONIX_MIRROR_ONLY", "REASONIX_CHECKSUM_LOG", "REASONIX_CORPUS"}},
	}
	// Sequential: the -y row installs what the later rows find installed.
	for _, tt := range tests {
		r := runBinary(t, home, nil, tt.args...)
		out := map[string]string{"stdout": r.stdout, "stderr": r.stderr}[tt.stream]
		if r.code != tt.code {
			t.Errorf("%s: reasonix %q exit %d, want %d\nstdout: %s\nstderr: %s", tt.name, tt.args, r.code, tt.code, r.stdout, r.stderr)
			continue
		}
		for _, want := range tt.says {
			if !strings.Contains(out, want) {
				t.Errorf("%s: reasonix %q: %s does not say %q:\n%s", tt.name, tt.args, tt.stream, want, out)
			}
		}
	}
}

// TestEveryCommandHasExamples: 2–4 examples in every command's help.
func TestEveryCommandHasExamples(t *testing.T) {
	t.Parallel()
	m := &Main{Getenv: func(string) string { return "" }}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "environment" {
				continue
			}
			n := 0
			for _, line := range strings.Split(sub.Example, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "reasonix ") || strings.Contains(line, "$(") || strings.HasPrefix(strings.TrimSpace(line), "source ") {
					n++
				}
			}
			if n < 1 || strings.Count(sub.Example, "\n")+1 > 4 || (n < 2 && sub.HasSubCommands()) {
				t.Errorf("%s has %d example lines:\n%s", sub.CommandPath(), n, sub.Example)
			}
			walk(sub)
		}
	}
	walk(m.rootCommand())
}

// TestIdempotentInstallFromTheBinary: installing exactly what is installed
// is up to date (exit 0, nothing written); other content under the same
// name is a conflict.
func TestIdempotentInstallFromTheBinary(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	src := writePlugin(t, filepath.Join(t.TempDir(), "p"), "1.0.0")
	if r := runBinary(t, home, nil, "plugin", "install", src, "--yes"); r.code != 0 {
		t.Fatalf("install: %d %s", r.code, r.stdout)
	}
	before := readFile(t, filepath.Join(home, "plugin-packages.json"))
	again := runBinary(t, home, nil, "plugin", "install", src, "--yes")
	if again.code != 0 || again.json(t)["status"] != "up-to-date" || again.json(t)["applied"] != false {
		t.Fatalf("installing what is installed: exit %d\n%s", again.code, again.stdout)
	}
	if after := readFile(t, filepath.Join(home, "plugin-packages.json")); after != before {
		t.Fatal("an up-to-date install wrote the registry")
	}
	other := writePlugin(t, filepath.Join(t.TempDir(), "p"), "2.0.0")
	if r := runBinary(t, home, nil, "plugin", "install", other, "--yes"); r.code != 1 || r.json(t)["errorCode"] != "install.conflict" {
		t.Fatalf("other content under the same name: %d %s", r.code, r.stdout)
	}
}

// TestPlanIDMismatchSaysWhatChanged: a well-formed planId of an earlier
// plan is refused naming what differs — never blaming a source that did
// not change.
func TestPlanIDMismatchSaysWhatChanged(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	src := writePlugin(t, filepath.Join(t.TempDir(), "p"), "1.0.0")
	plan := runBinary(t, home, nil, "plugin", "install", src, "--dry-run").json(t)["planId"].(string)
	// Another option: the source did not change, the command did.
	r := runBinary(t, home, nil, "plugin", "install", src, "--yes", "--replace", "--plan-id", plan)
	if r.code != 1 || !strings.Contains(r.stdout, "it was made without --replace") || strings.Contains(r.stdout, "moved") {
		t.Fatalf("another option: %d %s", r.code, r.stdout)
	}
	// The content changed.
	writeFile(t, filepath.Join(src, "skills/s/SKILL.md"), "---\ndescription: edited\n---\n")
	r = runBinary(t, home, nil, "plugin", "install", src, "--yes", "--plan-id", plan)
	if r.code != 1 || !strings.Contains(r.stdout, "crashy's content changed") {
		t.Fatalf("changed content: %d %s", r.code, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(home, "plugin-packages.json")); err == nil {
		t.Fatal("a refused install wrote the registry")
	}
}

// TestCompletion goes through cobra's __complete entry point with an
// installed home: plugin names (enabled ones for disable, disabled ones
// for enable), known marketplaces, NAME@MARKET from their cached documents.
func TestCompletion(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	market := writeFiles(t, filepath.Join(t.TempDir(), "market"), map[string]string{
		".claude-plugin/marketplace.json":  `{"name":"acme","owner":{"name":"a"},"plugins":[{"name":"alpha","source":"./alpha"},{"name":"beta","source":"./beta"}]}`,
		"alpha/.claude-plugin/plugin.json": `{"name":"alpha","description":"The first"}`,
		"alpha/skills/s/SKILL.md":          "---\ndescription: s\n---\n",
		"beta/.claude-plugin/plugin.json":  `{"name":"beta"}`,
		"beta/skills/s/SKILL.md":           "---\ndescription: s\n---\n",
	})
	if r := runBinary(t, home, nil, "plugin", "install", market, "--yes"); r.code != 0 {
		t.Fatalf("install: %d %s", r.code, r.stdout)
	}
	if r := runBinary(t, home, nil, "plugin", "disable", "beta"); r.code != 0 {
		t.Fatalf("disable: %d %s", r.code, r.stderr)
	}
	complete := func(args ...string) []string {
		t.Helper()
		r := runBinary(t, home, nil, append([]string{"__complete"}, args...)...)
		if r.code != 0 {
			t.Fatalf("__complete %q: %d %s", args, r.code, r.stderr)
		}
		var words []string
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			if strings.HasPrefix(line, ":") {
				continue // the directive
			}
			w, _, _ := strings.Cut(line, "\t")
			words = append(words, w)
		}
		return words
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"plugin", "show", ""}, "alpha beta"},
		{[]string{"plugin", "show", "al"}, "alpha"},
		{[]string{"plugin", "remove", ""}, "alpha beta"},
		{[]string{"plugin", "doctor", ""}, "alpha beta"},
		{[]string{"plugin", "export", ""}, "alpha beta"},
		{[]string{"plugin", "disable", ""}, "alpha"},
		{[]string{"plugin", "enable", ""}, "beta"},
		{[]string{"plugin", "update", ""}, "alpha beta"},
		{[]string{"plugin", "update", "alpha", ""}, "beta"},
		{[]string{"plugin", "update", "--all", "--marketplace", ""}, "acme"},
		{[]string{"marketplace", "update", ""}, "acme"},
		{[]string{"marketplace", "remove", ""}, "acme"},
		{[]string{"plugin", "install", ""}, "alpha@acme beta@acme"},
		{[]string{"plugin", "install", "b"}, "beta@acme"},
		{[]string{"plugin", "lis"}, "list"},
	} {
		if got := strings.Join(complete(tt.args...), " "); got != tt.want {
			t.Errorf("__complete %q = %q, want %q", tt.args, got, tt.want)
		}
	}
	bash := runBinary(t, home, nil, "completion", "bash")
	if bash.code != 0 || !strings.Contains(bash.stdout, "complete -o default -F __start_reasonix ./reasonix") {
		t.Fatalf("completion bash does not complete ./reasonix: %d", bash.code)
	}
	// Loaded without bash-completion, the script says what is missing
	// (cobra's functions would fail at Tab time with "command not found").
	if _, err := exec.LookPath("bash"); err == nil {
		sh := exec.Command("bash", "--norc", "--noprofile", "-c", bash.stdout)
		out, err := sh.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "load bash-completion first") {
			t.Errorf("bash without bash-completion: %v, %q", err, out)
		}
	}
}

// TestTextOutputStreams: list shows 12-hex commits, no full SHA, and its
// warnings go to stderr; export refuses to overwrite without --force.
func TestTextOutputStreams(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	sha := gh.CreateRepo("acme", "tools").Commit("main", pluginTree("tools"))
	home := t.TempDir()
	if r := runBinary(t, home, gh.Env(), "plugin", "install", "https://github.com/acme/tools", "--yes"); r.code != 0 {
		t.Fatalf("install: %d %s", r.code, r.stdout)
	}
	list := runBinary(t, home, nil, "plugin", "list")
	if !strings.Contains(list.stdout, sha[:12]) || strings.Contains(list.stdout, sha) {
		t.Fatalf("list should show %s, never all of %s:\n%s", sha[:12], sha, list.stdout)
	}
	// A broken root: the table on stdout, the warning on stderr.
	reg := readRegistry(t, home)
	must(t, os.RemoveAll(reg.Plugins[0].Root))
	list = runBinary(t, home, nil, "plugin", "list")
	if strings.Contains(list.stdout, "warning") || !strings.Contains(list.stderr, "warning: tools is excluded") {
		t.Fatalf("warnings belong on stderr:\nstdout: %s\nstderr: %s", list.stdout, list.stderr)
	}
	must(t, os.MkdirAll(filepath.Dir(reg.Plugins[0].Root), 0o755))
	if r := runBinary(t, home, gh.Env(), "plugin", "install", "https://github.com/acme/tools", "--yes", "--replace"); r.code != 0 {
		t.Fatalf("repair: %d %s", r.code, r.stdout)
	}

	out := filepath.Join(t.TempDir(), "tools.zip")
	writeFile(t, out, "mine")
	r := runBinary(t, home, nil, "plugin", "export", "tools", "-o", out)
	if r.code != 1 || !strings.Contains(r.stderr, "already exists: pass --force") || readFile(t, out) != "mine" {
		t.Fatalf("export over a file: %d %s", r.code, r.stderr)
	}
	if r := runBinary(t, home, nil, "plugin", "export", "tools", "-o", out, "--force"); r.code != 0 || readFile(t, out) == "mine" {
		t.Fatalf("export --force: %d %s", r.code, r.stderr)
	}
}

// TestFullTrustBanner: a plan holding a runtime names the command on
// stderr, planned and applied; stdout stays the JSON.
func TestFullTrustBanner(t *testing.T) {
	t.Parallel()
	src := writeFiles(t, filepath.Join(t.TempDir(), "side"), map[string]string{
		"reasonix-plugin.json": `{"apiVersion":"reasonix.io/plugin/v2","name":"side","version":"1.0.0","contributes":{"skills":["skills"]},` +
			`"runtime":{"command":"${REASONIX_PLUGIN_ROOT}/bin/sidecar","args":["--serve"],"capabilities":["tools"],` +
			`"tools":[{"name":"look","description":"Look","readOnly":true,"inputSchema":{"type":"object"}}]}}`,
		"skills/s/SKILL.md": "---\ndescription: s\n---\n",
		"bin/sidecar":       "#!/bin/sh\nexit 0\n",
	})
	home := t.TempDir()
	dry := runBinary(t, home, nil, "plugin", "install", src, "--dry-run")
	if !strings.Contains(dry.stderr, "!! FULL TRUST: side would run ${REASONIX_PLUGIN_ROOT}/bin/sidecar --serve outside the sandbox") {
		t.Fatalf("no banner on the plan:\n%s", dry.stderr)
	}
	if !json.Valid([]byte(dry.stdout)) {
		t.Fatal("stdout is not the JSON alone")
	}
	yes := runBinary(t, home, nil, "plugin", "install", src, "--yes")
	if yes.code != 0 || !strings.Contains(yes.stderr, "!! FULL TRUST: side runs ${REASONIX_PLUGIN_ROOT}/bin/sidecar --serve") {
		t.Fatalf("no banner on the install: %d\n%s", yes.code, yes.stderr)
	}
}

// TestInterruptedIsCancelled: Ctrl-C while a plan waits on the network
// ends with install.cancelled and exit 130, nothing written.
func TestInterruptedIsCancelled(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "slow").Commit("main", pluginTree("slow"))
	gh.Fault(fakegithub.PathPrefix("/acme/slow.git/"), fakegithub.Fault{Stall: 30 * time.Second})
	home := t.TempDir()
	cmd := exec.Command(binPath, "plugin", "install", "https://github.com/acme/slow", "--yes")
	cmd.Env = append(append(os.Environ(), "REASONIX_HOME="+home), gh.Env()...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	must(t, cmd.Start())
	deadline := time.Now().Add(20 * time.Second)
	for gh.InFlight() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	must(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}
	var resp map[string]any
	must(t, json.Unmarshal(out.Bytes(), &resp))
	if resp["errorCode"] != "install.cancelled" {
		t.Fatalf("interrupted: %v", resp)
	}
	if _, err := os.Stat(filepath.Join(home, "plugin-packages.json")); err == nil {
		t.Fatal("an interrupted install wrote the registry")
	}
}

// TestServeOnABusyPort says so, and what to do.
func TestServeOnABusyPort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	r := runBinary(t, t.TempDir(), nil, "serve", "--addr", ln.Addr().String())
	if r.code != 1 || !strings.Contains(r.stderr, ln.Addr().String()+" is busy") || !strings.Contains(r.stderr, "--addr 127.0.0.1:0") {
		t.Fatalf("busy port: %d\n%s", r.code, r.stderr)
	}
}

// TestRetriesAreQuiet: a request that fails once and then succeeds prints
// nothing on stderr by default; -v shows the retry at debug level.
func TestRetriesAreQuiet(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "flaky").Commit("main", pluginTree("flaky"))
	env := append(gh.Env(), "REASONIX_GIT=off") // archives: HTTP, retried
	gh.Fault(fakegithub.PathPrefix("/api/v3/repos/acme/flaky/"), fakegithub.Fault{Status: 503, Times: 1})
	r := runBinary(t, t.TempDir(), env, "plugin", "install", "https://github.com/acme/flaky", "--dry-run")
	if r.code != 0 || strings.Contains(r.stderr, "level=") {
		t.Fatalf("a retry that succeeded: exit %d\n%s", r.code, r.stderr)
	}
	gh.Fault(fakegithub.PathPrefix("/api/v3/repos/acme/flaky/"), fakegithub.Fault{Status: 503, Times: 1})
	v := runBinary(t, t.TempDir(), env, "-v", "plugin", "install", "https://github.com/acme/flaky", "--dry-run")
	if v.code != 0 || !regexp.MustCompile(`level=DEBUG .*(retry|retrying)`).MatchString(v.stderr) {
		t.Fatalf("-v does not show the retry: exit %d\n%s", v.code, v.stderr)
	}
}
