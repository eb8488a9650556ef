package cache

import (
	"context"
	"testing"
	"time"
)

// RecordUses adds to the counters and keeps the latest use of each
// snapshot, as Count and TouchSnapshot one by one would; bad input fails
// the whole batch.
func TestRecordUses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openTemp(t)
	t0 := time.Unix(1_800_000_000, 0).UTC()
	if err := db.Count(ctx, KindSnapshot, true); err != nil {
		t.Fatal(err)
	}
	if err := db.TouchSnapshot(ctx, "sha256:a", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	err := db.RecordUses(ctx,
		map[string]HitMiss{KindSnapshot: {Hits: 2, Misses: 1}, "custom": {Misses: 3}},
		map[string]time.Time{"sha256:a": t0, "sha256:b": t0})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := stats[KindSnapshot]; got.Hits != 3 || got.Misses != 1 {
		t.Errorf("snapshot counts %+v, want 3 hits 1 miss", got)
	}
	if got := stats["custom"]; got.Hits != 0 || got.Misses != 3 {
		t.Errorf("custom counts %+v", got)
	}
	uses, err := db.SnapshotUses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !uses["sha256:a"].Equal(t0.Add(time.Hour)) || !uses["sha256:b"].Equal(t0) {
		t.Errorf("uses %v: an older use must not move a snapshot back", uses)
	}
	tests := []struct {
		name   string
		counts map[string]HitMiss
		uses   map[string]time.Time
	}{
		{"empty kind", map[string]HitMiss{"": {Hits: 1}}, map[string]time.Time{"sha256:c": t0}},
		{"empty digest", map[string]HitMiss{"x": {Hits: 1}}, map[string]time.Time{"": t0}},
	}
	for _, tt := range tests {
		if err := db.RecordUses(ctx, tt.counts, tt.uses); err == nil {
			t.Errorf("%s: accepted", tt.name)
		}
	}
	if uses, _ := db.SnapshotUses(ctx); !uses["sha256:c"].IsZero() {
		t.Error("a refused batch was partly written")
	}
	if err := db.RecordUses(ctx, nil, nil); err != nil {
		t.Errorf("nothing to record: %v", err)
	}
}

// GetSnapshots returns every record of one (remote, SHA), none of another.
func TestGetSnapshots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openTemp(t)
	puts := []struct{ remote, sha, subdir, digest string }{
		{"github.com/a/b", "s1", "", "sha256:full"},
		{"github.com/a/b", "s1", "@plugins/x", "sha256:part"},
		{"github.com/a/b", "s1", "/plugins/x", "sha256:x"},
		{"github.com/a/b", "s2", "", "sha256:other"},
		{"github.com/a/c", "s1", "", "sha256:c"},
	}
	for _, p := range puts {
		if err := db.PutSnapshot(ctx, p.remote, p.sha, p.subdir, p.digest); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.GetSnapshots(ctx, "github.com/a/b", "s1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"": "sha256:full", "@plugins/x": "sha256:part", "/plugins/x": "sha256:x"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%q: %q, want %q", k, got[k], v)
		}
	}
	if none, err := db.GetSnapshots(ctx, "github.com/a/b", "nope"); err != nil || len(none) != 0 {
		t.Errorf("unknown sha: %v, %v", none, err)
	}
}
