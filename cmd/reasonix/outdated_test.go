package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"reasonix.io/plugind/app"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver/host"
)

// checkNow runs the daemon's update check in home, as `serve
// --check-updates` does.
func checkNow(t *testing.T, home string, env []string, offline bool) *installer.UpdateCheck {
	t.Helper()
	vars := map[string]string{"REASONIX_HOME": home}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	a, err := app.Open(context.Background(), app.OpenOptions{Getenv: func(k string) string { return vars[k] }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	c, err := a.Installer.CheckUpdates(context.Background(), offline)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// list --outdated reads the stored check without any network: what could
// move (commits, versions, risk raise) and when it was checked, in text and
// JSON; it exits 1 until a check has run, and when the last one was
// skipped offline, keeping the last success's time.
func TestListOutdated(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	mk := gh.CreateRepo("acme", "market")
	from := mk.Commit("main", map[string]string{
		".claude-plugin/marketplace.json":  `{"name":"acme","owner":{"name":"acme"},"plugins":[{"name":"tools","source":"./tools"}]}`,
		"tools/.claude-plugin/plugin.json": `{"name":"tools","version":"1.0.0"}`,
		"tools/skills/s/SKILL.md":          "---\ndescription: s\n---\nbody\n",
	})
	home, env := t.TempDir(), gh.Env()
	if r := run(t, home, env, "plugin", "install", "https://github.com/acme/market", "--yes"); r.code != 0 {
		t.Fatalf("install: %d %s %s", r.code, r.stdout, r.stderr)
	}

	never := run(t, home, env, "plugin", "list", "--outdated")
	if never.code != 1 || !strings.Contains(never.stderr, "No update check has run yet") {
		t.Fatalf("before any check: exit %d, %q %q", never.code, never.stdout, never.stderr)
	}

	to := mk.Commit("main", map[string]string{
		"tools/.claude-plugin/plugin.json": `{"name":"tools","version":"2.0.0"}`,
		"tools/hooks/hooks.json":           `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo hi"}]}]}}`,
	})
	checked := checkNow(t, home, env, false)
	registry, err := os.ReadFile(installer.Home{Dir: home}.RegistryPath())
	if err != nil {
		t.Fatal(err)
	}
	gh.ResetCounts()
	text := run(t, home, env, "plugin", "list", "--outdated")
	if text.code != 0 {
		t.Fatalf("list --outdated: exit %d %s %s", text.code, text.stdout, text.stderr)
	}
	for _, want := range []string{"tools", "acme", host.Short(from) + " → " + host.Short(to), "1.0.0 → 2.0.0", "(raised)"} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, text.stdout)
		}
	}
	if !strings.Contains(text.stderr, "last successful check: ") || !strings.Contains(text.stderr, "plugin update --all --dry-run") {
		t.Errorf("stderr: %s", text.stderr)
	}
	js := run(t, home, env, "plugin", "list", "--outdated", "--json")
	v := js.json(t)
	ups := v["updates"].([]any)
	if js.code != 0 || v["status"] != "ok" || len(ups) != 1 || ups[0].(map[string]any)["toCommit"] != to || ups[0].(map[string]any)["riskRaised"] != true || ups[0].(map[string]any)["diff"] == nil {
		t.Fatalf("list --outdated --json: exit %d %s", js.code, js.stdout)
	}
	if c := gh.Counts(); c.Total != 0 {
		t.Fatalf("list --outdated made requests: %+v", c)
	}

	checkNow(t, home, env, true)
	off := run(t, home, env, "plugin", "list", "--outdated", "--json")
	ov := off.json(t)
	if off.code != 1 || ov["status"] != "skipped-offline" || ov["lastSuccessAt"] != checked.LastSuccessAt.Format("2006-01-02T15:04:05.999999999Z07:00") || len(ov["updates"].([]any)) != 1 {
		t.Fatalf("after an offline check: exit %d %s", off.code, off.stdout)
	}
	offText := run(t, home, env, "plugin", "list", "--outdated")
	if !strings.Contains(offText.stderr, "was skipped: offline") || !strings.Contains(offText.stdout, "1.0.0 → 2.0.0") {
		t.Fatalf("offline text: %s %s", offText.stdout, offText.stderr)
	}
	if after, _ := os.ReadFile(installer.Home{Dir: home}.RegistryPath()); string(after) != string(registry) {
		t.Fatal("a check or a listing changed the registry")
	}

	if bad := run(t, home, env, "plugin", "list", "--outdated", "--available"); bad.code != 2 {
		t.Fatalf("--outdated --available: exit %d", bad.code)
	}
}
