package installer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakegithub"
)

// withQuarantine rewires env's installer with the store and the cache as
// its quarantine hooks, as the CLI and the daemon wire it.
func withQuarantine(env *remoteEnv) {
	env.in = New(Config{Home: env.home, Sources: env.res, Plans: env.db, Inventories: env.db, Store: env.st, Forget: env.db})
}

// TestWrongRecordedDigestIsForgotten: when the copy of an intact snapshot
// does not match the approved digest, the digest the cache recorded for the
// folder was wrong. The snapshot stays; the record is forgotten, so the
// next plan hashes the folder again and installs.
func TestWrongRecordedDigestIsForgotten(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "tools")
	files := map[string]string{}
	for p, c := range pluginFiles("plug", "v1") {
		files["plug/"+p] = c
	}
	sha := repo.Commit("main", files)
	env := newRemoteEnv(t, gh, remoteOpts{})
	withQuarantine(env)
	src := "https://github.com/acme/tools/tree/" + sha + "/plug"
	ctx := context.Background()
	if _, err := env.install(Request{Source: testSource(src)}, Approval{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	wrong := "sha256:" + strings.Repeat("0", 64)
	if err := env.db.PutSnapshot(ctx, "github.com/acme/tools", sha, "/plug", wrong); err != nil {
		t.Fatal(err)
	}
	reg := env.registryBytes()

	resp, err := env.install(Request{Source: testSource(src)}, Approval{Yes: true})
	wantCode(t, err, resp, plugind.CodeDigestMismatch, "the digest recorded for it was wrong", "nothing was installed")
	if string(env.registryBytes()) != string(reg) || len(env.pluginsDirEntries()) != 0 {
		t.Fatalf("a refused install wrote: registry %q, plugins/ %v", env.registryBytes(), env.pluginsDirEntries())
	}
	snaps, err := env.st.List(ctx)
	if err != nil || len(snaps) != 1 || env.st.Quarantined(snaps[0].Digest) {
		t.Fatalf("the intact snapshot was not kept: %+v %v", snaps, err)
	}
	if d, ok, _ := env.db.GetSnapshot(ctx, "github.com/acme/tools", sha, "/plug"); ok {
		t.Fatalf("the wrong record survives: %s", d)
	}
	resp, err = env.install(Request{Source: testSource(src)}, Approval{Yes: true})
	if err != nil || !resp.Applied {
		t.Fatalf("install after the record was forgotten: %v %+v", err, resp)
	}
}

// TestTamperedSnapshotQuarantinedInProcess: the daemon path (one long-lived
// installer) recovers as the CLI does: quarantine, forget, fetch again.
func TestTamperedSnapshotQuarantinedInProcess(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "tools").Commit("main", pluginFiles("tools", "v1"))
	env := newRemoteEnv(t, gh, remoteOpts{})
	withQuarantine(env)
	ctx := context.Background()
	src := "git:github.com/acme/tools"
	if _, err := env.install(Request{Source: testSource(src)}, Approval{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	snaps, err := env.st.List(ctx)
	if err != nil || len(snaps) != 1 {
		t.Fatalf("snapshots: %+v %v", snaps, err)
	}
	digest := snaps[0].Digest
	root, _ := env.st.Path(digest)
	target := filepath.Join(root, "skills", "s", "SKILL.md")
	for _, p := range []string{filepath.Dir(target), target} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(target, []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}

	resp, err := env.install(Request{Source: testSource(src)}, Approval{Yes: true})
	wantCode(t, err, resp, plugind.CodeDigestMismatch, "failed verification", "quarantined")
	if env.st.Has(digest) || !env.st.Quarantined(digest) {
		t.Fatal("the tampered snapshot was not quarantined")
	}
	gh.ResetCounts()
	resp, err = env.install(Request{Source: testSource(src)}, Approval{Yes: true})
	if err != nil || !resp.Applied {
		t.Fatalf("install after quarantine: %v %+v", err, resp)
	}
	if gh.Counts().Content() == 0 || !env.st.Has(digest) {
		t.Fatalf("not fetched again (%+v), or a different tree (Has %v)", gh.Counts(), env.st.Has(digest))
	}
}

// TestRepairQuarantinesAndForgets: Maintenance.Repair moves every damaged
// snapshot aside and forgets its derived records; intact ones stay.
func TestRepairQuarantinesAndForgets(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "good").Commit("main", pluginFiles("good", "v1"))
	gh.CreateRepo("acme", "bad").Commit("main", pluginFiles("bad", "v1"))
	env := newRemoteEnv(t, gh, remoteOpts{})
	withQuarantine(env)
	ctx := context.Background()
	digests := map[string]string{}
	for _, name := range []string{"good", "bad"} {
		resp, err := env.install(Request{Source: testSource("git:github.com/acme/" + name)}, Approval{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		digests[name] = resp.Actions[0].ContentDigest
	}
	root, _ := env.st.Path(digests["bad"])
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "extra.txt"), []byte("added"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &Maintenance{Installer: env.in, Store: env.st, Cache: env.db}
	rep, err := m.Repair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Checked != 2 || len(rep.Bad) != 1 || len(rep.Quarantined) != 1 || rep.Quarantined[0] != digests["bad"] || len(rep.Unrepaired) != 0 {
		t.Fatalf("repair report: %+v", rep)
	}
	if !env.st.Has(digests["good"]) || env.st.Has(digests["bad"]) || !env.st.Quarantined(digests["bad"]) {
		t.Fatal("repair moved the wrong snapshot")
	}
	uses, _ := env.db.SnapshotUses(ctx)
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
	gh.CreateRepo("acme", "tools").Commit("main", pluginFiles("tools", "v1"))
	env := newRemoteEnv(t, gh, remoteOpts{})
	if _, err := env.install(Request{Source: testSource("git:github.com/acme/tools")}, Approval{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m := &Maintenance{Installer: env.in, Store: env.st, CacheErr: os.ErrPermission}
	st, err := m.Stats(ctx)
	if err != nil || st.Store.Snapshots != 1 || st.CacheUnavailable == "" {
		t.Fatalf("stats without a cache: %+v %v", st, err)
	}
	if rep, err := m.GC(ctx, true); err == nil || rep != nil || !strings.Contains(err.Error(), "nothing was evicted") {
		t.Fatalf("gc without a cache: %+v %v", rep, err)
	}
	if snaps, _ := env.st.List(ctx); len(snaps) != 1 {
		t.Fatal("gc without a cache evicted")
	}
	if rep, err := m.Repair(ctx); err != nil || rep.Checked != 1 {
		t.Fatalf("repair without a cache: %+v %v", rep, err)
	}
}
