package maintain_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind/app"
	"reasonix.io/plugind/cache/maintain"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/source"
)

// open wires a home as the CLI does (app.Open), its GitHub the fake gh and
// every other host a closed loopback port: nothing here reaches the
// internet.
func open(t *testing.T, gh *fakegithub.Server) *app.App {
	t.Helper()
	env := map[string]string{
		"REASONIX_HOME":           filepath.Join(t.TempDir(), "home"),
		"REASONIX_GITHUB_URL":     gh.URL,
		"REASONIX_GITHUB_API_URL": gh.APIURL,
		"REASONIX_URL_REWRITE":    "https://=http://127.0.0.1:1/",
	}
	a, err := app.Open(context.Background(), app.OpenOptions{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func plugin(gh *fakegithub.Server, name string) {
	gh.CreateRepo("acme", name).Commit("main", map[string]string{
		".claude-plugin/plugin.json": `{"name":"` + name + `","version":"1.0.0"}`,
		"skills/s/SKILL.md":          "---\ndescription: " + name + "\n---\nbody\n",
	})
}

// plan plans acme/name, installing it when install is set, and returns
// the digest of its snapshot.
func plan(t *testing.T, a *app.App, name string, install bool) string {
	t.Helper()
	resp, err := a.Installer.Install(context.Background(), installer.Request{Source: mustSource("git:github.com/acme/" + name)}, installer.Approval{DryRun: !install, Yes: install})
	if err != nil || len(resp.Actions) != 1 || (install && !resp.Applied) {
		t.Fatalf("plan %s: %v %+v", name, err, resp)
	}
	return resp.Actions[0].ContentDigest
}

// TestGCKeepsWhatIsInstalled: once no live plan names them, GC evicts the
// snapshots nothing installed uses, and keeps the one an installed plugin
// was planned from (found through the registry's pinned source).
func TestGCKeepsWhatIsInstalled(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	plugin(gh, "kept")
	plugin(gh, "planned")
	a := open(t, gh)
	kept, planned := plan(t, a, "kept", true), plan(t, a, "planned", false)
	m := a.Maintenance()
	ctx := context.Background()
	if rep, err := m.GC(ctx, true); err != nil || len(rep.Evicted) != 0 {
		t.Fatalf("a live plan's snapshot was evicted: %+v %v", rep, err)
	}
	// A week and a day later, the plan is no longer live.
	m.Now = func() time.Time { return time.Now().Add(8 * 24 * time.Hour) }
	rep, err := m.GC(ctx, true)
	if err != nil || len(rep.Evicted) != 1 || rep.Evicted[0] != planned {
		t.Fatalf("gc: %+v %v, want %s evicted", rep, err, planned)
	}
	if !a.Store.Has(kept) || a.Store.Has(planned) {
		t.Fatal("gc evicted the installed plugin's snapshot")
	}
}

// TestRepairQuarantinesAndForgets: Maintenance.Repair moves every damaged
// snapshot aside and forgets its derived records; intact ones stay.
func TestRepairQuarantinesAndForgets(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	plugin(gh, "good")
	plugin(gh, "bad")
	a := open(t, gh)
	ctx := context.Background()
	digests := map[string]string{}
	for _, name := range []string{"good", "bad"} {
		digests[name] = plan(t, a, name, false)
	}
	root, _ := a.Store.Path(digests["bad"])
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "extra.txt"), []byte("added"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := a.Maintenance()
	rep, err := m.Repair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Checked != 2 || len(rep.Bad) != 1 || len(rep.Quarantined) != 1 || rep.Quarantined[0] != digests["bad"] || len(rep.Unrepaired) != 0 {
		t.Fatalf("repair report: %+v", rep)
	}
	if !a.Store.Has(digests["good"]) || a.Store.Has(digests["bad"]) || !a.Store.Quarantined(digests["bad"]) {
		t.Fatal("repair moved the wrong snapshot")
	}
	uses, _ := a.Cache.SnapshotUses(ctx)
	if _, ok := uses[digests["bad"]]; ok {
		t.Fatal("the quarantined snapshot's records were not forgotten")
	}
	if _, ok := uses[digests["good"]]; !ok {
		t.Fatal("the intact snapshot's records were forgotten")
	}
	rep, err = m.Repair(ctx)
	if err != nil || len(rep.Bad) != 0 || len(rep.Quarantined) != 0 {
		t.Fatalf("second repair: %+v %v", rep, err)
	}
}

// TestMaintenanceWithoutCache: stats and repair work without a cache; GC
// refuses, evicting nothing, because only the cache knows what is in use.
func TestMaintenanceWithoutCache(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	plugin(gh, "tools")
	a := open(t, gh)
	plan(t, a, "tools", false)
	ctx := context.Background()
	m := &maintain.Maintenance{Home: a.Installer, Store: a.Store, CacheErr: os.ErrPermission}
	st, err := m.Stats(ctx)
	if err != nil || st.Store.Snapshots != 1 || st.CacheUnavailable == "" {
		t.Fatalf("stats without a cache: %+v %v", st, err)
	}
	if rep, err := m.GC(ctx, true); err == nil || rep != nil || !strings.Contains(err.Error(), "nothing was evicted") {
		t.Fatalf("gc without a cache: %+v %v", rep, err)
	}
	if snaps, _ := a.Store.List(ctx); len(snaps) != 1 {
		t.Fatal("gc without a cache evicted")
	}
	if rep, err := m.Repair(ctx); err != nil || rep.Checked != 1 {
		t.Fatalf("repair without a cache: %+v %v", rep, err)
	}
}

// mustSource is source.FromText for a source a test names itself: it
// panics on an error, as regexp.MustCompile does.
func mustSource(text string) source.Source {
	s, err := source.FromText(text)
	if err != nil {
		panic(err)
	}
	return s
}
