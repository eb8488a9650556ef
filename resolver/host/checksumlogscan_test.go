package host

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/checksumlog"
	"reasonix.io/plugind/internal/fakelog"
)

// scanLog is a log whose record of any key is a digest made from the key.
func scanLog(t *testing.T) *fakelog.Log {
	return fakelog.New(t, "log.test", func(place, path, commit string) (string, error) {
		return scanDigest(place, path, commit), nil
	})
}

func scanDigest(place, path, commit string) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(checksumlog.KeyOf(place, path, commit))))
}

func scanKeys(from, n int) []LogKey {
	var keys []LogKey
	for i := from; i < from+n; i++ {
		keys = append(keys, LogKey{Place: "github.com/acme/bulk", Path: fmt.Sprintf("plugins/p%03d", i), Commit: strings.Repeat("c", 40)})
	}
	return keys
}

// lookupAll runs LookupMany and checks every key was answered once.
func lookupAll(t *testing.T, c *ChecksumLog, keys []LogKey) ([]*LogRecord, []error) {
	t.Helper()
	recs, errs := make([]*LogRecord, len(keys)), make([]error, len(keys))
	answered := make([]int, len(keys))
	var mu sync.Mutex
	c.LookupMany(context.Background(), keys, false, nil, func(i int, rec *LogRecord, err error) {
		mu.Lock()
		defer mu.Unlock()
		recs[i], errs[i] = rec, err
		answered[i]++
	})
	for i, n := range answered {
		if n != 1 {
			t.Fatalf("key %d (%s) answered %d times", i, keys[i], n)
		}
	}
	return recs, errs
}

// A cold home asking for many records the log holds reads them by data
// tiles, proven against the head one lookup brought: one lookup, a few
// tiles, and a lookup for each key the log lacks (its server adds it);
// the records are the log's, remembered, and the next process asks
// nothing. A plan of a few keys looks each up, as does one beside which
// the log is large.
func TestLookupManyReadsTiles(t *testing.T) {
	t.Parallel()
	l := scanLog(t)
	first, _ := newTestLog(t, l, nil)
	if _, errs := lookupAll(t, first, scanKeys(0, 300)); errors.Join(errs...) != nil {
		t.Fatal(errors.Join(errs...))
	}

	l.Reset()
	c, home := newTestLog(t, l, nil)
	keys := append(scanKeys(0, 300), scanKeys(300, 3)...) // three the log lacks
	recs, errs := lookupAll(t, c, keys)
	for i, rec := range recs {
		k := keys[i]
		if errs[i] != nil || rec.Digest != scanDigest(k.Place, k.Path, k.Commit) || rec.Key() != k.String() || rec.Cached {
			t.Fatalf("%s: %+v %v", k, rec, errs[i])
		}
		if i < 300 && (rec.ID >= rec.TreeSize || rec.TreeSize < 300) {
			t.Fatalf("%s: record #%d of a tree of %d", k, rec.ID, rec.TreeSize)
		}
	}
	// A home with no tree head takes the latest, then reads the 2 data
	// tiles and the hash tiles that prove them (3), then a partial tile as
	// each new record grows the tree.
	if n, all := l.Lookups(), l.Requests(); n != 3 || all-n > 1+2+3+3 {
		t.Errorf("a cold home asking for 300 known records and 3 new: %d lookups and %d other requests; want 3 lookups (one per new key) and at most 9 others", n, all-n)
	}

	l.Reset()
	again, _ := NewChecksumLog(ChecksumLogConfig{Log: c.cfg, CacheDir: home + "/cache", StateDir: home + "/state"})
	if _, errs := lookupAll(t, again, keys); errors.Join(errs...) != nil || l.Requests() != 0 {
		t.Errorf("the next process: %d requests, %v", l.Requests(), errors.Join(errs...))
	}

	// Few keys: one lookup each.
	l.Reset()
	few, _ := newTestLog(t, l, nil)
	if _, errs := lookupAll(t, few, scanKeys(0, scanMin)); errors.Join(errs...) != nil || l.Lookups() != scanMin {
		t.Errorf("%d keys: %d lookups, %v", scanMin, l.Lookups(), errors.Join(errs...))
	}
}

func TestScanWorth(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		records int64
		need    int
		want    bool
	}{
		{300, 300, true}, {300, 16, true}, {300, 15, false}, {1, 16, true},
		{10_000, 300, false}, {10_000, 320, true}, {100_000, 300, false},
	} {
		if got := scanWorth(c.records, c.need); got != c.want {
			t.Errorf("scanWorth(%d records, %d keys) = %v, want %v", c.records, c.need, got, c.want)
		}
	}
}

// A data tile that shows a record other than the one the signed tree
// holds is a SECURITY ERROR for every key the scan was to answer, naming
// the record; nothing of it is remembered. A home that remembers a head
// looks one key up first, and that one stands.
func TestLookupManyForgedTile(t *testing.T) {
	t.Parallel()
	l := scanLog(t)
	first, _ := newTestLog(t, l, nil)
	keys := scanKeys(0, 40)
	if _, errs := lookupAll(t, first, keys); errors.Join(errs...) != nil {
		t.Fatal(errors.Join(errs...))
	}
	k := keys[7]
	forged := checksumlog.Record{Place: k.Place, Path: k.Path, Commit: k.Commit, Digest: "sha256:" + strings.Repeat("e", 64)}
	l.ForgeTileRecord(7, forged.Line())

	c, home := newTestLog(t, l, nil)
	_, errs := lookupAll(t, c, keys)
	refused := 0
	for i, err := range errs {
		if err == nil {
			continue
		}
		refused++
		if !errors.Is(err, ErrLogSecurity) || plugind.CodeOf(err) != plugind.CodeDigestMismatch || !strings.Contains(err.Error(), "record #7 of its data tile tile/8/data/000.p/40") || !strings.Contains(err.Error(), strings.Repeat("e", 64)) {
			t.Fatalf("key %d: %v", i, err)
		}
		if _, ok, _ := c.known(keys[i]); ok {
			t.Fatalf("key %d: remembered after the refusal", i)
		}
	}
	if refused != len(keys) {
		t.Errorf("%d of %d keys refused, want all (a home with no tree head looks none up first)", refused, len(keys))
	}

	// The same home, which now remembers a head: its first key is looked
	// up (and stands), the rest read by tiles are refused.
	again, err := NewChecksumLog(ChecksumLogConfig{Log: c.cfg, CacheDir: home + "/cache", StateDir: home + "/state"})
	if err != nil {
		t.Fatal(err)
	}
	_, errs = lookupAll(t, again, keys)
	refused = 0
	for _, err := range errs {
		if errors.Is(err, ErrLogSecurity) {
			refused++
		}
	}
	if refused != len(keys)-1 || errs[0] != nil {
		t.Errorf("a home with a head: %d of %d keys refused (first: %v), want all but the one looked up first", refused, len(keys), errs[0])
	}
}
