package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/headless"
	"reasonix.io/plugind/internal/peakrss"
)

// binPath is the reasonix binary built once for the tests that drive it as
// a subprocess, as a user would.
var binPath string

func TestMain(m *testing.M) {
	peakrss.Serve() // runMeasured's helper: returns unless started as one
	dir, err := os.MkdirTemp("", "reasonix-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "reasonix")
	build := exec.Command("go", "build", "-o", binPath, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build reasonix:", err)
		os.Exit(1)
	}
	code := m.Run()
	headless.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code   int
	stdout string
	stderr string
}

func (r result) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("stdout is not JSON (%v): %s\nstderr: %s", err, r.stdout, r.stderr)
	}
	return v
}

// run executes a command in-process through Main.Run, as the binary would
// with REASONIX_HOME=home and env added to the environment. Most tests use
// it; the few that need a process of their own (crashes, signals, a daemon,
// the working folder) use runBinary.
func run(t *testing.T, home string, env []string, args ...string) result {
	t.Helper()
	return runMain(t, home, env, false, args...)
}

// runOnTerminal is run with stderr taken for a terminal, so dry runs print
// their review there.
func runOnTerminal(t *testing.T, home string, env []string, args ...string) result {
	t.Helper()
	return runMain(t, home, env, true, args...)
}

func runMain(t *testing.T, home string, env []string, terminal bool, args ...string) result {
	t.Helper()
	vars := map[string]string{}
	for _, kv := range append(append(os.Environ(), "REASONIX_HOME="+home), env...) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }}
	if terminal {
		// Content, not layout: a terminal as wide as any line and without
		// colour (the tmux tests look at layout and colour).
		m.terminal = func(io.Writer) bool { return true }
		m.columns = 10000
		if _, set := vars["NO_COLOR"]; !set {
			vars["NO_COLOR"] = "1"
		}
	}
	code := m.Run(context.Background(), args)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// runBinary executes the built binary with REASONIX_HOME=home.
func runBinary(t *testing.T, home string, env []string, args ...string) result {
	t.Helper()
	return runBinaryWith(t, home, env, args, func(cmd *exec.Cmd) error { return cmd.Run() })
}

func runBinaryWith(t *testing.T, home string, env, args []string, runCmd func(*exec.Cmd) error) result {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(os.Environ(), "REASONIX_HOME="+home)
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := runCmd(cmd)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode() // -1 when killed by a signal
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func copyDir(t *testing.T, src, dst string) string {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestLifecycleFromTheBinary(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	src := copyDir(t, filepath.Join("..", "..", "examples", "hello-claude"), filepath.Join(t.TempDir(), "hello-claude"))

	r := runBinary(t, home, nil, "plugin", "install", src)
	if r.code != 2 || !strings.Contains(r.stderr, "--dry-run") || !strings.Contains(r.stderr, "--yes") {
		t.Fatalf("install without approval: code %d, stderr %q", r.code, r.stderr)
	}

	r = runBinary(t, home, nil, "plugin", "install", src, "--dry-run")
	if r.code != 0 {
		t.Fatalf("dry-run: %d %s %s", r.code, r.stdout, r.stderr)
	}
	plan := r.json(t)
	planID := plan["planId"].(string)
	actions := plan["actions"].([]any)
	act := actions[0].(map[string]any)
	if act["name"] != "hello-claude" || len(act["skills"].([]any)) != 1 || len(act["commands"].([]any)) != 1 ||
		len(act["hooks"].([]any)) == 0 || len(act["mcpServers"].([]any)) != 2 {
		t.Fatalf("plan action: %v", act)
	}
	if strings.Contains(r.stdout, "sk-example-not-a-real-key") {
		t.Fatal("plan shows a credential unmasked")
	}

	r = runBinary(t, home, nil, "plugin", "install", src, "--yes", "--plan-id", planID)
	if r.code != 0 || r.json(t)["applied"] != true {
		t.Fatalf("install: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = runBinary(t, home, nil, "plugin", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "hello-claude") || !strings.Contains(r.stdout, "enabled") {
		t.Fatalf("list: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = runBinary(t, home, nil, "plugin", "show", "hello-claude")
	if r.code != 0 || !strings.Contains(r.stdout, "/hello-claude:greet") || !strings.Contains(r.stdout, "/hello-claude:wave") {
		t.Fatalf("show: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r = runBinary(t, home, nil, "plugin", "disable", "hello-claude"); r.code != 0 {
		t.Fatalf("disable: %d %s", r.code, r.stderr)
	}
	r = runBinary(t, home, nil, "plugin", "list", "--json")
	if !strings.Contains(r.stdout, `"enabled": false`) {
		t.Fatalf("list after disable: %s", r.stdout)
	}
	if r = runBinary(t, home, nil, "plugin", "enable", "hello-claude"); r.code != 0 {
		t.Fatalf("enable: %d %s", r.code, r.stderr)
	}
	if r = runBinary(t, home, nil, "plugin", "doctor", "hello-claude"); r.code != 0 {
		t.Fatalf("doctor: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = runBinary(t, home, nil, "doctor", "capabilities", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, "/hello-claude:greet") {
		t.Fatalf("capabilities: %d %s %s", r.code, r.stdout, r.stderr)
	}
	zipPath := filepath.Join(t.TempDir(), "out.zip")
	r = runBinary(t, home, nil, "plugin", "export", "hello-claude", "-o", zipPath)
	if r.code != 0 || !strings.Contains(r.stderr, "WEATHER_API_KEY") || !strings.Contains(r.stderr, "✓ exported hello-claude to "+zipPath) {
		t.Fatalf("export: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if data, _ := os.ReadFile(zipPath); bytes.Contains(data, []byte("sk-example-not-a-real-key")) || len(data) == 0 {
		t.Fatal("export left a secret in the zip, or wrote nothing")
	}
	if r = runBinary(t, home, nil, "plugin", "remove", "hello-claude"); r.code != 2 {
		t.Fatalf("remove without --yes: %d", r.code)
	}
	if r = runBinary(t, home, nil, "plugin", "uninstall", "hello-claude", "--yes"); r.code != 0 || r.json(t)["ok"] != true {
		t.Fatalf("uninstall: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = runBinary(t, home, nil, "plugin", "install", zipPath, "--yes")
	if r.code != 0 || r.json(t)["applied"] != true {
		t.Fatalf("install exported zip: %d %s %s", r.code, r.stdout, r.stderr)
	}

	// The zip went through the store; maintenance commands see it.
	if r = runBinary(t, home, nil, "cache", "verify"); r.code != 0 || !strings.Contains(r.stdout, "checked 1 snapshots, 0 problems") {
		t.Fatalf("cache verify: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r = runBinary(t, home, nil, "cache", "stats"); r.code != 0 || !strings.Contains(r.stdout, "store: 1 snapshots") {
		t.Fatalf("cache stats: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// The plan that named the zip's snapshot is still live, so gc keeps it.
	if r = runBinary(t, home, nil, "cache", "gc"); r.code != 0 || !strings.Contains(r.stderr, "✓ evicted 0 snapshots") {
		t.Fatalf("cache gc: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

func TestRefusalsExitOneWithJSON(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	empty := t.TempDir()
	r := run(t, home, nil, "plugin", "install", empty, "--yes")
	if r.code != 1 {
		t.Fatalf("code %d", r.code)
	}
	v := r.json(t)
	if v["ok"] != false || v["errorCode"] != "install.invalid_source" {
		t.Fatalf("response: %v", v)
	}
	if r := run(t, home, nil, "plugin", "install"); r.code != 2 {
		t.Fatalf("missing source: code %d", r.code)
	}
	if r := run(t, home, nil, "plugin", "install", empty, "--bogus"); r.code != 2 {
		t.Fatalf("unknown flag: code %d", r.code)
	}
	if r := run(t, home, nil, "plugin", "show", "nope"); r.code != 1 || !strings.Contains(r.stderr, "install.not_found") {
		t.Fatalf("show missing: %d %s", r.code, r.stderr)
	}
}
