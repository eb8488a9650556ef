package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// tamperSnapshot rewrites a file in every stored snapshot holding it, as
// someone with write access to the home could, and returns how many it hit.
func tamperSnapshot(t *testing.T, home, rel, body string) int {
	t.Helper()
	snaps, err := filepath.Glob(filepath.Join(home, "store", "snapshots", "*"))
	must(t, err)
	n := 0
	for _, snap := range snaps {
		target := filepath.Join(snap, filepath.FromSlash(rel))
		if _, err := os.Stat(target); err != nil {
			continue
		}
		must(t, os.Chmod(filepath.Dir(target), 0o755))
		must(t, os.Chmod(target, 0o644))
		must(t, os.WriteFile(target, []byte(body), 0o644))
		must(t, os.Chmod(target, 0o444))
		must(t, os.Chmod(filepath.Dir(target), 0o555))
		n++
	}
	if n == 0 {
		t.Fatalf("no snapshot holds %s", rel)
	}
	return n
}

func tamperRepo(t *testing.T) (*fakegithub.Server, string) {
	t.Helper()
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "tools").Commit("main", map[string]string{
		".claude-plugin/plugin.json": `{"name":"tools","version":"1.0.0"}`,
		"skills/s/SKILL.md":          "---\ndescription: honest\n---\nhonest body\n",
	})
	return gh, "git:github.com/acme/tools"
}

// TestTamperedSnapshotIsQuarantined (issue 9, finding 8): a stored snapshot
// changed after it was fetched is caught when apply re-hashes its copy. The
// answer is install.digest_mismatch saying the stored snapshot failed
// verification and was quarantined (not that the source changed); nothing
// is installed; and the next plan fetches the commit afresh and installs
// it. Before, every later install failed the same way, even after
// `cache gc --all`: the failed plan, stored as live, kept the damaged
// snapshot from GC, and nothing ever re-verified it.
func TestTamperedSnapshotIsQuarantined(t *testing.T) {
	t.Parallel()
	gh, src := tamperRepo(t)
	env := gh.Env()
	sb := newSandbox(t)
	if r := sb.run(t, env, "plugin", "install", src, "--dry-run"); r.code != 0 {
		t.Fatalf("dry-run: %d %s", r.code, r.stderr)
	}
	tamperSnapshot(t, sb.home, "skills/s/SKILL.md", "---\ndescription: evil\n---\nrun me\n")
	reg := sb.registry(t)
	gh.ResetCounts()

	r := sb.run(t, env, "plugin", "install", src, "--yes")
	v := r.json(t)
	msg, _ := v["error"].(string)
	if r.code != 1 || v["ok"] != false || v["errorCode"] != "install.digest_mismatch" {
		t.Fatalf("install from a tampered snapshot: exit %d %s", r.code, r.stdout)
	}
	for _, want := range []string{"failed verification", "quarantined", "nothing was installed", "fetched afresh"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "changed after it was approved") {
		t.Errorf("error blames the source: %s", msg)
	}
	if sb.registry(t) != reg {
		t.Fatal("a failed install changed the registry")
	}
	if ents, _ := os.ReadDir(filepath.Join(sb.home, "plugins")); len(ents) != 0 {
		t.Fatalf("a failed install left %v under plugins/", ents)
	}
	q, _ := filepath.Glob(filepath.Join(sb.home, "store", "quarantine", "*"))
	if left, _ := filepath.Glob(filepath.Join(sb.home, "store", "snapshots", "*")); len(q) != 1 || len(left) != 0 {
		t.Fatalf("quarantine/ = %v, snapshots/ = %v; want the snapshot moved", q, left)
	}

	// Offline, the commit cannot be fetched again: a clear offline miss.
	r = sb.run(t, append(env, "REASONIX_OFFLINE=1"), "plugin", "install", src, "--dry-run")
	if r.code != 1 || r.json(t)["errorCode"] != "install.offline_miss" {
		t.Fatalf("offline plan after quarantine: %d %s", r.code, r.stdout)
	}

	// Online, the next install fetches afresh and installs the honest tree.
	gh.ResetCounts()
	r = sb.run(t, env, "plugin", "install", src, "--yes")
	if r.code != 0 || r.json(t)["applied"] != true {
		t.Fatalf("install after quarantine: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if gh.Counts().Content() == 0 {
		t.Fatalf("the commit was not fetched again: %+v", gh.Counts())
	}
	installed, err := os.ReadFile(filepath.Join(sb.home, "plugins", "tools", "skills", "s", "SKILL.md"))
	if err != nil || !strings.Contains(string(installed), "honest body") {
		t.Fatalf("installed content: %q %v", installed, err)
	}
	if r := sb.run(t, env, "plugin", "doctor", "tools"); r.code != 0 {
		t.Fatalf("doctor: %s", r.stdout)
	}
	// The evidence goes with gc --all.
	if r := sb.run(t, env, "cache", "gc", "--all"); r.code != 0 || !strings.Contains(r.stderr, "deleted 1 quarantined snapshot\n") {
		t.Fatalf("gc: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if q, _ := filepath.Glob(filepath.Join(sb.home, "store", "quarantine", "*")); len(q) != 0 {
		t.Fatalf("gc --all kept %v", q)
	}
	sb.assertNothingOutside(t)
}

// TestCacheVerifyRepair: `cache verify --repair` quarantines every damaged
// snapshot and forgets its cache records, after which a plan fetches it
// again; plain verify changes nothing.
func TestCacheVerifyRepair(t *testing.T) {
	t.Parallel()
	gh, src := tamperRepo(t)
	env := gh.Env()
	sb := newSandbox(t)
	if r := sb.run(t, env, "plugin", "install", src, "--dry-run"); r.code != 0 {
		t.Fatalf("dry-run: %d %s", r.code, r.stderr)
	}
	tamperSnapshot(t, sb.home, "skills/s/SKILL.md", "edited by hand\n")

	r := sb.run(t, env, "cache", "verify")
	if r.code != 1 || !strings.Contains(r.stdout, "1 problems") {
		t.Fatalf("verify: %d %s", r.code, r.stdout)
	}
	if q, _ := filepath.Glob(filepath.Join(sb.home, "store", "quarantine", "*")); len(q) != 0 {
		t.Fatal("plain verify quarantined")
	}
	r = sb.run(t, env, "cache", "verify", "--repair", "--json")
	v := r.json(t)
	if r.code != 0 || len(stringsOf(v["quarantined"])) != 1 {
		t.Fatalf("verify --repair: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := sb.run(t, env, "cache", "verify"); r.code != 0 || !strings.Contains(r.stdout, "checked 0 snapshots, 0 problems") {
		t.Fatalf("verify after repair: %d %s", r.code, r.stdout)
	}
	gh.ResetCounts()
	r = sb.run(t, env, "plugin", "install", src, "--yes")
	if r.code != 0 || gh.Counts().Content() == 0 {
		t.Fatalf("install after repair: %d %s, %+v", r.code, r.stdout, gh.Counts())
	}
	if r := sb.run(t, env, "cache", "verify"); r.code != 0 || !strings.Contains(r.stdout, "checked 1 snapshots, 0 problems") {
		t.Fatalf("verify after the re-fetch: %d %s", r.code, r.stdout)
	}
	sb.assertNothingOutside(t)
}

// TestCacheVerifyRepairEscapesNames: what `cache verify --repair` prints
// comes from the disk (an entry's name), so it is escaped as plain verify
// escapes it: a name holding a terminal control sequence reaches the
// terminal as text.
func TestCacheVerifyRepairEscapesNames(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	if r := sb.run(t, nil, "cache", "verify"); r.code != 0 {
		t.Fatalf("verify of an empty store: %d %s %s", r.code, r.stdout, r.stderr)
	}
	must(t, os.MkdirAll(filepath.Join(sb.home, "store", "\x1b]0;owned\x07stray"), 0o755))
	for _, args := range [][]string{{"cache", "verify"}, {"cache", "verify", "--repair"}} {
		r := sb.run(t, nil, args...)
		if !strings.Contains(r.stdout, "stray entry") || strings.ContainsAny(r.stdout+r.stderr, "\x1b\x07") {
			t.Fatalf("%v: %d %q %q", args, r.code, r.stdout, r.stderr)
		}
	}
}
