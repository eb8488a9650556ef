package cache

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"reasonix.io/plugind"
)

// Read ahead in one query per table or asked one by one, a Session
// answers the same.
func TestSessionLoadAnswersAsLookups(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	now := time.Now()
	var ats []RepoAt
	w := db.Session()
	for i := range 450 { // more than one query takes
		at := RepoAt{Remote: fmt.Sprintf("github.com/o/r%d", i%150), SHA: fmt.Sprintf("%040x", i)}
		ats = append(ats, at)
		if i%3 == 0 {
			continue // nothing stored for this one
		}
		w.PutWhole(at, fmt.Sprintf("sha256:%064x", i))
		w.PutHolding(at, "plugins/p", fmt.Sprintf("sha256:%064x", i+1))
		must(t, w.PutVerdict(ctx, Verdict{Remote: at.Remote, SHA: at.SHA, Reachable: i%2 == 0, CheckedAt: now}))
		w.PutSubmodules(at, []plugind.Submodule{{Path: "vendor/x", URL: "https://example.com/x.git", Commit: at.SHA}})
	}
	must(t, w.PutNegative(ctx, Negative{Kind: "repo", Remote: "github.com/o/r7", Message: "gone", Created: now, Expires: now.Add(time.Hour)}))
	w.PutWhole(RepoAt{"github.com/o/other", ats[1].SHA}, "sha256:"+fmt.Sprintf("%064x", 9))
	must(t, w.Commit(ctx))

	ahead, lazy := db.Session(), db.Session()
	ahead.Load(ctx, ats)
	answer := func(s *Session, at RepoAt) string {
		whole, okW := s.Whole(ctx, at)
		hold, okH := s.Holding(ctx, at, "plugins/p")
		v, okV, err := s.GetVerdict(ctx, at.Remote, at.SHA)
		must(t, err)
		n, okN, err := s.FirstNegative(ctx, at.Remote, now, NegativeKey{Kind: "repo"})
		must(t, err)
		return fmt.Sprint(whole, okW, hold, okH, v.Reachable, okV, n.Message, okN, s.Submodules(ctx, at))
	}
	for i, at := range ats {
		got, want := answer(ahead, at), answer(lazy, at)
		if got != want {
			t.Fatalf("%v: read ahead %s, asked alone %s", at, got, want)
		}
		if _, ok := ahead.Whole(ctx, at); ok == (i%3 == 0) {
			t.Fatalf("%v: stored %v, found %v", at, i%3 != 0, ok)
		}
	}
	if n, ok, _ := ahead.FirstNegative(ctx, "github.com/o/r7", now, NegativeKey{Kind: "repo"}); !ok || n.Message != "gone" {
		t.Fatalf("negative of r7 = %+v %v", n, ok)
	}
}

// A Session sees what it recorded at once; others see it once it is
// committed, in one transaction, even when the resolve was cancelled.
func TestSessionCommit(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	now := time.Now()
	at := RepoAt{"github.com/o/r", "s1"}
	ctx, cancel := context.WithCancel(context.Background())
	s, before := db.Session(), db.Session()
	s.PutWhole(at, "sha256:whole")
	s.PutFolder(at, "p", "sha256:folder")
	must(t, s.PutVerdict(ctx, Verdict{Remote: at.Remote, SHA: at.SHA, Reachable: true, CheckedAt: now}))
	must(t, s.PutNegative(ctx, Negative{Kind: "path", Remote: at.Remote, SHA: at.SHA, Path: "q", Message: "no q", Created: now, Expires: now.Add(time.Hour)}))
	s.PutSubmodules(at, []plugind.Submodule{{Path: "b"}, {Path: "a"}})
	s.PutMarketplace(at.Remote, at.SHA, nil)
	must(t, s.Count(ctx, KindSnapshot, true))
	must(t, s.Count(ctx, KindSnapshot, false))
	s.Touch("sha256:whole", now)
	s.Touch("sha256:whole", now.Add(-time.Hour)) // an older use does not move it back
	must(t, s.PutRef(ctx, Ref{Remote: at.Remote, Ref: "main", SHA: at.SHA, ETag: `"e"`, ResolvedAt: now}))

	bg := context.Background()
	seen := func(s *Session) []bool {
		_, w := s.Whole(bg, at)
		_, f := s.Folder(bg, at, "p")
		_, h := s.Holding(bg, at, "p") // never recorded
		_, v, _ := s.GetVerdict(bg, at.Remote, at.SHA)
		_, n, _ := s.FirstNegative(bg, at.Remote, now, NegativeKey{Kind: "path", SHA: at.SHA, Path: "q"})
		_, m := s.Marketplace(bg, at.Remote, at.SHA)
		r, _, _ := s.GetRef(bg, at.Remote, "main")
		return []bool{w, f, h, v, n, m, len(s.Submodules(bg, at)) == 2, r.SHA == at.SHA && r.ETag == `"e"`}
	}
	all := []bool{true, true, false, true, true, true, true, true}
	if got := seen(s); !slices.Equal(got, all) {
		t.Fatalf("the Session's own writes: %v, want %v", got, all)
	}
	if got := seen(before); slices.Contains(got, true) {
		t.Fatalf("another Session saw uncommitted writes: %v", got)
	}
	cancel()
	must(t, s.Commit(ctx))
	if got := seen(db.Session()); !slices.Equal(got, all) {
		t.Fatalf("after Commit, a new Session: %v, want %v", got, all)
	}
	stats, err := db.Stats(context.Background())
	must(t, err)
	if c := stats[KindSnapshot]; c.Hits != 1 || c.Misses != 1 {
		t.Fatalf("counts = %+v", c)
	}
	uses, err := db.SnapshotUses(context.Background())
	must(t, err)
	if !uses["sha256:whole"].Equal(now) {
		t.Fatalf("last use = %v, want %v", uses["sha256:whole"], now)
	}
	if err := s.Commit(ctx); err != nil {
		t.Fatalf("a second Commit with nothing new: %v", err)
	}
}

// A bad record fails the whole commit: nothing of it is written.
func TestSessionCommitIsOneTransaction(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	s := db.Session()
	s.PutWhole(RepoAt{"r", "s"}, "sha256:x")
	must(t, s.Count(ctx, "", true))
	if err := s.Commit(ctx); err == nil {
		t.Fatal("a count of no kind was committed")
	}
	if _, ok := db.Session().Whole(ctx, RepoAt{"r", "s"}); ok {
		t.Fatal("a failed commit wrote part of what it held")
	}
	for _, bad := range []error{
		s.PutVerdict(ctx, Verdict{Remote: "r"}),
		s.PutNegative(ctx, Negative{Remote: "r"}),
		s.PutRef(ctx, Ref{Remote: "r", Ref: "main"}),
	} {
		if bad == nil {
			t.Error("a record without its key was taken")
		}
	}
}

// CommitLater returns at once; what it writes is read by the next Session
// and by Stats, and its failure handed over and counted before Failures
// answers, as a Commit's would be.
func TestSessionCommitLater(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	at := RepoAt{"github.com/o/r", "s1"}
	s := db.Session()
	s.PutWhole(at, "sha256:whole")
	must(t, s.Count(ctx, KindSnapshot, true))
	s.CommitLater(ctx, func(err error) { t.Errorf("commit failed: %v", err) })
	if _, ok := db.Session().Whole(ctx, at); !ok {
		t.Fatal("a later Session did not see what CommitLater wrote")
	}
	stats, err := db.Stats(ctx)
	must(t, err)
	if c := stats[KindSnapshot]; c.Hits != 1 {
		t.Fatalf("counts = %+v", c)
	}
	bad := db.Session()
	must(t, bad.Count(ctx, "", true))
	var failed error
	bad.CommitLater(ctx, func(err error) { failed = err })
	if n, _, _ := db.Failures(); n == 0 || failed == nil {
		t.Fatalf("a failed commit: %d failures counted, handed %v", n, failed)
	}
}

// A ref listing goes to the database at once, after the ref resolutions
// the Session keeps of that repository, and replaces them as it did when
// they were written as they came.
func TestSessionRefListing(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	now := time.Now()
	s := db.Session()
	must(t, s.PutRef(ctx, Ref{Remote: "r", Ref: "main", SHA: "s1", ResolvedAt: now}))
	must(t, s.PutRef(ctx, Ref{Remote: "other", Ref: "main", SHA: "s9", ResolvedAt: now}))
	refs, err := s.ListRefs(ctx, "r")
	must(t, err)
	if len(refs) != 1 || refs[0].SHA != "s1" {
		t.Fatalf("listing after a kept resolution: %+v", refs)
	}
	if _, ok, _ := db.GetRef(ctx, "other", "main"); ok {
		t.Fatal("another repository's kept resolution was written before Commit")
	}
	must(t, s.ReplaceRefs(ctx, "r", map[string]string{"dev": "s2"}, now))
	if _, ok, _ := s.GetRef(ctx, "r", "main"); ok {
		t.Fatal("a ref the new listing does not advertise is still known")
	}
	must(t, s.Commit(ctx))
	if r, ok, _ := db.GetRef(ctx, "other", "main"); !ok || r.SHA != "s9" {
		t.Fatalf("after Commit: %+v %v", r, ok)
	}
}

// No cache: a nil Session remembers nothing and answers every lookup with
// a miss.
func TestNilSession(t *testing.T) {
	t.Parallel()
	var db *DB
	s := db.Session()
	ctx := context.Background()
	at := RepoAt{"r", "s"}
	s.Load(ctx, []RepoAt{at})
	s.PutWhole(at, "sha256:x")
	must(t, s.Count(ctx, KindSnapshot, true))
	if _, ok := s.Whole(ctx, at); ok {
		t.Fatal("a nil Session remembered")
	}
	if _, ok, err := s.GetVerdict(ctx, "r", "s"); ok || err != nil {
		t.Fatalf("verdict: %v %v", ok, err)
	}
	must(t, s.PutRef(ctx, Ref{Remote: "r", Ref: "main", SHA: "s"}))
	must(t, s.ReplaceRefs(ctx, "r", map[string]string{"main": "s"}, time.Now()))
	if _, ok, err := s.GetRef(ctx, "r", "main"); ok || err != nil {
		t.Fatalf("ref: %v %v", ok, err)
	}
	if refs, err := s.ListRefs(ctx, "r"); len(refs) != 0 || err != nil {
		t.Fatalf("refs: %v %v", refs, err)
	}
	must(t, s.Commit(ctx))
}
