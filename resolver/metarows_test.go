package resolver

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"reasonix.io/plugind/cache"
)

// Read ahead or asked one by one, resolveMeta answers the same: negatives
// (first in the caller's order, expired ones never), verdicts, and what
// the Resolve records meanwhile.
func TestMetaRowsAnswerAsTheCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestCache(t)
	now := time.Now()
	neg := func(kind, remote, sha string, expires time.Time) cache.Negative {
		return cache.Negative{Kind: kind, Remote: remote, SHA: sha, Code: "c", Message: kind + " " + remote, Created: now.Add(-time.Minute), Expires: expires}
	}
	for _, n := range []cache.Negative{
		neg("repo", "a", "", now.Add(time.Hour)),
		neg("commit", "a", "s", now.Add(time.Hour)),
		neg("commit", "b", "s", now.Add(time.Hour)),
		neg("commit", "c", "s", now.Add(-time.Second)), // expired
	} {
		if err := db.PutNegative(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutVerdict(ctx, cache.Verdict{Remote: "b", SHA: "s", Reachable: true, CheckedAt: now}); err != nil {
		t.Fatal(err)
	}
	var uses useLog
	meta := resolveMeta{db, &uses}
	ahead := withMetaRows(ctx)
	ats := []cache.RepoAt{{Remote: "a", SHA: "s"}, {Remote: "b", SHA: "s"}, {Remote: "c", SHA: "s"}, {Remote: "d", SHA: "s"}}
	ahead.Value(metaRowsKey{}).(*metaRows).preload(ahead, db, ats, now)
	if _, ok := metaRowsOf(ahead, "d"); !ok {
		t.Fatal("negatives were not read ahead")
	}

	check := func(when string) {
		t.Helper()
		keys := []cache.NegativeKey{{Kind: "repo"}, {Kind: "commit", SHA: "s"}}
		for _, at := range ats {
			for _, order := range [][]cache.NegativeKey{keys, {keys[1], keys[0]}} {
				want, wok, _ := db.FirstNegative(ctx, at.Remote, now, order...)
				got, gok, err := meta.FirstNegative(ahead, at.Remote, now, order...)
				if err != nil || gok != wok || got.Message != want.Message || got.Kind != want.Kind {
					t.Errorf("%s: negative of %s (%v) = %q %v, the cache says %q %v", when, at.Remote, order, got.Message, gok, want.Message, wok)
				}
			}
			want, wok, _ := db.GetVerdict(ctx, at.Remote, at.SHA)
			got, gok, err := meta.GetVerdict(ahead, at.Remote, at.SHA)
			if err != nil || gok != wok || got.Reachable != want.Reachable || !got.CheckedAt.Equal(want.CheckedAt) {
				t.Errorf("%s: verdict of %v = %+v %v, the cache says %+v %v", when, at, got, gok, want, wok)
			}
		}
	}
	check("read ahead")
	// What the Resolve records is seen by its later lookups.
	if err := meta.PutNegative(ahead, neg("repo", "d", "", now.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if err := meta.PutVerdict(ahead, cache.Verdict{Remote: "d", SHA: "s", Reachable: false, CheckedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := meta.PutNegative(ahead, neg("commit", "b", "s", now.Add(-time.Second))); err != nil { // b's negative expires
		t.Fatal(err)
	}
	check("after the Resolve recorded more")
	if n, ok, _ := meta.FirstNegative(ahead, "d", now, cache.NegativeKey{Kind: "repo"}); !ok || n.Message != "repo d" {
		t.Fatalf("a negative recorded during the Resolve is not seen: %+v %v", n, ok)
	}
	if err := meta.Count(ahead, "verdict", true); err != nil || uses.counts["verdict"].Hits != 1 {
		t.Fatalf("counts are not batched: %v %+v", err, uses.counts)
	}
}

// Snapshot records put under snapWrites reach the database in one go at
// flushSnapWrites; the Resolve's snapRows see them at once.
func TestSnapWritesWaitForFlush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTestCache(t)
	var uses useLog
	m := memo{db: db, onError: func(err error) { t.Error(err) }, uses: &uses}
	rctx := withSnapRows(ctx)
	if _, ok := m.snapshot(rctx, "r", "s", "/a"); ok { // loads r@s's (empty) records
		t.Fatal("a record before any was put")
	}
	wctx := withSnapWrites(rctx)
	digest := "sha256:" + fmt.Sprintf("%064x", 1)
	m.putSnapshot(wctx, "r", "s", "/a", digest)
	if got, _ := db.GetSnapshots(ctx, "r", "s"); len(got) != 0 {
		t.Fatalf("written before the flush: %v", got)
	}
	if d, ok := m.snapshot(wctx, "r", "s", "/a"); !ok || d != digest {
		t.Fatalf("the Resolve does not see its own record: %q %v", d, ok)
	}
	m.flushSnapWrites(wctx)
	if got, _ := db.GetSnapshots(ctx, "r", "s"); got["/a"] != digest {
		t.Fatalf("not written by the flush: %v", got)
	}
}

func openTestCache(t *testing.T) *cache.DB {
	t.Helper()
	db, err := cache.Open(context.Background(), filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
