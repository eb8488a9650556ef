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
