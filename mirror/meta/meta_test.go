package meta_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/internal/mirrortest"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/policy"
	"reasonix.io/plugind/secrets"
)

func open(t *testing.T) *meta.DB {
	t.Helper()
	dsn := mirrortest.Postgres(t)
	db, err := meta.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// Replicas starting together migrate one at a time, and a migrated
// database opens again unchanged.
func TestConcurrentMigrations(t *testing.T) {
	t.Parallel()
	dsn := mirrortest.Postgres(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			db, err := meta.Open(context.Background(), dsn)
			if err == nil {
				db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenRefusesABadDSNWithoutEchoingIt(t *testing.T) {
	t.Parallel()
	_, err := meta.Open(context.Background(), "postgres://u:hunter2secret@127.0.0.1:1/x?connect_timeout=1")
	if err == nil || strings.Contains(err.Error(), "hunter2secret") {
		t.Fatalf("%v", err)
	}
	_, err = meta.Open(context.Background(), "host=127.0.0.1 port=notaport password=hunter2secret")
	if err == nil || strings.Contains(err.Error(), "hunter2secret") {
		t.Fatalf("%v", err)
	}
}

func TestLeases(t *testing.T) {
	t.Parallel()
	db := open(t)
	ctx := context.Background()
	l, ok, err := db.Acquire(ctx, "fetch:x", "a", time.Minute)
	if err != nil || !ok || l.Previous != "" {
		t.Fatalf("first acquire: %+v %v %v", l, ok, err)
	}
	if _, ok, _ := db.Acquire(ctx, "fetch:x", "b", time.Minute); ok {
		t.Fatal("a held lease was acquired by another holder")
	}
	if _, ok, _ := db.Acquire(ctx, "fetch:x", "a", time.Minute); !ok {
		t.Fatal("the holder must be able to re-acquire its own lease")
	}
	if ok, err := db.Renew(ctx, "fetch:x", "b", time.Minute); ok || err != nil {
		t.Fatalf("renew by a non-holder: %v %v", ok, err)
	}
	if err := db.Release(ctx, "fetch:x", "b"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := db.Acquire(ctx, "fetch:x", "b", time.Minute); ok {
		t.Fatal("a release by a non-holder freed the lease")
	}
	if err := db.Release(ctx, "fetch:x", "a"); err != nil {
		t.Fatal(err)
	}
	if l, ok, _ := db.Acquire(ctx, "fetch:x", "b", time.Minute); !ok || l.Previous != "" {
		t.Fatalf("a released lease is free: %+v %v", l, ok)
	}

	// A holder that stops renewing (it died) loses the lease once it
	// expires, and the new holder learns whose it was.
	if _, ok, _ := db.Acquire(ctx, "fetch:y", "dead", 200*time.Millisecond); !ok {
		t.Fatal("acquire")
	}
	if _, ok, _ := db.Acquire(ctx, "fetch:y", "alive", time.Minute); ok {
		t.Fatal("taken over before it expired")
	}
	time.Sleep(300 * time.Millisecond)
	l, ok, err = db.Acquire(ctx, "fetch:y", "alive", time.Minute)
	if err != nil || !ok || l.Previous != "dead" {
		t.Fatalf("takeover: %+v %v %v", l, ok, err)
	}
	if ok, _ := db.Renew(ctx, "fetch:y", "dead", time.Minute); ok {
		t.Fatal("the dead holder renewed a lease it lost")
	}
	ls, err := db.Leases(ctx, "fetch:")
	if err != nil || len(ls) != 2 || ls[1].Holder != "alive" || ls[1].Previous != "dead" {
		t.Fatalf("%+v %v", ls, err)
	}

	// Many contenders: exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	winners := 0
	for i := range 16 {
		wg.Go(func() {
			_, ok, err := db.Acquire(ctx, "fetch:z", string(rune('a'+i)), time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				winners++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if winners != 1 {
		t.Fatalf("%d holders of one lease", winners)
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	db := open(t)
	ctx := context.Background()
	tok, err := db.CreateToken(ctx, "ci-runner-1", policy.Scopes{})
	if err != nil || !strings.HasPrefix(tok, meta.TokenPrefix) || len(tok) < 40 {
		t.Fatalf("%q %v", tok, err)
	}
	// A token quoted in a log line or an error is masked by its format.
	if got := secrets.Mask("token " + tok + " refused"); got != "token "+secrets.Masked+" refused" {
		t.Errorf("a client token is not masked: %q", got)
	}
	if got, ok, err := db.Authenticate(ctx, tok); !ok || err != nil || got.Name != "ci-runner-1" || got.Scopes.Limited() {
		t.Fatalf("%+v %v %v", got, ok, err)
	}
	if _, ok, _ := db.Authenticate(ctx, tok+"x"); ok {
		t.Fatal("a wrong token was accepted")
	}
	if _, err := db.CreateToken(ctx, "ci-runner-1", policy.Scopes{}); !errors.Is(err, meta.ErrTokenExists) {
		t.Fatalf("duplicate name: %v", err)
	}
	if err := db.RevokeToken(ctx, "ci-runner-1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := db.Authenticate(ctx, tok); ok {
		t.Fatal("a revoked token was accepted")
	}
	if err := db.RevokeToken(ctx, "ci-runner-1"); !errors.Is(err, meta.ErrNoToken) {
		t.Fatalf("revoke twice: %v", err)
	}
	tok2, err := db.CreateToken(ctx, "ci-runner-1", policy.Scopes{})
	if err != nil || tok2 == tok {
		t.Fatalf("reuse a revoked name: %v", err)
	}
	for _, bad := range []string{"", "has space", "-dash", strings.Repeat("x", 101), "semi;colon"} {
		if _, err := db.CreateToken(ctx, bad, policy.Scopes{}); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	// Only the hash is stored.
	var n int
	if err := db.SQLDB().QueryRowContext(ctx, `SELECT count(*) FROM tokens WHERE position($1::bytea in hash) > 0`, []byte(tok2)).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the token itself is in the database (%d, %v)", n, err)
	}
}

func TestRefsVerdictsNegatives(t *testing.T) {
	t.Parallel()
	db := open(t)
	ctx := context.Background()
	const repo, a, b = "github.com/o/r", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	if _, ok, err := db.GetRef(ctx, repo, "HEAD"); ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
	if err := db.PutRef(ctx, cache.Ref{Remote: repo, Ref: "HEAD", SHA: a, ETag: `W/"1"`}); err != nil {
		t.Fatal(err)
	}
	r1, _, _ := db.GetRef(ctx, repo, "HEAD")
	// A 304 carries no new ETag: the stored one stays, and the answer is
	// as fresh as the confirmation.
	if err := db.PutRef(ctx, cache.Ref{Remote: repo, Ref: "HEAD", SHA: a}); err != nil {
		t.Fatal(err)
	}
	r2, _, _ := db.GetRef(ctx, repo, "HEAD")
	if r2.ETag != `W/"1"` || r2.ResolvedAt.Before(r1.ResolvedAt.Add(-50*time.Millisecond)) || time.Since(r2.ResolvedAt) > time.Second {
		t.Fatalf("%+v then %+v", r1, r2)
	}
	if err := db.PutRef(ctx, cache.Ref{Remote: repo, Ref: "HEAD", SHA: b, ETag: `W/"2"`}); err != nil {
		t.Fatal(err)
	}
	if r3, _, _ := db.GetRef(ctx, repo, "HEAD"); r3.SHA != b || r3.ETag != `W/"2"` {
		t.Fatalf("%+v", r3)
	}

	// A refusal may be lifted; a commit on a branch or tag stays there.
	if _, ok, _ := db.GetVerdict(ctx, repo, a); ok {
		t.Fatal("no verdict yet")
	}
	for _, put := range []struct{ reachable, want bool }{{false, false}, {true, true}, {false, true}} {
		if err := db.PutVerdict(ctx, cache.Verdict{Remote: repo, SHA: a, Reachable: put.reachable}); err != nil {
			t.Fatal(err)
		}
		if v, ok, err := db.GetVerdict(ctx, repo, a); !ok || err != nil || v.Reachable != put.want || time.Since(v.CheckedAt) > time.Second {
			t.Fatalf("after a verdict of %v: %+v %v %v", put.reachable, v, ok, err)
		}
	}

	if err := db.ReplaceRefs(ctx, repo, map[string]string{"main": a, "v1": b, "bad\x00": a}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := db.PutRefHead(ctx, repo, "main"); err != nil {
		t.Fatal(err)
	}
	if err := db.ReplaceRefs(ctx, repo, map[string]string{"main": a, "v1": b}, time.Now()); err != nil {
		t.Fatal(err)
	}
	refs, err := db.ListRefs(ctx, repo)
	if err != nil || len(refs) != 2 {
		t.Fatalf("%+v %v", refs, err)
	}
	for _, r := range refs {
		if want := map[string]string{"main": a, "v1": b}[r.Ref]; r.SHA != want || time.Since(r.ResolvedAt) > time.Second {
			t.Fatalf("%+v", refs)
		}
	}
	if head, err := db.RefHead(ctx, repo); head != "main" || err != nil {
		t.Fatalf("the default branch: %q %v", head, err)
	}

	// Negative results: in the order asked, a path of any length, the
	// message masked, believed until they expire.
	long := strings.Repeat("plugins/p/", 600)
	now := time.Now()
	for _, n := range []cache.Negative{
		{Kind: "commit", Remote: repo, SHA: b, Code: "install.not_found", Message: "gone from https://u:hunter2secret@git.example.test/x.git"},
		{Kind: "content", Remote: repo, SHA: b, Path: long, Code: "install.budget_exceeded", Message: "too big"},
	} {
		n.Created, n.Expires = now, now.Add(300*time.Millisecond)
		if err := db.PutNegative(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := db.FirstNegative(ctx, repo, now, cache.NegativeKey{Kind: "repo"}, cache.NegativeKey{Kind: "content", SHA: b, Path: long}, cache.NegativeKey{Kind: "commit", SHA: b})
	if !ok || err != nil || got.Kind != "content" || got.Path != long || got.Code != "install.budget_exceeded" || got.Expires.Sub(got.Created) != 300*time.Millisecond {
		t.Fatalf("%+v %v %v", got, ok, err)
	}
	got, ok, _ = db.FirstNegative(ctx, repo, now, cache.NegativeKey{Kind: "commit", SHA: b})
	if !ok || strings.Contains(got.Message, "hunter2secret") || !strings.Contains(got.Message, "gone from") {
		t.Fatalf("%+v %v", got, ok)
	}
	time.Sleep(400 * time.Millisecond)
	if _, ok, _ := db.FirstNegative(ctx, repo, now, cache.NegativeKey{Kind: "commit", SHA: b}); ok {
		t.Fatal("an expired negative result is still believed")
	}
	if err := db.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotsAndAudit(t *testing.T) {
	t.Parallel()
	db := open(t)
	ctx := context.Background()
	const repo, sha = "github.com/o/r", "cccccccccccccccccccccccccccccccccccccccc"
	o := meta.Object{Digest: "sha256:" + strings.Repeat("ab", 32), Size: 10, ArchiveSHA256: strings.Repeat("0", 64), Files: 2, Bytes: 5}
	if err := db.PutSnapshot(ctx, repo, sha, "", o, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.PutSnapshot(ctx, repo, sha, "plugins/a", o, nil); err != nil {
		t.Fatal(err)
	}
	// The first record stands: an object is immutable.
	other := o
	other.Size = 99
	if err := db.PutSnapshot(ctx, repo, sha, "", other, nil); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := db.Snapshot(ctx, repo, sha, ""); !ok || err != nil || got.Object != o || got.Submodules == nil || len(got.Submodules) != 0 {
		t.Fatalf("%+v %v", got, err)
	}
	if err := db.PutMarketplace(ctx, repo, sha, ".claude-plugin/marketplace.json", []byte(`{"name":"m"}`)); err != nil {
		t.Fatal(err)
	}
	if p, doc, ok, err := db.Marketplace(ctx, repo, sha, ""); !ok || err != nil || p != ".claude-plugin/marketplace.json" || string(doc) != `{"name":"m"}` {
		t.Fatalf("%q %q %v %v", p, doc, ok, err)
	}
	if err := db.ForgetObject(ctx, o.Digest); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := db.Snapshot(ctx, repo, sha, "plugins/a"); ok {
		t.Fatal("forgotten object still named")
	}

	for _, e := range []meta.Entry{
		{Client: "alice", Replica: "r1", Action: "resolve", Repo: repo, Outcome: "upstream"},
		{Client: "bob", Replica: "r2", Action: "snapshot", Repo: "github.com/evil/x", Outcome: "blocked", Detail: "github.com/evil"},
	} {
		if err := db.Audit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.AuditLog(ctx, meta.AuditFilter{Outcome: "blocked"})
	if err != nil || len(got) != 1 || got[0].Client != "bob" || got[0].Detail != "github.com/evil" || got[0].At.IsZero() {
		t.Fatalf("%+v %v", got, err)
	}
	all, err := db.AuditLog(ctx, meta.AuditFilter{Since: time.Now().Add(-time.Hour)})
	if err != nil || len(all) != 2 || all[0].Client != "alice" {
		t.Fatalf("%+v %v", all, err)
	}
}

// A token's scopes are stored with it, as written, and come back parsed; a
// revoked name made again takes its new scopes, not the old ones.
func TestTokenScopes(t *testing.T) {
	t.Parallel()
	db := open(t)
	ctx := context.Background()
	sc, err := policy.ParseScopes([]string{"GitHub.com/Acme", "bücher.example/team/tools.git"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := db.CreateToken(ctx, "ci", sc)
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := db.Authenticate(ctx, tok)
	if !ok || err != nil || !slices.Equal(got.Scopes.Rules(), sc.Rules()) || !got.Scopes.Allows("github.com/acme/x") || got.Scopes.Allows("github.com/other/x") {
		t.Fatalf("%+v %v %v", got, ok, err)
	}
	if err := db.RevokeToken(ctx, "ci"); err != nil {
		t.Fatal(err)
	}
	if tok, err = db.CreateToken(ctx, "ci", policy.Scopes{}); err != nil {
		t.Fatal(err)
	}
	if got, ok, err = db.Authenticate(ctx, tok); !ok || err != nil || got.Scopes.Limited() {
		t.Fatalf("made again without scopes: %+v %v %v", got, ok, err)
	}
	// Scopes that no longer parse refuse the token.
	if _, err := db.SQLDB().ExecContext(ctx, `UPDATE tokens SET scopes = ARRAY['not a rule'] WHERE name = 'ci'`); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.Authenticate(ctx, tok); ok || !errors.Is(err, meta.ErrTokenScopes) || !strings.Contains(err.Error(), "not a rule") {
		t.Fatalf("unreadable scopes: %v %v", ok, err)
	}
}

// A snapshot keeps the submodules it holds; one stored before they were
// recorded (NULL) is not found until it is stored again, with them.
func TestSnapshotSubmodules(t *testing.T) {
	t.Parallel()
	db := open(t)
	ctx := context.Background()
	const repo, sha = "github.com/o/r", "dddddddddddddddddddddddddddddddddddddddd"
	o := meta.Object{Digest: "sha256:" + strings.Repeat("cd", 32), Size: 10, ArchiveSHA256: strings.Repeat("0", 64), Files: 2, Bytes: 5}
	subs := []plugind.Submodule{{Path: "lib", URL: "https://github.com/o/lib", Commit: strings.Repeat("e", 40)}}
	if err := db.PutSnapshot(ctx, repo, sha, "", o, subs); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := db.Snapshot(ctx, repo, sha, ""); !ok || err != nil || !slices.Equal(got.Submodules, subs) {
		t.Fatalf("%+v %v %v", got, ok, err)
	}
	if _, err := db.SQLDB().ExecContext(ctx, `UPDATE snapshots SET submodules = NULL`); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.Snapshot(ctx, repo, sha, ""); ok || err != nil {
		t.Fatalf("a row without recorded submodules was found (%v)", err)
	}
	if err := db.PutSnapshot(ctx, repo, sha, "", o, nil); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := db.Snapshot(ctx, repo, sha, ""); !ok || err != nil || got.Submodules == nil || len(got.Submodules) != 0 {
		t.Fatalf("stored again: %+v %v %v", got, ok, err)
	}
}
