package main

import (
	"os"
	"path/filepath"
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
	files := map[string]string{}
	examples := filepath.Join("..", "..", "examples")
	err := filepath.Walk(examples, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(examples, p)
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

	repo.Commit("main", map[string]string{"hello-claude/README.md": "moved on\n"})
	gh.ResetCounts()
	up := run(t, home, env, "plugin", "update", "hello-claude", "--yes")
	if up.code != 0 || up.json(t)["status"] != "up-to-date" || gh.Counts().Total != 0 {
		t.Fatalf("update of a pinned plugin: exit %d %s, %+v requests", up.code, up.stdout, gh.Counts())
	}
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
