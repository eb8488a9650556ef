package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// renamesFixture serves testdata/renames/before as acme/renamed; publish
// makes testdata/renames/after its next commit (the whole tree replaced).
type renamesFixture struct {
	gh     *fakegithub.Server
	market *fakegithub.Repo
	before string
	t      *testing.T
}

const renamedMarket = "https://github.com/acme/renamed"

func newRenamesFixture(t *testing.T) *renamesFixture {
	t.Helper()
	gh := fakegithub.New(t)
	f := &renamesFixture{gh: gh, market: gh.CreateRepo("acme", "renamed"), t: t}
	f.before = f.market.CommitTree("main", repoFiles(treeFiles(t, filepath.Join("testdata", "renames", "before"))), true)
	return f
}

func (f *renamesFixture) publish() string {
	f.t.Helper()
	return f.market.CommitTree("main", repoFiles(treeFiles(f.t, filepath.Join("testdata", "renames", "after"))), true)
}

func repoFiles(m map[string]string) []fakegithub.File {
	out := make([]fakegithub.File, 0, len(m))
	for p, c := range m {
		out = append(out, fakegithub.File{Path: p, Content: c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// install installs the named plugins of the marketplace as first
// published.
func (f *renamesFixture) install(home string, names ...string) {
	f.t.Helper()
	for _, n := range names {
		if r := runBinary(f.t, home, f.gh.Env(), "plugin", "install", renamedMarket, "--name", n, "--yes"); r.code != 0 {
			f.t.Fatalf("install %s: exit %d %s %s", n, r.code, r.stdout, r.stderr)
		}
	}
}

func registryNames(t *testing.T, home string) []string {
	t.Helper()
	var names []string
	for _, p := range readRegistry(t, home).Plugins {
		names = append(names, p.Name)
	}
	return names
}

func registryBytes(t *testing.T, home string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(home, "plugin-packages.json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestUpdateFollowsARename: the marketplace renames old to new. update old
// plans new, renamed from old, the rename on its own line first in the
// diff and in the terminal review; approving it moves the registry entry
// and the folder under the new name in one registry write (old's folder
// gone, its enabled state kept), and what needed old (user) needs new.
func TestUpdateFollowsARename(t *testing.T) {
	t.Parallel()
	f := newRenamesFixture(t)
	home, env := t.TempDir(), f.gh.Env()
	f.install(home, "user") // and old, as its dependency
	if r := runBinary(t, home, env, "plugin", "disable", "old", "--force"); r.code != 0 {
		t.Fatalf("disable old: %s %s", r.stdout, r.stderr)
	}
	after := f.publish()

	// Reading the marketplace again says what the rename means; what it
	// offers shows new as old, installed under its old name.
	mu := runBinary(t, home, env, "marketplace", "update", "renamed")
	if mu.code != 0 || !strings.Contains(mu.stderr, "it renamed old to new: reasonix plugin update old moves the installed plugin to its new name") {
		t.Errorf("marketplace update: exit %d %s %s", mu.code, mu.stdout, mu.stderr)
	}
	avail := runBinary(t, home, env, "plugin", "list", "--available", "--json")
	var offered map[string]any
	for _, p := range avail.json(t)["plugins"].([]any) {
		if m := p.(map[string]any); m["name"] == "new" {
			offered = m
		}
	}
	if offered["installed"] != true || offered["installedAs"] != "old" || offered["updateAvailable"] != true {
		t.Errorf("list --available: new is %v", offered)
	}

	dry := runBinary(t, home, env, "plugin", "update", "old", "--dry-run")
	a := actionsOf(t, dry)["new"]
	if dry.code != 0 || len(actionsOf(t, dry)) != 1 || a["renamedFrom"] != "old" || a["status"] != "ready" || a["commit"] != after ||
		a["source"] != renamedMarket+"/tree/"+after+"/plugins/new" {
		t.Fatalf("update old: exit %d %s", dry.code, dry.stdout)
	}
	const line = "renamed: old → new (marketplace renamed lists it under its new name)"
	diff, _ := a["diff"].(map[string]any)
	if summary, _ := diff["summary"].([]any); len(summary) == 0 || summary[0] != line {
		t.Fatalf("the rename is not the diff's first line: %v", diff)
	}
	if prev, _ := a["previous"].(map[string]any); prev["commit"] != f.before || prev["source"] != renamedMarket+"/tree/"+f.before+"/plugins/old" {
		t.Errorf("previous: %v", prev)
	}
	review := runOnTerminal(t, home, env, "plugin", "update", "old", "--dry-run")
	for _, want := range []string{"new (was old)", "new changes:\n  " + line + "\n"} {
		if !strings.Contains(review.stderr, want) {
			t.Errorf("the review lacks %q:\n%s", want, review.stderr)
		}
	}

	yes := runBinary(t, home, env, "plugin", "update", "old", "--yes", "--plan-id", dry.json(t)["planId"].(string))
	if yes.code != 0 || actionsOf(t, yes)["new"]["status"] != "installed" {
		t.Fatalf("apply: exit %d %s", yes.code, yes.stdout)
	}
	if got := strings.Join(registryNames(t, home), " "); got != "new user" {
		t.Fatalf("registry after the rename: %s", got)
	}
	if _, err := os.Stat(filepath.Join(home, "plugins", "old")); !os.IsNotExist(err) {
		t.Errorf("the old folder is still there: %v", err)
	}
	show := runBinary(t, home, env, "plugin", "show", "new", "--json")
	for _, want := range []string{`"root": "` + filepath.Join(home, "plugins", "new") + `"`, `"enabled": false`, `"dependency": true`} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show new lacks %s:\n%s", want, show.stdout)
		}
	}
	rm := runBinary(t, home, env, "plugin", "remove", "new", "--yes")
	if msg, _ := rm.json(t)["error"].(string); rm.code != 1 || !strings.Contains(msg, `"new" is needed by user`) {
		t.Errorf("user's need did not move to new: exit %d %s", rm.code, rm.stdout)
	}
}

// TestUpdateRenameChainsRemovalsAndConflicts: a → a2 → a3 is followed to
// a3; gone → null stays installed, reported removed; lost → ghost leads
// nowhere and stays with a warning naming the chain; clash → taken, a name
// installed from elsewhere, is a conflict naming both (the registry
// untouched). update --all plans them at once.
func TestUpdateRenameChainsRemovalsAndConflicts(t *testing.T) {
	t.Parallel()
	f := newRenamesFixture(t)
	home, env := t.TempDir(), f.gh.Env()
	f.install(home, "a", "gone", "lost", "clash", "keep")
	taken := writeTree(t, map[string]string{
		".claude-plugin/plugin.json": `{"name":"taken","version":"9.0.0"}`,
		"skills/s/SKILL.md":          "---\ndescription: someone else's taken\n---\n",
	})
	if r := runBinary(t, home, env, "plugin", "install", taken, "--yes"); r.code != 0 {
		t.Fatalf("install taken: %s", r.stdout)
	}
	f.publish()
	before := registryBytes(t, home)

	chain := runBinary(t, home, env, "plugin", "update", "a", "--dry-run")
	if a3 := actionsOf(t, chain)["a3"]; chain.code != 0 || a3["renamedFrom"] != "a" || a3["status"] != "ready" {
		t.Fatalf("update a: exit %d %s", chain.code, chain.stdout)
	}
	for name, want := range map[string]string{
		"gone": "marketplace renamed removed gone (its renames map: gone → null); the installed copy (" + f.before[:12] + ") stays",
		"lost": `marketplace renamed no longer lists lost, and its renames map does not resolve it (lost → ghost: "ghost" is neither a listed plugin nor renamed); the installed copy (` + f.before[:12] + `) stays`,
	} {
		r := runBinary(t, home, env, "plugin", "update", name, "--dry-run")
		a := actionsOf(t, r)[name]
		if w, _ := a["warnings"].([]any); r.code != 0 || r.json(t)["status"] != "up-to-date" || a["action"] != "keep" || len(w) != 1 || w[0] != want {
			t.Errorf("update %s: exit %d %s", name, r.code, r.stdout)
		}
	}
	clash := runBinary(t, home, env, "plugin", "update", "clash", "--yes")
	if clash.code != 1 || clash.json(t)["errorCode"] != "install.conflict" ||
		!strings.Contains(clash.stdout, "marketplace renamed renamed clash to taken, but a plugin named taken is installed already, from "+taken+": clash stays where it is") {
		t.Fatalf("update clash: exit %d %s", clash.code, clash.stdout)
	}
	if !bytes.Equal(before, registryBytes(t, home)) {
		t.Fatal("a refused rename changed the registry")
	}

	all := runBinary(t, home, env, "plugin", "update", "--all", "--dry-run")
	acts := actionsOf(t, all)
	if all.code != 0 || acts["a3"]["renamedFrom"] != "a" || acts["gone"]["action"] != "keep" || acts["lost"]["action"] != "keep" ||
		acts["clash"]["status"] != "conflict" || acts["keep"]["action"] != "replace" || acts["taken"]["action"] != "keep" {
		t.Fatalf("update --all: exit %d %s", all.code, all.stdout)
	}
	applied := runBinary(t, home, env, "plugin", "update", "--all", "--yes", "--plan-id", all.json(t)["planId"].(string))
	if applied.code != 1 || applied.json(t)["status"] != "partial" {
		t.Fatalf("update --all --yes: exit %d %s", applied.code, applied.stdout)
	}
	if got := strings.Join(registryNames(t, home), " "); got != "a3 clash gone keep lost taken" {
		t.Fatalf("registry after update --all: %s", got)
	}
}

// TestDaemonUpdateFollowsRenames: the daemon's POST /plugins/update plans
// the rename, and installing that plan by its planId applies it.
func TestDaemonUpdateFollowsRenames(t *testing.T) {
	t.Parallel()
	f := newRenamesFixture(t)
	home := t.TempDir()
	f.install(home, "old")
	f.publish()
	d := startDaemon(t, home, f.gh.Env())
	plan := d.do("POST", "/plugins/update", map[string]any{"all": true})
	var renamed map[string]any
	acts, _ := plan.json(t)["actions"].([]any)
	for _, a := range acts {
		if m := a.(map[string]any); m["name"] == "new" {
			renamed = m
		}
	}
	if plan.status != 200 || renamed == nil || renamed["renamedFrom"] != "old" {
		t.Fatalf("POST /plugins/update: %d %s", plan.status, plan.body)
	}
	applied := d.do("POST", "/plugins/install", map[string]any{"planId": plan.json(t)["planId"]})
	if applied.status != 200 || applied.json(t)["status"] != "applied" {
		t.Fatalf("POST /plugins/install {planId}: %d %s", applied.status, applied.body)
	}
	if got := strings.Join(registryNames(t, home), " "); got != "new" {
		t.Fatalf("registry after the daemon's update: %s", got)
	}
	if code := d.stop(); code != 0 {
		t.Errorf("serve exited %d", code)
	}
}

// TestRenameCrashAtEveryStep kills the binary at each step of applying a
// rename: until the registry is written it names old, whose folder is
// intact; after, it names new, whose folder is; never both, never neither.
// The next mutation sweeps what the crash left, and a re-run converges.
func TestRenameCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"before-staging", "after-staging", "after-swap", "after-registry"} {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			f := newRenamesFixture(t)
			home, env := t.TempDir(), f.gh.Env()
			f.install(home, "old")
			f.publish()
			r := runBinary(t, home, append(env, "REASONIX_TEST_CRASHPOINT="+step), "plugin", "update", "old", "--yes")
			if r.code != -1 {
				t.Fatalf("not killed at %s: exit %d %s", step, r.code, r.stdout)
			}
			reg := readRegistry(t, home)
			want := "old"
			if step == "after-registry" {
				want = "new"
			}
			if len(reg.Plugins) != 1 || reg.Plugins[0].Name != want || reg.Plugins[0].Root != filepath.Join(home, "plugins", want) {
				t.Fatalf("crash at %s: registry %+v, want only %s", step, reg.Plugins, want)
			}
			assertRootDigest(t, reg.Plugins[0].Root, reg.Plugins[0].ContentDigest)

			again := runBinary(t, home, env, "plugin", "update", "old", "--yes")
			if step == "after-registry" {
				again = runBinary(t, home, env, "plugin", "update", "new", "--yes")
			}
			if again.code != 0 {
				t.Fatalf("after the crash: exit %d %s", again.code, again.stdout)
			}
			if got := strings.Join(registryNames(t, home), " "); got != "new" {
				t.Fatalf("registry after recovery: %s", got)
			}
			ents, _ := os.ReadDir(filepath.Join(home, "plugins"))
			if len(ents) != 1 || ents[0].Name() != "new" {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Fatalf("plugins/ after recovery holds %v; want only new", names)
			}
		})
	}
}
