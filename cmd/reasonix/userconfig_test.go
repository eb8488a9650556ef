package main

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"reasonix.io/plugind/internal/fakegithub"
)

const cliSecret = "s3cr3t-CLI-4d2a"

// userConfigRepo serves testdata/userconfig (a marketplace with one plugin
// that asks for options) from a fake GitHub.
func userConfigRepo(t *testing.T) (*fakegithub.Server, []string) {
	t.Helper()
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "ucm").Commit("main", treeFiles(t, filepath.Join("testdata", "userconfig")))
	return gh, gh.Env()
}

// leaksUnder lists the files under home, config/ aside, holding secret.
func leaksUnder(t *testing.T, home, secret string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == filepath.Join(home, "config") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte(secret)) {
				out = append(out, p)
			}
		}
		return nil
	})
	return out
}

func TestUserConfigFromTheBinary(t *testing.T) {
	t.Parallel()
	_, env := userConfigRepo(t)
	home := t.TempDir()
	src := "https://github.com/acme/ucm"

	// Nothing given: the plan lists the options and blocks on the required ones.
	dry := runBinary(t, home, env, "plugin", "install", src, "--name", "uc", "--dry-run")
	if dry.code != 1 {
		t.Fatalf("exit %d: %s %s", dry.code, dry.stdout, dry.stderr)
	}
	plan := dry.json(t)
	if plan["errorCode"] != "install.config_required" || !strings.Contains(plan["error"].(string), `option api_key ("API key")`) {
		t.Fatalf("plan: %s", dry.stdout)
	}
	opts := plan["actions"].([]any)[0].(map[string]any)["userConfig"].([]any)
	if len(opts) != 3 || opts[0].(map[string]any)["sensitive"] != true || opts[2].(map[string]any)["default"] != 8080.0 {
		t.Fatalf("options: %v", opts)
	}

	// Usage errors exit 2 and never quote what follows the =.
	for _, bad := range [][]string{{"--config", cliSecret}, {"--config", "1x=" + cliSecret}, {"--config", "api_key=a", "--config", "api_key=b"}} {
		r := runBinary(t, home, env, append([]string{"plugin", "install", src, "--name", "uc", "--dry-run"}, bad...)...)
		if r.code != 2 || strings.Contains(r.stdout+r.stderr, cliSecret) {
			t.Fatalf("%v: exit %d %s %s", bad, r.code, r.stdout, r.stderr)
		}
	}
	// A value of the wrong type is refused, naming the option.
	r := runBinary(t, home, env, "plugin", "install", src, "--name", "uc", "--dry-run", "--config", "api_key="+cliSecret, "--config", "endpoint=https://svc.example", "--config", "port=eighty")
	if r.code != 1 || r.json(t)["errorCode"] != "install.config_invalid" || !strings.Contains(r.stdout, `option port (\"Port\"): \"eighty\" is not a number`) || strings.Contains(r.stdout+r.stderr, cliSecret) {
		t.Fatalf("bad type: exit %d %s %s", r.code, r.stdout, r.stderr)
	}

	values := []string{"--config", "api_key=" + cliSecret, "--config", "endpoint=https://svc.example", "--config", "port=9090"}
	dry = runBinary(t, home, env, append([]string{"plugin", "install", src, "--name", "uc", "--dry-run"}, values...)...)
	if dry.code != 0 || strings.Contains(dry.stdout+dry.stderr, cliSecret) {
		t.Fatalf("dry-run: exit %d %s %s", dry.code, dry.stdout, dry.stderr)
	}
	planID := dry.json(t)["planId"].(string)
	yes := runBinary(t, home, env, append([]string{"-v", "plugin", "install", src, "--name", "uc", "--yes", "--plan-id", planID}, values...)...)
	if yes.code != 0 || yes.json(t)["status"] != "applied" || strings.Contains(yes.stdout+yes.stderr, cliSecret) {
		t.Fatalf("install: exit %d %s %s", yes.code, yes.stdout, yes.stderr)
	}

	show := runBinary(t, home, env, "plugin", "show", "uc", "--json")
	var info struct {
		MCPServers []struct {
			Args []string          `json:"args"`
			Env  map[string]string `json:"env"`
		} `json:"mcpServers"`
		Hooks []struct {
			Args []string `json:"args"`
		} `json:"hooks"`
		LSPServers []struct {
			Args []string `json:"args"`
		} `json:"lspServers"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &info); err != nil {
		t.Fatal(err, show.stdout)
	}
	if got := strings.Join(info.MCPServers[0].Args, " "); got != "server.js --port 9090" || info.MCPServers[0].Env["ENDPOINT"] != "https://svc.example" {
		t.Errorf("MCP server: %+v", info.MCPServers[0])
	}
	if got := strings.Join(info.Hooks[0].Args, " "); got != "https://svc.example ${user_config.api_key}" {
		t.Errorf("hook args: %s", got)
	}
	if got := strings.Join(info.LSPServers[0].Args, " "); got != "--endpoint https://svc.example" {
		t.Errorf("LSP args: %s", got)
	}
	text := runBinary(t, home, env, "plugin", "show", "uc")
	if !strings.Contains(text.stdout, "api_key (API key)") || !strings.Contains(text.stdout, "set (sensitive, not shown)") || !strings.Contains(text.stdout, "= 9090") || strings.Contains(text.stdout, cliSecret) {
		t.Errorf("show: %s", text.stdout)
	}

	exp := runBinary(t, home, env, "plugin", "export", "uc", "-o", filepath.Join(t.TempDir(), "uc.zip"))
	if exp.code != 0 {
		t.Fatalf("export: %d %s", exp.code, exp.stderr)
	}
	if leaks := leaksUnder(t, home, cliSecret); len(leaks) > 0 {
		t.Fatalf("the secret is written outside config/: %v", leaks)
	}
	ents, _ := os.ReadDir(filepath.Join(home, "config"))
	if len(ents) != 1 {
		t.Fatalf("config/: %v", ents)
	}
	if info, _ := ents[0].Info(); info.Mode().Perm() != 0o600 {
		t.Fatalf("%s has mode %v", ents[0].Name(), info.Mode().Perm())
	}

	// Update keeps the values; --config changes one.
	up := runBinary(t, home, env, "plugin", "update", "uc", "--config", "port=7070", "--yes")
	if up.code != 0 || up.json(t)["status"] != "applied" {
		t.Fatalf("update: exit %d %s %s", up.code, up.stdout, up.stderr)
	}
	show = runBinary(t, home, env, "plugin", "show", "uc", "--json")
	if !strings.Contains(show.stdout, `"7070"`) || !strings.Contains(show.stdout, `"set": true`) {
		t.Errorf("after update: %s", show.stdout)
	}
	// A value for an option no plugin of the update declares is refused, as
	// install refuses it, with nothing written.
	before, err := os.ReadFile(filepath.Join(home, "plugin-packages.json"))
	if err != nil {
		t.Fatal(err)
	}
	bad := runBinary(t, home, env, "plugin", "update", "uc", "--config", "nope=1", "--yes")
	if bad.code == 0 || !strings.Contains(bad.stderr, `declares no option "nope"`) || !strings.Contains(bad.stderr, "install.config_invalid") {
		t.Errorf("update with an undeclared option: exit %d %s", bad.code, bad.stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(home, "plugin-packages.json")); !bytes.Equal(before, after) {
		t.Error("a refused update changed the registry")
	}

	rm := runBinary(t, home, env, "plugin", "remove", "uc", "--yes")
	if rm.code != 0 {
		t.Fatalf("remove: %d %s", rm.code, rm.stdout)
	}
	if ents, _ := os.ReadDir(filepath.Join(home, "config")); len(ents) != 0 {
		t.Fatalf("config/ after remove: %v", ents)
	}
}

// On a terminal, install asks for each required value it lacks: a
// non-sensitive one echoed, a sensitive one not.
func TestUserConfigPromptOnATerminal(t *testing.T) {
	t.Parallel()
	_, env := userConfigRepo(t)
	home := t.TempDir()
	cmd := exec.Command(binPath, "plugin", "install", "https://github.com/acme/ucm", "--name", "uc", "--yes")
	cmd.Env = append(append(os.Environ(), "REASONIX_HOME="+home, "TERM=dumb", "NO_COLOR=1"), env...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout // the JSON stays off the terminal, as in a pipe
	tty, err := pty.StartWithAttrs(cmd, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	screen := &lockedBuffer{}
	go func() { _, _ = io.Copy(screen, tty) }()

	waitFor := func(what string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(screen.String(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q on the terminal:\n%s", what, screen.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("api_key (string, hidden as you type): ")
	if _, err := tty.Write([]byte(cliSecret + "\r")); err != nil {
		t.Fatal(err)
	}
	waitFor("endpoint (string): ")
	if _, err := tty.Write([]byte("https://typed.example\r")); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("install: %v\nterminal:\n%s\nstdout: %s", err, screen.String(), stdout.String())
	}
	time.Sleep(100 * time.Millisecond) // the last of the terminal's output
	seen := screen.String()
	t.Logf("terminal:\n%s", seen)
	if strings.Contains(seen, cliSecret) {
		t.Fatalf("the sensitive value was echoed:\n%s", seen)
	}
	if !strings.Contains(seen, "https://typed.example") || !strings.Contains(seen, "uc needs values for its options") {
		t.Fatalf("terminal:\n%s", seen)
	}
	var resp map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil || resp["status"] != "applied" {
		t.Fatalf("stdout: %v %s", err, stdout.String())
	}
	if leaks := leaksUnder(t, home, cliSecret); len(leaks) > 0 {
		t.Fatalf("the secret is written outside config/: %v", leaks)
	}
	data, err := os.ReadFile(filepath.Join(home, "config", "uc.json"))
	if err != nil || !strings.Contains(string(data), cliSecret) {
		t.Fatalf("config/uc.json: %v %s", err, data)
	}
}

// The terminal review lists the options, and the approve command carries
// the non-sensitive values, never a sensitive one.
func TestUserConfigReview(t *testing.T) {
	t.Parallel()
	_, env := userConfigRepo(t)
	home := t.TempDir()
	r := runOnTerminal(t, home, env, "plugin", "install", "https://github.com/acme/ucm", "--name", "uc", "--dry-run",
		"--config", "api_key="+cliSecret, "--config", "endpoint=https://svc.example")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"options of uc:", "api_key (API key)", "set (sensitive, not shown)", "endpoint (Endpoint)", "= https://svc.example", "port (Port)", "default 8080",
		"--config endpoint=https://svc.example --yes --plan-id", "give the same sensitive values again (never printed): api_key",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("review lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr+r.stdout, cliSecret) {
		t.Fatalf("the secret is printed:\n%s", r.stderr)
	}
	blocked := runOnTerminal(t, home, env, "plugin", "install", "https://github.com/acme/ucm", "--name", "uc", "--dry-run")
	if !strings.Contains(blocked.stderr, "MISSING (required)") || !strings.Contains(blocked.stderr, "install.config_required") {
		t.Errorf("review of a blocked plan:\n%s", blocked.stderr)
	}
}
