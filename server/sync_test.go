package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"reasonix.io/plugind/app"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/bulkmarket"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/lockfile"
	"reasonix.io/plugind/resolver"
)

// daemonOver is the daemon as reasonix serve wires it (app.Open with
// Daemon: what planning decoded is kept) over home, its remote sources
// on gh.
func daemonOver(t testing.TB, gh *fakegithub.Server, home string) (*app.App, string) {
	t.Helper()
	a, err := app.Open(context.Background(), app.OpenOptions{
		Getenv: func(k string) string {
			if k == "REASONIX_HOME" {
				return home
			}
			return ""
		},
		Hosts:  &resolver.HostConfig{GitHubURL: gh.URL, APIURL: gh.APIURL},
		Daemon: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Installer: a.Installer, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); srv.Close(); a.Close() })
	return a, ts.URL
}

// lockOf installs the marketplace of m into a fresh home and returns its
// lock, as reasonix lock writes it.
func lockOf(t testing.TB, gh *fakegithub.Server, m *bulkmarket.Market) (*lockfile.Lock, string) {
	t.Helper()
	home := filepath.Join(t.TempDir(), "a")
	a, _ := daemonOver(t, gh, home)
	src := mustSource(m.Source)
	if resp, err := a.Installer.Install(context.Background(), installer.Request{Source: src}, installer.Approval{Yes: true}); err != nil || !resp.OK {
		t.Fatalf("install on A: %v %+v", err, resp)
	}
	lock, warnings, err := a.Installer.LockHomeDocument(context.Background())
	if err != nil || len(warnings) > 0 {
		t.Fatalf("lock: %v %v", err, warnings)
	}
	return lock, home
}

type syncBody struct {
	Lock    *lockfile.Lock `json:"lock"`
	Prune   bool           `json:"prune,omitempty"`
	Frozen  bool           `json:"frozen,omitempty"`
	Offline bool           `json:"offline,omitempty"`
}

// TestSyncRoute: POST /sync plans an empty home to match a lock, the plan
// is applied by its planId alone (the stored plan replays the sync, lock
// and all), the home then has every locked plugin at its locked commit
// and digest, and a second sync, offline, is up to date with no request.
// A lock of a newer format is refused as the CLI refuses it.
func TestSyncRoute(t *testing.T) {
	gh := fakegithub.New(t)
	m, err := bulkmarket.Build(gh, bulkmarket.Shape{Entries: 12, Repos: 4})
	if err != nil {
		t.Fatal(err)
	}
	lock, _ := lockOf(t, gh, m)
	b, url := daemonOver(t, gh, filepath.Join(t.TempDir(), "b"))

	r := doURL(t, url, "POST", "/sync", syncBody{Lock: lock, Frozen: true}, nil)
	plan := r.response(t)
	if r.status != http.StatusOK || plan.Status != installer.StatusPlanned || len(plan.Actions) != 12 {
		t.Fatalf("POST /sync: %d %s", r.status, r.body)
	}
	r = doURL(t, url, "POST", "/plugins/install", map[string]string{"planId": plan.PlanID}, nil)
	if applied := r.response(t); r.status != http.StatusOK || applied.Status != installer.StatusApplied {
		t.Fatalf("install by planId: %d %s", r.status, r.body)
	}
	reg, err := installer.LoadRegistry(b.Home.RegistryPath())
	if err != nil || len(reg.Plugins) != len(lock.Plugins) {
		t.Fatalf("B's registry: %v, %d plugins, want %d", err, len(reg.Plugins), len(lock.Plugins))
	}
	for _, l := range lock.Plugins {
		e, ok := reg.Find(l.Name)
		if !ok || e.Commit != l.Commit || e.ContentDigest != l.ContentDigest || e.Source != l.Source || e.Enabled != l.Enabled {
			t.Fatalf("B has %s as %+v, the lock says %+v", l.Name, e, l)
		}
	}

	gh.ResetCounts()
	r = doURL(t, url, "POST", "/sync", syncBody{Lock: lock, Offline: true}, nil)
	if again := r.response(t); again.Status != installer.StatusUpToDate {
		t.Fatalf("sync again: %s", r.body)
	}
	if n := gh.Counts().Total; n != 0 {
		t.Fatalf("an offline sync made %d requests", n)
	}

	newer := `{"lock": {"version": 2, "plugins": []}}`
	doURL(t, url, "POST", "/sync", newer, nil).wantError(t, http.StatusBadRequest, "install.invalid_source")
	doURL(t, url, "POST", "/sync", `{"prune": true}`, nil).wantError(t, http.StatusBadRequest, CodeBadRequest)
}
