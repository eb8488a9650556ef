package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runIn runs the binary in dir with the fake's environment.
func (f *syncFixture) runIn(dir, home string, args ...string) result {
	f.t.Helper()
	return runBinaryWith(f.t, home, f.gh.Env(), args, func(cmd *exec.Cmd) error {
		cmd.Dir = dir
		return cmd.Run()
	})
}

// TestProjectLockUpdateAndSync: a project's .reasonix/plugins.json is
// locked by lock --update (from a folder below it), an empty machine
// syncs to it, a marketplace move is re-locked for one plugin with its
// capability diff, --frozen syncs the new pins, and a want the lock does
// not pin yet is refused by --frozen and noted otherwise.
func TestProjectLockUpdateAndSync(t *testing.T) {
	f := newSyncFixture(t)
	proj := t.TempDir()
	sub := filepath.Join(proj, "src", "deep")
	for _, d := range []string{sub, filepath.Join(proj, ".git"), filepath.Join(proj, ".reasonix")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	wants := func(extra string) {
		t.Helper()
		doc := `{"marketplaces": {"acme": {"source": "https://github.com/acme/market"}, "beta": {"source": "https://github.com/beta/tools", "ref": "main"}},
  "plugins": {"fmt@acme": true, "lint@acme": false, "docs@beta": true` + extra + `}}`
		if err := os.WriteFile(filepath.Join(proj, ".reasonix", "plugins.json"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wants("")
	home := t.TempDir() // the machine that locks: nothing installed
	r := f.runIn(sub, home, "lock", "--update")
	if r.code != 0 {
		t.Fatalf("lock --update: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	lockPath := filepath.Join(proj, "reasonix.lock.json")
	lock := readLock(t, lockPath)
	if names := lock.Names(); !slices.Equal(names, []string{"docs", "fmt", "lint"}) || len(lock.Marketplaces) != 2 {
		t.Fatalf("the project's lock: %v, %d marketplaces", names, len(lock.Marketplaces))
	}
	if lint, _ := lock.FindPlugin("lint"); lint.Enabled || lint.ContentDigest == "" || lint.Marketplace != "acme" {
		t.Fatalf("lint locked as %+v, want disabled, pinned, through acme", lint)
	}
	if reg := lockedEntries(t, home); len(reg) != 0 {
		t.Fatalf("lock --update installed %v", reg)
	}

	b := t.TempDir()
	if r := f.runIn(sub, b, "sync", "--yes", "--frozen"); r.code != 0 {
		t.Fatalf("sync B: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	got := lockedEntries(t, b)
	for _, lp := range lock.Plugins {
		i := slices.IndexFunc(got, func(e lockedEntry) bool { return e.Name == lp.Name })
		if i < 0 || got[i].Commit != lp.Commit || got[i].ContentDigest != lp.ContentDigest || got[i].Enabled != lp.Enabled {
			t.Fatalf("B has %+v, the lock %+v", got, lp)
		}
	}

	// The marketplace moves on: fmt gains a command. lock --update fmt
	// moves fmt alone, shows the command it adds, and keeps lint's entry
	// readable at the old commit.
	files := f.acmeFiles("formats code")
	files["plugins/fmt/commands/tidy.md"] = "---\ndescription: tidies\n---\ntidy\n"
	f.acme.Commit("main", files)
	old, _ := lock.FindPlugin("fmt")
	r = f.runIn(proj, home, "lock", "--update", "fmt")
	if r.code != 0 {
		t.Fatalf("lock --update fmt: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	plan := r.json(t)
	a := actionNamed(t, plan, "fmt")
	prev, _ := a["previous"].(map[string]any)
	diff, _ := a["diff"].(map[string]any)
	if a["action"] != "replace" || prev["commit"] != old.Commit || !strings.Contains(strings.Join(toStrings(diff["summary"]), "\n"), "tidy") {
		t.Fatalf("fmt's move: %v", a)
	}
	// The diff is read from the old pin's content: the unchanged skill is
	// not in it, and nothing says the old pin could not be read.
	if summary := strings.Join(toStrings(diff["summary"]), "\n"); strings.Contains(summary, "skill") || strings.Contains(strings.Join(toStrings(a["warnings"]), "\n"), "could not be read") {
		t.Fatalf("fmt's diff is not against its old pin: %v", a)
	}
	if l := actionNamed(t, plan, "lint"); l["action"] != "keep" {
		t.Fatalf("lint is not moved by lock --update fmt: %v", l)
	}
	relocked := readLock(t, lockPath)
	nf, _ := relocked.FindPlugin("fmt")
	nl, _ := relocked.FindPlugin("lint")
	ol, _ := lock.FindPlugin("lint")
	am, _ := lock.FindMarketplace("acme")
	if nf.Commit == old.Commit || nl.Commit != ol.Commit || nl.ContentDigest != ol.ContentDigest || nl.MarketplaceCommit != am.Commit {
		t.Fatalf("relocked fmt %+v, lint %+v (acme was at %s)", nf, nl, am.Commit)
	}
	if r := f.runIn(proj, b, "sync", "--yes", "--frozen"); r.code != 0 {
		t.Fatalf("sync B to the new pins: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if e := lockedEntries(t, b); e[slices.IndexFunc(e, func(e lockedEntry) bool { return e.Name == "fmt" })].Commit != nf.Commit {
		t.Fatalf("B's fmt after sync: %+v, want %s", e, nf.Commit)
	}

	// The project wants one more: the lock does not pin it yet.
	wants(`, "ext@acme": true`)
	before, _ := os.ReadFile(filepath.Join(b, "plugin-packages.json"))
	r = f.runIn(proj, b, "sync", "--yes", "--frozen")
	if r.code != 1 || !strings.Contains(r.stderr, "ext@acme") || !strings.Contains(r.stderr, "lock --update") {
		t.Fatalf("sync --frozen with an unlocked want: exit %d\n%s", r.code, r.stderr)
	}
	after, _ := os.ReadFile(filepath.Join(b, "plugin-packages.json"))
	if string(before) != string(after) {
		t.Fatal("a refused sync changed the registry")
	}
	r = f.runIn(proj, b, "sync", "--dry-run")
	if r.code != 0 || !strings.Contains(strings.Join(toStrings(r.json(t)["warnings"]), "\n"), "ext@acme is wanted") {
		t.Fatalf("sync --dry-run with an unlocked want: exit %d\n%s", r.code, r.stdout)
	}
}
