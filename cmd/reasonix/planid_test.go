package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// A wrong --plan-id is refused with install.approval_denied whatever the
// plan's status (SPEC §9): here every plan is up to date, which used to
// answer "up-to-date", exit 0. Install, update (one plugin and --all) and
// the daemon's approved install all refuse, and nothing is written — not
// even the sweep of a leftover staging folder an up-to-date --yes does.
func TestWrongPlanIDOnAnUpToDatePlanIsDenied(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "tools")
	repo.Commit("main", merge(prefixTree("plugins/one", pluginTree("one")), map[string]string{
		".claude-plugin/marketplace.json": `{"name":"acme","owner":{"name":"acme"},"plugins":[{"name":"one","source":"./plugins/one"}]}`,
	}))
	home := t.TempDir()
	env := gh.Env()
	src := "https://github.com/acme/tools"
	if r := runBinary(t, home, env, "plugin", "install", src, "--yes"); r.code != 0 || r.json(t)["applied"] != true {
		t.Fatalf("first install: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	plan := runBinary(t, home, env, "plugin", "install", src, "--dry-run")
	if got := plan.json(t)["status"]; plan.code != 0 || got != "up-to-date" {
		t.Fatalf("re-plan: exit %d status %v: %s", plan.code, got, plan.stderr)
	}
	rightID := plan.json(t)["planId"].(string)
	const wrongID = "low:sha256:0123456789abcdef0123456789abcdef"
	if rightID == wrongID {
		t.Fatal("the made-up id is the real one")
	}
	leftover := filepath.Join(home, "plugins", ".staging-leftover")
	must(t, os.MkdirAll(leftover, 0o755))
	before := homeState(t, home)

	for _, args := range [][]string{
		{"plugin", "install", src, "--yes", "--plan-id", wrongID},
		{"plugin", "update", "one", "--yes", "--plan-id", wrongID},
		{"plugin", "update", "--all", "--yes", "--plan-id", wrongID},
	} {
		r := runBinary(t, home, env, args...)
		if got := r.json(t)["errorCode"]; r.code != 1 || got != "install.approval_denied" {
			t.Errorf("%v: exit %d errorCode %v, want 1 and install.approval_denied: %s", args, r.code, got, r.stdout)
		}
		if after := homeState(t, home); !reflect.DeepEqual(before, after) {
			t.Fatalf("%v wrote to the home:\nbefore %v\nafter  %v", args, before, after)
		}
	}

	d := startDaemon(t, home, env)
	r := d.do("POST", "/plugins/install", map[string]any{"source": src, "planId": wrongID})
	if r.status != 422 || r.json(t)["errorCode"] != "install.approval_denied" {
		t.Errorf("daemon install with a wrong planId: %d %s", r.status, r.body)
	}
	// The daemon's update plan is stored; approving another id for the
	// same request is refused too.
	r = d.do("POST", "/plugins/install", map[string]any{"planId": rightID, "source": src, "replace": true})
	if r.status != 422 || r.json(t)["errorCode"] != "install.approval_denied" {
		t.Errorf("daemon install of another request's planId: %d %s", r.status, r.body)
	}
	if code := d.stop(); code != 0 {
		t.Fatalf("serve exited %d: %s", code, d.stderr)
	}
	if after := homeState(t, home); !reflect.DeepEqual(before, after) {
		t.Fatalf("the daemon wrote to the home:\nbefore %v\nafter  %v", before, after)
	}

	// The right id of an up-to-date plan is still up to date (and sweeps).
	r2 := runBinary(t, home, env, "plugin", "install", src, "--yes", "--plan-id", rightID)
	if got := r2.json(t)["status"]; r2.code != 0 || got != "up-to-date" {
		t.Fatalf("the right planId: exit %d status %v: %s", r2.code, got, r2.stdout)
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("an approved up-to-date plan did not sweep the leftover: %v", err)
	}
}

// homeState is what an install may change in a home, by path: the
// registry, the known marketplaces and every file and folder under
// plugins/ (the cache and the store are an optimization and may change).
func homeState(t *testing.T, home string) map[string]string {
	t.Helper()
	state := map[string]string{}
	for _, name := range []string{"plugin-packages.json", "marketplaces.json"} {
		if data, err := os.ReadFile(filepath.Join(home, name)); err == nil {
			state[name] = string(data)
		}
	}
	plugins := filepath.Join(home, "plugins")
	if _, err := os.Lstat(plugins); os.IsNotExist(err) {
		return state
	}
	err := filepath.Walk(plugins, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(home, p)
		if info.IsDir() {
			state[filepath.ToSlash(rel)+"/"] = info.Mode().String()
			return nil
		}
		data, err := os.ReadFile(p)
		state[filepath.ToSlash(rel)] = info.Mode().String() + " " + string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return state
}
