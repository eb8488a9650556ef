package cache

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
)

func openTemp(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cache", "cache.db")
	db, err := OpenWith(context.Background(), path, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func TestOpenCreatesParentAndWAL(t *testing.T) {
	t.Parallel()
	// Characters that would break a naive DSN ('?', '#', '%', space).
	dir := filepath.Join(t.TempDir(), "odd ?#% dir", "cache")
	db, err := OpenWith(context.Background(), filepath.Join(dir, "cache.db"), Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	if _, err := os.Stat(filepath.Join(dir, "cache.db")); err != nil {
		t.Fatalf("database file not created where asked: %v", err)
	}
	for pragma, want := range map[string]string{
		"journal_mode": "wal", "busy_timeout": "10000", "foreign_keys": "1", "synchronous": "1",
	} {
		var got string
		if err := db.sql.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", pragma, err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %q, want %q", pragma, got, want)
		}
	}
}

func TestRoundTrips(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	at := time.Date(2026, 3, 4, 5, 6, 7, 891011, time.UTC)
	sha := "0123456789abcdef0123456789abcdef01234567"
	digest := "sha256:" + string(bytes.Repeat([]byte("ab"), 32))

	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"ref", func(t *testing.T) {
			if _, ok, err := db.GetRef(ctx, "github.com/o/r", "main"); ok || err != nil {
				t.Fatalf("GetRef before put = %v, %v; want miss", ok, err)
			}
			want := Ref{Remote: "github.com/o/r", Ref: "main", SHA: sha, ETag: `W/"x"`, ResolvedAt: at}
			if err := db.PutRef(ctx, want); err != nil {
				t.Fatal(err)
			}
			got, ok, err := db.GetRef(ctx, want.Remote, want.Ref)
			if err != nil || !ok {
				t.Fatalf("GetRef = %v, %v", ok, err)
			}
			if got.SHA != want.SHA || got.ETag != want.ETag || !got.ResolvedAt.Equal(at) || got.Remote != want.Remote || got.Ref != want.Ref {
				t.Fatalf("GetRef = %+v, want %+v", got, want)
			}
			// Replacing keeps one row with the new values.
			want.SHA, want.ETag = "fedcba9876543210fedcba9876543210fedcba98", ""
			if err := db.PutRef(ctx, want); err != nil {
				t.Fatal(err)
			}
			got, _, _ = db.GetRef(ctx, want.Remote, want.Ref)
			if got.SHA != want.SHA || got.ETag != "" {
				t.Fatalf("after replace GetRef = %+v", got)
			}
			if err := db.PutRef(ctx, Ref{Remote: "x", Ref: "y"}); err == nil {
				t.Fatal("PutRef without SHA succeeded")
			}
		}},
		{"snapshot", func(t *testing.T) {
			if _, ok, err := db.getSnapshot(ctx, "github.com/o/r", sha, "plugins/a"); ok || err != nil {
				t.Fatalf("miss expected, got %v %v", ok, err)
			}
			if err := db.putSnapshot(ctx, "github.com/o/r", sha, "plugins/a", digest); err != nil {
				t.Fatal(err)
			}
			got, ok, err := db.getSnapshot(ctx, "github.com/o/r", sha, "plugins/a")
			if err != nil || !ok || got != digest {
				t.Fatalf("GetSnapshot = %q %v %v", got, ok, err)
			}
			// The subdir is part of the key: the root is a different entry.
			if _, ok, _ := db.getSnapshot(ctx, "github.com/o/r", sha, ""); ok {
				t.Fatal("root subdir hit a plugins/a entry")
			}
		}},
		{"inventory", func(t *testing.T) {
			if _, ok, err := db.getInventory(ctx, "k1"); ok || err != nil {
				t.Fatalf("miss expected, got %v %v", ok, err)
			}
			if err := db.putInventory(ctx, "k1", []byte(`{"name":"x"}`)); err != nil {
				t.Fatal(err)
			}
			got, ok, err := db.getInventory(ctx, "k1")
			if err != nil || !ok || string(got) != `{"name":"x"}` {
				t.Fatalf("GetInventory = %q %v %v", got, ok, err)
			}
			if err := db.putInventory(ctx, "", []byte("x")); err == nil {
				t.Fatal("PutInventory without a key succeeded")
			}
		}},
		{"marketplace", func(t *testing.T) {
			doc := []byte(`{"name":"m","plugins":[]}` + "\x00\xff")
			if err := db.putMarketplace(ctx, "github.com/o/m", sha, doc); err != nil {
				t.Fatal(err)
			}
			got, ok, err := db.marketplace(ctx, "github.com/o/m", sha)
			if err != nil || !ok || !bytes.Equal(got, doc) {
				t.Fatalf("marketplace = %q %v %v", got, ok, err)
			}
			if err := db.putMarketplace(ctx, "github.com/o/empty", sha, nil); err != nil {
				t.Fatal(err)
			}
			got, ok, err = db.marketplace(ctx, "github.com/o/empty", sha)
			if err != nil || !ok || got == nil || len(got) != 0 {
				t.Fatalf("empty document = %q %v %v; want a hit with empty bytes", got, ok, err)
			}
		}},
		{"plan", func(t *testing.T) {
			body := []byte(`{"planId":"low:sha256:00"}`)
			if err := db.PutPlan(ctx, "low:sha256:00", body, []string{digest, digest, ""}); err != nil {
				t.Fatal(err)
			}
			// Idempotent: a second identical put is fine and changes nothing visible.
			if err := db.PutPlan(ctx, "low:sha256:00", body, []string{digest}); err != nil {
				t.Fatal(err)
			}
			got, ok, err := db.GetPlan(ctx, "low:sha256:00")
			if err != nil || !ok || !bytes.Equal(got, body) {
				t.Fatalf("GetPlan = %q %v %v", got, ok, err)
			}
			if _, ok, _ := db.GetPlan(ctx, "low:sha256:11"); ok {
				t.Fatal("unknown plan found")
			}
		}},
		{"snapshot use", func(t *testing.T) {
			d := "sha256:" + string(bytes.Repeat([]byte("cd"), 32))
			if err := db.touchSnapshot(ctx, d, at); err != nil {
				t.Fatal(err)
			}
			// An older touch arriving late must not move the time back.
			if err := db.touchSnapshot(ctx, d, at.Add(-time.Hour)); err != nil {
				t.Fatal(err)
			}
			uses, err := db.SnapshotUses(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !uses[d].Equal(at) {
				t.Fatalf("last use = %v, want %v", uses[d], at)
			}
			if err := db.touchSnapshot(ctx, d, at.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			uses, _ = db.SnapshotUses(ctx)
			if !uses[d].Equal(at.Add(time.Hour)) {
				t.Fatalf("last use = %v, want %v", uses[d], at.Add(time.Hour))
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}

func TestLivePlanDigestsAndPrune(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	dA, dB, dC := "sha256:"+fmt.Sprintf("%064x", 1), "sha256:"+fmt.Sprintf("%064x", 2), "sha256:"+fmt.Sprintf("%064x", 3)
	if err := db.PutPlan(ctx, "old", []byte("o"), []string{dA, dB}); err != nil {
		t.Fatal(err)
	}
	// created_at has nanosecond resolution; make the boundary unambiguous.
	time.Sleep(5 * time.Millisecond)
	cut := time.Now()
	time.Sleep(5 * time.Millisecond)
	if err := db.PutPlan(ctx, "new", []byte("n"), []string{dB, dC}); err != nil {
		t.Fatal(err)
	}
	live, err := db.LivePlanDigests(ctx, cut)
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 2 || !live[dB] || !live[dC] {
		t.Fatalf("live since cut = %v, want {B, C}", live)
	}
	all, _ := db.LivePlanDigests(ctx, time.Time{})
	if len(all) != 3 {
		t.Fatalf("live since zero = %v, want all three", all)
	}
	n, err := db.PrunePlans(ctx, cut)
	if err != nil || n != 1 {
		t.Fatalf("PrunePlans = %d, %v; want 1", n, err)
	}
	if _, ok, _ := db.GetPlan(ctx, "old"); ok {
		t.Fatal("pruned plan still there")
	}
	var orphans int
	if err := db.sql.QueryRow(`SELECT count(*) FROM plan_snapshots WHERE plan_id = 'old'`).Scan(&orphans); err != nil {
		t.Fatal(err)
	}
	if orphans != 0 {
		t.Fatalf("%d plan_snapshots rows outlived their plan (foreign keys off?)", orphans)
	}
	// Re-putting renews a plan: it becomes live again.
	if err := db.PutPlan(ctx, "new", []byte("n"), []string{dA}); err != nil {
		t.Fatal(err)
	}
	live, _ = db.LivePlanDigests(ctx, cut)
	if len(live) != 1 || !live[dA] {
		t.Fatalf("after re-put live = %v, want only A", live)
	}
}

func TestLoadInventories(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	// More keys than one query takes, half of them stored.
	var keys []string
	want := map[string]string{}
	w := db.Session()
	for i := range 1203 {
		k := fmt.Sprintf("manifest/v1\x00sha256:%064x\x00p%d", i, i)
		keys = append(keys, k)
		if i%2 == 0 {
			want[k] = fmt.Sprintf(`{"n":%d}`, i)
			must(t, w.PutInventory(k, []byte(want[k])))
		}
	}
	must(t, w.Commit(ctx))
	ahead, lazy := db.Session(), db.Session()
	ahead.LoadInventories(ctx, append(keys, keys[0]))
	for _, k := range keys {
		got, ok := ahead.Inventory(ctx, k)
		one, found := lazy.Inventory(ctx, k)
		if string(got) != want[k] || ok != (want[k] != "") || string(one) != string(got) || found != ok {
			t.Fatalf("inventory %q = %q %v (alone %q %v), want %q", k, got, ok, one, found, want[k])
		}
	}
}

func TestFirstNegative(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	now := time.Now()
	put := func(kind, remote, sha string, expires time.Time) {
		t.Helper()
		err := db.putNegative(ctx, Negative{Kind: kind, Remote: remote, SHA: sha, Code: "c-" + kind, Message: kind + " " + sha, Created: now.Add(-time.Minute), Expires: expires})
		if err != nil {
			t.Fatal(err)
		}
	}
	put("commit", "r", "s1", now.Add(time.Hour))
	put("repo", "gone", "", now.Add(time.Hour))
	put("commit", "gone", "s1", now.Add(time.Hour))
	put("commit", "r", "old", now.Add(-time.Second)) // expired
	repo := NegativeKey{Kind: "repo"}
	tests := []struct {
		remote string
		keys   []NegativeKey
		want   string // Message; "" = none
	}{
		{"r", []NegativeKey{repo, {Kind: "commit", SHA: "s1"}}, "commit s1"},
		{"gone", []NegativeKey{repo, {Kind: "commit", SHA: "s1"}}, "repo "},        // the first key wins
		{"gone", []NegativeKey{{Kind: "commit", SHA: "s1"}, repo}, "commit s1"},    // in the caller's order
		{"r", []NegativeKey{repo, {Kind: "commit", SHA: "old"}}, ""},               // expired
		{"r", []NegativeKey{repo, {Kind: "commit-or-unreachable", SHA: "s1"}}, ""}, // another kind
		{"other", []NegativeKey{repo, {Kind: "commit", SHA: "s1"}}, ""},            // another remote
		{"r", nil, ""},
	}
	for _, tc := range tests {
		n, ok, err := db.Session().FirstNegative(ctx, tc.remote, now, tc.keys...)
		if err != nil {
			t.Fatal(err)
		}
		if got := map[bool]string{true: n.Message}[ok]; got != tc.want {
			t.Errorf("FirstNegative(%s, %v) = %q (found %v), want %q", tc.remote, tc.keys, n.Message, ok, tc.want)
		}
		if ok && (n.Remote != tc.remote || n.Code != "c-"+n.Kind || !n.Expires.After(now)) {
			t.Errorf("FirstNegative(%s) = %+v: fields not read back", tc.remote, n)
		}
	}
}

func TestRenewPlan(t *testing.T) {
	t.Parallel()
	dA, dB, dC := "sha256:"+fmt.Sprintf("%064x", 1), "sha256:"+fmt.Sprintf("%064x", 2), "sha256:"+fmt.Sprintf("%064x", 3)
	tests := []struct {
		name    string
		stored  []string // nil: no plan stored
		renew   []string
		renewed bool
	}{
		{"same digests", []string{dA, dB}, []string{dB, dA, dA, ""}, true},
		{"no digests", []string{}, []string{""}, true},
		{"a digest more", []string{dA}, []string{dA, dB}, false},
		{"a digest less", []string{dA, dB}, []string{dA}, false},
		{"another digest", []string{dA, dB}, []string{dA, dC}, false},
		{"no such plan", nil, []string{dA}, false},
		{"no such plan, no digests", nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db, _ := openTemp(t)
			ctx := context.Background()
			if tc.stored != nil {
				if err := db.PutPlan(ctx, "p", []byte("body"), tc.stored); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(5 * time.Millisecond)
			cut := time.Now()
			time.Sleep(5 * time.Millisecond)
			renewed, err := db.RenewPlan(ctx, "p", tc.renew)
			if err != nil || renewed != tc.renewed {
				t.Fatalf("RenewPlan = %v, %v; want %v", renewed, err, tc.renewed)
			}
			if tc.stored == nil {
				if _, ok, _ := db.GetPlan(ctx, "p"); ok {
					t.Fatal("renewing a plan that was never stored stored one")
				}
				return
			}
			if len(tc.stored) > 0 {
				// GC keeps a renewed plan's snapshots: it is live since the cut.
				live, err := db.LivePlanDigests(ctx, cut)
				if err != nil {
					t.Fatal(err)
				}
				if (len(live) > 0) != tc.renewed {
					t.Fatalf("live since the cut = %v, want live exactly when renewed (%v)", live, tc.renewed)
				}
			}
			// Pruning up to the cut keeps a renewed plan and drops the rest.
			pruned, err := db.PrunePlans(ctx, cut)
			if err != nil {
				t.Fatal(err)
			}
			if (pruned == 0) != tc.renewed {
				t.Fatalf("PrunePlans(cut) pruned %d; want the plan kept exactly when renewed (%v)", pruned, tc.renewed)
			}
			if body, ok, _ := db.GetPlan(ctx, "p"); tc.renewed && (!ok || string(body) != "body") {
				t.Fatalf("body = %q (%v), want it untouched", body, ok)
			}
		})
	}
}

func TestForgetSnapshots(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	gone, kept := "sha256:"+fmt.Sprintf("%064x", 7), "sha256:"+fmt.Sprintf("%064x", 8)
	must(t, db.putSnapshot(ctx, "r", "s1", "", gone))
	must(t, db.putSnapshot(ctx, "r", "s2", "", kept))
	must(t, db.touchSnapshot(ctx, gone, time.Now()))
	must(t, db.touchSnapshot(ctx, kept, time.Now()))
	must(t, db.ForgetSnapshots(ctx, []string{gone}))
	if _, ok, _ := db.getSnapshot(ctx, "r", "s1", ""); ok {
		t.Fatal("forgotten snapshot still mapped")
	}
	if _, ok, _ := db.getSnapshot(ctx, "r", "s2", ""); !ok {
		t.Fatal("kept snapshot lost")
	}
	uses, _ := db.SnapshotUses(ctx)
	if _, ok := uses[gone]; ok || len(uses) != 1 {
		t.Fatalf("uses after forget = %v", uses)
	}
}

func TestStats(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	for _, c := range []struct {
		kind string
		hit  bool
		n    int
	}{{KindRef, true, 3}, {KindRef, false, 1}, {KindPlan, false, 2}, {"custom", true, 1}} {
		for i := 0; i < c.n; i++ {
			must(t, db.count(ctx, c.kind, c.hit))
		}
	}
	must(t, db.PutRef(ctx, Ref{Remote: "r", Ref: "main", SHA: "s"}))
	must(t, db.PutRef(ctx, Ref{Remote: "r", Ref: "dev", SHA: "s"}))
	must(t, db.putMarketplace(ctx, "r", "s", []byte("{}")))
	st, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]HitMiss{
		KindRef:         {Hits: 3, Misses: 1, Rate: 0.75, Rows: 2},
		KindPlan:        {Misses: 2, Rate: 0},
		KindSnapshot:    {},
		KindMarketplace: {Rows: 1},
		"custom":        {Hits: 1, Rate: 1},
	}
	if len(st) != len(want) {
		t.Fatalf("Stats = %+v, want %+v", st, want)
	}
	for k, w := range want {
		if st[k] != w {
			t.Errorf("Stats[%s] = %+v, want %+v", k, st[k], w)
		}
	}
	if err := db.count(ctx, "", true); err == nil {
		t.Error("Count with an empty kind succeeded")
	}
}

func TestReopenIsIdempotent(t *testing.T) {
	t.Parallel()
	db, path := openTemp(t)
	ctx := context.Background()
	must(t, db.PutRef(ctx, Ref{Remote: "r", Ref: "main", SHA: "abc"}))
	must(t, db.Close())
	for i := 0; i < 3; i++ {
		db2, err := OpenWith(ctx, path, Options{})
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		if r, ok, err := db2.GetRef(ctx, "r", "main"); err != nil || !ok || r.SHA != "abc" {
			t.Fatalf("reopen %d lost data: %+v %v %v", i, r, ok, err)
		}
		var applied int
		if err := db2.sql.QueryRow(`SELECT count(*) FROM goose_db_version WHERE version_id = 1`).Scan(&applied); err != nil {
			t.Fatal(err)
		}
		if applied != 1 {
			t.Fatalf("migration 1 recorded %d times", applied)
		}
		must(t, db2.Close())
	}
}

// Many goroutines over two handles on one file, all writing at once: with
// BEGIN IMMEDIATE and the busy timeout none may fail with SQLITE_BUSY.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	db1, path := openTemp(t)
	db2, err := OpenWith(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	const workers, each = 16, 25
	var g errgroup.Group
	ctx := context.Background()
	for w := 0; w < workers; w++ {
		db := db1
		if w%2 == 1 {
			db = db2
		}
		g.Go(func() error {
			for i := 0; i < each; i++ {
				if err := db.count(ctx, KindSnapshot, i%2 == 0); err != nil {
					return err
				}
				if err := db.PutPlan(ctx, fmt.Sprintf("p-%d-%d", w, i), []byte("b"), []string{"d1", "d2"}); err != nil {
					return err
				}
				if _, _, err := db.GetPlan(ctx, fmt.Sprintf("p-%d-%d", w, i)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("concurrent write failed: %v", err)
	}
	st, err := db2.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := st[KindSnapshot].Hits + st[KindSnapshot].Misses; got != workers*each {
		t.Fatalf("counted %d lookups, want %d (lost updates)", got, workers*each)
	}
	if st[KindPlan].Rows != workers*each {
		t.Fatalf("%d plans stored, want %d", st[KindPlan].Rows, workers*each)
	}
}

// Several handles opening (and so migrating) one fresh file at once.
func TestConcurrentOpenOfFreshFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cache.db")
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := OpenWith(context.Background(), path, Options{})
			if err != nil {
				errs <- err
				return
			}
			errs <- db.count(context.Background(), KindRef, true)
			db.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent open: %v", err)
		}
	}
}

const helperEnv = "REASONIX_CACHE_TEST_HELPER"

// TestMain doubles as the second process of TestTwoProcessWriters: re-run
// with helperEnv set, the test binary does that process's writes instead of
// running tests.
func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		os.Exit(helperProcess(path))
	}
	os.Exit(m.Run())
}

func helperProcess(path string) int {
	n, _ := strconv.Atoi(os.Getenv(helperEnv + "_N"))
	ctx := context.Background()
	db, err := OpenWith(ctx, path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer db.Close()
	for i := 0; i < n; i++ {
		if err := db.count(ctx, KindRef, true); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	}
	return 0
}

func TestTwoProcessWriters(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cache", "cache.db")
	const perProc = 150
	var g errgroup.Group
	for p := 0; p < 2; p++ {
		g.Go(func() error {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), helperEnv+"="+path, helperEnv+"_N="+strconv.Itoa(perProc))
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("helper: %v: %s", err, out)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	db, err := OpenWith(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st[KindRef].Hits != 2*perProc {
		t.Fatalf("hits = %d, want %d", st[KindRef].Hits, 2*perProc)
	}
}

func TestCancelledContext(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := db.PutRef(ctx, Ref{Remote: "r", Ref: "m", SHA: "s"}); err == nil {
		t.Fatal("write with a cancelled context succeeded")
	}
	if _, ok, _ := db.GetRef(context.Background(), "r", "m"); ok {
		t.Fatal("cancelled write left a row")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
