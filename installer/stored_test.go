package installer

import (
	"context"
	"path/filepath"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
)

// TestInstallApproved: a planId alone installs the stored plan through a
// fresh Installer (a restarted daemon); without a stored plan, or without a
// planId, nothing is guessed.
func TestInstallApproved(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	db, err := cache.OpenWith(context.Background(), env.home.CachePath(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	env.in.Cache = db
	ctx := context.Background()

	resp, err := env.in.InstallApproved(ctx, Request{}, PlanID{})
	wantCode(t, err, resp, plugind.CodeApprovalDenied, "planId")
	resp, err = env.in.InstallApproved(ctx, Request{}, planIDOf(t, "low:sha256:00000000000000000000000000000000"))
	wantCode(t, err, resp, plugind.CodeApprovalDenied, "no stored plan")

	src := claudePlugin(t, "stored", "1.0.0")
	dry, err := env.install(Request{Source: mustSource(src)}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	sp, ok, err := env.in.StoredPlan(ctx, dry.PlanID)
	if err != nil || !ok || sp.Request.Source.String() != src || sp.Response.PlanID != dry.PlanID {
		t.Fatalf("stored plan: %+v %v %v", sp, ok, err)
	}
	fresh := New(Config{Home: env.home, Sources: env.in.Sources, Cache: db})
	resp, err = fresh.InstallApproved(ctx, Request{}, planIDOf(t, dry.PlanID))
	if err != nil || !resp.Applied {
		t.Fatalf("install by planId: %v %+v", err, resp)
	}
	if e, ok := mustRegistry(t, env.home).Find("stored"); !ok || e.Source.String() != src {
		t.Fatalf("registry entry: %+v", e)
	}
	for src, want := range map[string]bool{
		"examples/x": true, "x": true, filepath.Join(t.TempDir(), "x"): false, "git:github.com/a/b": false, "https://github.com/a/b": false,
	} {
		if got := env.in.isRelativeFolder(mustSource(src)); got != want {
			t.Errorf("isRelativeFolder(%q) = %v, want %v", src, got, want)
		}
	}
}

func mustRegistry(t *testing.T, h Home) *Registry {
	t.Helper()
	reg, err := LoadRegistry(h.RegistryPath())
	if err != nil {
		t.Fatal(err)
	}
	return reg
}
