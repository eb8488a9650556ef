package installer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/internal/fakegithub"
)

// withQuarantine rewires env's installer with the store and the cache as
// its quarantine hooks, as the CLI and the daemon wire it.
func withQuarantine(env *remoteEnv) {
	env.in = New(Config{Home: env.home, Sources: env.res, Cache: env.db, Store: env.st})
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
	if _, err := env.install(Request{Source: mustSource(src)}, Approval{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	wrong := "sha256:" + strings.Repeat("0", 64)
	at := cache.RepoAt{Remote: "github.com/acme/tools", SHA: sha}
	sess := env.db.Session()
	sess.PutFolder(at, "plug", wrong)
	if err := sess.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	reg := env.registryBytes()

	resp, err := env.install(Request{Source: mustSource(src)}, Approval{Yes: true})
	wantCode(t, err, resp, plugind.CodeDigestMismatch, "the digest recorded for it was wrong", "nothing was installed")
	if string(env.registryBytes()) != string(reg) || len(env.pluginsDirEntries()) != 0 {
		t.Fatalf("a refused install wrote: registry %q, plugins/ %v", env.registryBytes(), env.pluginsDirEntries())
	}
	snaps, err := env.st.List(ctx)
	if err != nil || len(snaps) != 1 || env.st.Quarantined(snaps[0].Digest) {
		t.Fatalf("the intact snapshot was not kept: %+v %v", snaps, err)
	}
	if d, ok := env.db.Session().Folder(ctx, at, "plug"); ok {
		t.Fatalf("the wrong record survives: %s", d)
	}
	resp, err = env.install(Request{Source: mustSource(src)}, Approval{Yes: true})
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
	if _, err := env.install(Request{Source: mustSource(src)}, Approval{DryRun: true}); err != nil {
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

	resp, err := env.install(Request{Source: mustSource(src)}, Approval{Yes: true})
	wantCode(t, err, resp, plugind.CodeDigestMismatch, "failed verification", "quarantined")
	if env.st.Has(digest) || !env.st.Quarantined(digest) {
		t.Fatal("the tampered snapshot was not quarantined")
	}
	gh.ResetCounts()
	resp, err = env.install(Request{Source: mustSource(src)}, Approval{Yes: true})
	if err != nil || !resp.Applied {
		t.Fatalf("install after quarantine: %v %+v", err, resp)
	}
	if gh.Counts().Content() == 0 || !env.st.Has(digest) {
		t.Fatalf("not fetched again (%+v), or a different tree (Has %v)", gh.Counts(), env.st.Has(digest))
	}
}
