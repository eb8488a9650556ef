package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// TestMarketplaceFromTheBinary installs the bundled example marketplace from
// the fake GitHub with the real binary, then checks update and an offline
// re-plan as a user would run them.
func TestMarketplaceFromTheBinary(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "market")
	files := treeFiles(t, filepath.Join("..", "..", "examples"))
	sha := repo.Commit("main", files)
	home := t.TempDir()
	env := gh.Env()

	dry := run(t, home, env, "plugin", "install", "https://github.com/acme/market", "--dry-run")
	if dry.code != 0 {
		t.Fatalf("dry-run exit %d: %s %s", dry.code, dry.stdout, dry.stderr)
	}
	plan := dry.json(t)
	if plan["resolved"].(map[string]any)["kind"] != "marketplace" || len(plan["actions"].([]any)) != 3 {
		t.Fatalf("plan: %s", dry.stdout)
	}
	yes := run(t, home, env, "plugin", "install", "https://github.com/acme/market", "--yes", "--plan-id", plan["planId"].(string))
	if yes.code != 0 {
		t.Fatalf("install exit %d: %s", yes.code, yes.stdout)
	}
	for _, a := range yes.json(t)["actions"].([]any) {
		a := a.(map[string]any)
		if a["name"] == "from-npm" {
			if a["status"] != "skipped" {
				t.Errorf("from-npm: %v", a["status"])
			}
			continue
		}
		want := "https://github.com/acme/market/tree/" + sha + "/" + a["name"].(string)
		if a["status"] != "installed" || a["source"] != want || a["commit"] != sha {
			t.Errorf("%v: status %v source %v commit %v", a["name"], a["status"], a["source"], a["commit"])
		}
	}

	// The marketplace moves: update follows it (SPEC §7), once.
	moved := repo.Commit("main", map[string]string{"hello-claude/README.md": "moved on\n"})
	up := run(t, home, env, "plugin", "update", "hello-claude", "--yes")
	if up.code != 0 || up.json(t)["status"] != "applied" {
		t.Fatalf("update of a marketplace plugin: exit %d %s", up.code, up.stdout)
	}
	if a := actionsOf(t, up)["hello-claude"]; a["commit"] != moved || a["previous"].(map[string]any)["commit"] != sha {
		t.Fatalf("update moved %v, want %s → %s", a, sha, moved)
	}
	gh.ResetCounts()
	up = run(t, home, env, "plugin", "update", "hello-claude", "--yes")
	if c := gh.Counts(); up.code != 0 || up.json(t)["status"] != "up-to-date" || c.Total != 1 || c.APICommits304 != 1 {
		t.Fatalf("second update: exit %d %s, %+v requests, want one 304", up.code, up.stdout, c)
	}
	gh.ResetCounts()
	off := run(t, home, append(env, "REASONIX_OFFLINE=1"), "plugin", "install", "https://github.com/acme/market", "--dry-run", "--replace")
	if off.code != 0 || gh.Counts().Total != 0 {
		t.Fatalf("offline re-plan: exit %d %s, %+v requests", off.code, off.stdout, gh.Counts())
	}
	bad := run(t, home, env, "plugin", "install", "https://github.com/acme/market", "--dry-run", "--name", "from-npm")
	if bad.code != 1 || bad.json(t)["errorCode"] != "install.not_pinnable" {
		t.Fatalf("--name on a skipped entry: exit %d %s", bad.code, bad.stdout)
	}
	if u := run(t, home, env, "plugin", "update", "hello-claude"); u.code != 2 {
		t.Fatalf("update without --dry-run/--yes: exit %d", u.code)
	}
}

// Known marketplaces through the binary: installing from one records it;
// NAME@MARKET installs its entry; marketplace list, update and remove.
func TestKnownMarketplacesFromTheBinary(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "market")
	repo.Commit("main", map[string]string{
		".claude-plugin/marketplace.json": `{"name":"acme","owner":{"name":"o"},"plugins":[{"name":"one","source":"./one"},{"name":"two","source":"./two"}]}`,
		"one/.claude-plugin/plugin.json":  `{"name":"one"}`,
		"one/skills/s/SKILL.md":           "---\ndescription: one\n---\n",
		"two/.claude-plugin/plugin.json":  `{"name":"two"}`,
		"two/skills/s/SKILL.md":           "---\ndescription: two\n---\n",
	})
	home, env := t.TempDir(), gh.Env()
	if r := run(t, home, env, "plugin", "install", "one@acme", "--dry-run"); r.code != 1 || !strings.Contains(r.stdout, "no known marketplace is named") {
		t.Fatalf("unknown marketplace: exit %d %s", r.code, r.stdout)
	}
	add := run(t, home, env, "marketplace", "add", "https://github.com/acme/market", "--json")
	if add.code != 0 || add.json(t)["name"] != "acme" {
		t.Fatalf("add: exit %d %s %s", add.code, add.stdout, add.stderr)
	}
	if r := run(t, home, env, "plugin", "install", "one@acme", "--yes"); r.code != 0 || len(actionsOf(t, r)) != 1 || actionsOf(t, r)["one"]["status"] != "installed" {
		t.Fatalf("install one@acme: exit %d %s", r.code, r.stdout)
	}
	list := run(t, home, env, "marketplace", "list")
	if list.code != 0 || !strings.Contains(list.stdout, "acme") || !strings.Contains(list.stdout, "https://github.com/acme/market") {
		t.Fatalf("list: %s", list.stdout)
	}
	avail := run(t, home, env, "plugin", "list", "--available", "--json")
	if avail.code != 0 || !strings.Contains(avail.stdout, `"installed": true`) || !strings.Contains(avail.stdout, `"name": "two"`) {
		t.Fatalf("list --available: %s", avail.stdout)
	}
	gh.ResetCounts()
	if up := run(t, home, env, "marketplace", "update", "acme"); up.code != 0 || !strings.Contains(up.stdout, "unchanged") || gh.Counts().APICommits304 != 1 {
		t.Fatalf("update: exit %d %s %+v", up.code, up.stdout, gh.Counts())
	}
	rm := run(t, home, env, "marketplace", "remove", "acme")
	if rm.code != 1 || !strings.Contains(rm.stderr, "--force") {
		t.Fatalf("remove while in use: exit %d %s %s", rm.code, rm.stdout, rm.stderr)
	}
	rm = run(t, home, env, "marketplace", "remove", "acme", "--force")
	if rm.code != 0 || !strings.Contains(rm.stderr, "no longer linked to it: one") || !strings.Contains(rm.stderr, "✓ removed marketplace acme") {
		t.Fatalf("remove --force: exit %d %s %s", rm.code, rm.stdout, rm.stderr)
	}
	if show := run(t, home, env, "plugin", "list", "--json"); !strings.Contains(show.stdout, `"name": "one"`) || strings.Contains(show.stdout, `"marketplaceName"`) {
		t.Fatalf("after remove --force the plugin stays, unlinked: %s", show.stdout)
	}
}

// treeFiles reads the folder dir as a fake repository's files (slash path
// → content, executables marked).
func treeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		content := string(data)
		if info.Mode()&0o100 != 0 {
			content = fakegithub.Executable(content)
		}
		files[filepath.ToSlash(rel)] = content
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
