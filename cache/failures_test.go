package cache

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestFailuresAreAbsorbedAndCounted: once the storage is gone, lookups are
// misses (not errors), writes return their error, and Failures counts both,
// logging only the first.
func TestFailuresAreAbsorbedAndCounted(t *testing.T) {
	t.Parallel()
	var logBuf bytes.Buffer
	path := seeded(t)
	db, err := OpenWith(context.Background(), path, Options{Log: slog.New(slog.NewTextHandler(&logBuf, nil))})
	must(t, err)
	ctx := context.Background()
	if n, _, _ := db.Failures(); n != 0 {
		t.Fatalf("failures before anything failed: %d", n)
	}
	// Closing the pool makes every statement fail, as a vanished or
	// unreadable file does.
	must(t, db.sql.Close())

	lookups := []struct {
		name string
		get  func() (bool, error)
	}{
		{"plan", func() (bool, error) { _, ok, err := db.GetPlan(ctx, "p"); return ok, err }},
		{"ref", func() (bool, error) { _, ok, err := db.GetRef(ctx, "r", "main"); return ok, err }},
		{"snapshot", func() (bool, error) { _, ok := db.Session().Whole(ctx, RepoAt{"r", "s"}); return ok, nil }},
		{"marketplace", func() (bool, error) { _, ok, err := db.marketplace(ctx, "r", "s"); return ok, err }},
		{"inventory", func() (bool, error) { _, ok, err := db.getInventory(ctx, "k"); return ok, err }},
	}
	for _, l := range lookups {
		if ok, err := l.get(); ok || err != nil {
			t.Errorf("%s lookup on failed storage: ok=%v err=%v, want a plain miss", l.name, ok, err)
		}
	}
	if err := db.PutRef(ctx, Ref{Remote: "r", Ref: "main", SHA: "s"}); err == nil {
		t.Fatal("write on failed storage reported success")
	}
	n, op, last := db.Failures()
	if n != int64(len(lookups))+1 || op != "write" || last == nil || !strings.HasPrefix(last.Error(), "put ref: ") {
		t.Fatalf("Failures() = %d, %q, %v", n, op, last)
	}
	if got := strings.Count(logBuf.String(), "cache operation failed"); got != 1 {
		t.Fatalf("logged %d times, want once:\n%s", got, logBuf.String())
	}
}

// A cancelled lookup is the caller's doing: it is an error, and not counted.
func TestCancelledLookupIsNotAFailure(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := db.GetPlan(ctx, "p"); err == nil {
		t.Fatal("cancelled lookup returned no error")
	}
	if err := db.PutRef(ctx, Ref{Remote: "r", Ref: "m", SHA: "s"}); err == nil {
		t.Fatal("cancelled write returned no error")
	}
	if n, _, last := db.Failures(); n != 0 {
		t.Fatalf("cancellation counted as %d failures: %v", n, last)
	}
}
