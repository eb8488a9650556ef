package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSmallerThings: issue 25's "smaller things" of the CLI, each as a
// person meets it through the real binary.
func TestSmallerThings(t *testing.T) {
	t.Parallel()
	src := writePlugin(t, filepath.Join(t.TempDir(), "p"), "1.0.0")
	root, err := filepath.Abs("../..")
	must(t, err)
	tests := []struct {
		name   string
		args   []string
		code   int
		stream string
		says   []string
		never  []string
	}{
		{"a flag typo gets a suggestion", []string{"plugin", "install", src, "--dryrun"}, 2, "stderr", []string{"unknown flag: --dryrun", "did you mean --dry-run?"}, nil},
		{"a near-miss flag", []string{"plugin", "update", "--al", "--dry-run"}, 2, "stderr", []string{"did you mean --all?"}, nil},
		{"install without a source", []string{"plugin", "install"}, 2, "stderr", []string{"plugin install needs a SOURCE to install: a local folder"}, []string{"accepts 1 arg(s)"}},
		{"remove without a name", []string{"plugin", "remove", "--yes"}, 2, "stderr", []string{"needs the name of an installed plugin"}, nil},
		{"list --help: --available takes no value", []string{"plugin", "list", "--help"}, 0, "stdout", []string{"      --available  "}, []string{"--available reasonix"}},
		{"capabilities of an empty home", []string{"doctor", "capabilities"}, 0, "stdout", []string{"Nothing installed"}, nil},
		{"cache stats before any lookup", []string{"cache", "stats"}, 0, "stdout", []string{"store: empty"}, []string{"0.0%"}},
		{"update --all with nothing installed", []string{"plugin", "update", "--all", "--dry-run"}, 0, "stderr", []string{"nothing is installed, so there is nothing to update"}, nil},
	}
	for _, tt := range tests {
		r := runBinary(t, filepath.Join(t.TempDir(), "home"), nil, tt.args...)
		out := map[string]string{"stdout": r.stdout, "stderr": r.stderr}[tt.stream]
		if r.code != tt.code {
			t.Errorf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", tt.name, r.code, tt.code, r.stdout, r.stderr)
			continue
		}
		for _, want := range tt.says {
			if !strings.Contains(out, want) {
				t.Errorf("%s: %s does not say %q:\n%s", tt.name, tt.stream, want, out)
			}
		}
		for _, bad := range tt.never {
			if strings.Contains(out, bad) {
				t.Errorf("%s: %s says %q:\n%s", tt.name, tt.stream, bad, out)
			}
		}
	}

	// cache stats with lookups made but none of a kind: no 0.0% rate.
	home := t.TempDir()
	if r := runBinary(t, home, nil, "plugin", "install", src, "--dry-run"); r.code != 0 {
		t.Fatalf("dry run: %d %s", r.code, r.stderr)
	}
	if r := runBinary(t, home, nil, "cache", "stats"); r.code != 0 || strings.Contains(r.stdout, "0.0%") || !strings.Contains(r.stdout, "no lookups yet") {
		t.Errorf("cache stats: %d\n%s", r.code, r.stdout)
	}

	// A typo in a local path names the folder, not GitHub.
	cmd := runBinaryIn(t, root, t.TempDir(), "plugin", "install", "examples/nonexistent", "--dry-run")
	if cmd.code != 1 || !strings.Contains(cmd.stderr, `the folder examples exists, but holds no "nonexistent"`) || strings.Contains(cmd.stderr, "github") {
		t.Errorf("a local path typo: %d\n%s", cmd.code, cmd.stderr)
	}
}

// TestReadOnlyCommandsMakeNoHome: looking at a home that does not exist
// leaves it unmade, and says nothing is there.
func TestReadOnlyCommandsMakeNoHome(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "never")
	for _, args := range [][]string{{"plugin", "list"}, {"plugin", "list", "--available"}, {"marketplace", "list"}, {"doctor", "capabilities"}, {"cache", "stats"}, {"cache", "verify"}} {
		r := runBinary(t, home, nil, args...)
		if r.code != 0 {
			t.Errorf("%q on a missing home: exit %d\n%s", args, r.code, r.stderr)
		}
		if _, err := os.Stat(home); err == nil {
			t.Fatalf("%q made the home", args)
		}
	}
}

// TestRelativeHomeIsMadeAbsoluteOnce: a relative REASONIX_HOME is said,
// with the absolute home the run used.
func TestRelativeHomeIsMadeAbsoluteOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := writePlugin(t, filepath.Join(t.TempDir(), "p"), "1.0.0")
	r := runBinaryIn(t, dir, "rel-home", "plugin", "install", src, "--yes")
	want := filepath.Join(dir, "rel-home")
	if r.code != 0 || !strings.Contains(r.stderr, "REASONIX_HOME=rel-home is a relative path: this run uses "+want) {
		t.Fatalf("relative home: %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(want, "plugin-packages.json")); err != nil {
		t.Fatalf("the home is not where it was said to be: %v", err)
	}
}

// TestDisablingANeededPluginAsksForForce: as remove does.
func TestDisablingANeededPluginAsksForForce(t *testing.T) {
	t.Parallel()
	market := t.TempDir()
	writeFiles(t, market, map[string]string{
		".claude-plugin/marketplace.json": `{"name":"acme","owner":{"name":"A"},"plugins":[
			{"name":"app","source":"./app","dependencies":["lib"]},{"name":"lib","source":"./lib"}]}`,
		"app/.claude-plugin/plugin.json": `{"name":"app","version":"1.0.0"}`,
		"app/skills/a/SKILL.md":          "---\ndescription: a\n---\n",
		"lib/.claude-plugin/plugin.json": `{"name":"lib","version":"1.0.0"}`,
		"lib/skills/l/SKILL.md":          "---\ndescription: l\n---\n",
	})
	home := t.TempDir()
	if r := run(t, home, nil, "plugin", "install", market, "--name", "app", "--yes"); r.code != 0 {
		t.Fatalf("install: %d %s", r.code, r.stderr)
	}
	before := readFile(t, filepath.Join(home, "plugin-packages.json"))
	r := run(t, home, nil, "plugin", "disable", "lib")
	if r.code != 1 || !strings.Contains(r.stderr, `plugin "lib" is needed by app`) || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("disable a needed plugin: %d\n%s", r.code, r.stderr)
	}
	if readFile(t, filepath.Join(home, "plugin-packages.json")) != before {
		t.Fatal("a refused disable wrote the registry")
	}
	r = run(t, home, nil, "plugin", "disable", "lib", "--force")
	if r.code != 0 || !strings.Contains(r.stderr, "app needed lib; it stays enabled without it") || !strings.Contains(r.stderr, "✓ lib is disabled") {
		t.Fatalf("disable --force: %d\n%s", r.code, r.stderr)
	}
	// The list shows who needs whom.
	l := run(t, home, nil, "plugin", "list")
	if !strings.Contains(l.stdout, "needs lib") || !strings.Contains(l.stdout, "for app") {
		t.Errorf("list hides the dependencies:\n%s", l.stdout)
	}
}

// runBinaryIn runs the binary in folder dir with REASONIX_HOME=home as
// given (relative or not).
func runBinaryIn(t *testing.T, dir, home string, args ...string) result {
	t.Helper()
	return runBinaryWith(t, home, nil, args, func(cmd *exec.Cmd) error {
		cmd.Dir = dir
		return cmd.Run()
	})
}
