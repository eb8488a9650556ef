package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"reasonix.io/plugind"
)

// staleAfter is how old a staging or trash entry must be before GC assumes
// its writer is gone. No extraction within the budget takes this long.
const staleAfter = time.Hour

// GCPolicy says what GC may evict.
type GCPolicy struct {
	CapBytes int64                // target total; 0 means the store's cap
	Keep     map[string]bool      // digests never evicted (installed plugins, live plans)
	LastUsed map[string]time.Time // from the cache; a snapshot's ModTime counts too, whichever is later
	All      bool                 // evict everything not kept, ignoring the cap
}

// GCReport says what GC did.
type GCReport struct {
	Evicted        []string // digests, in eviction order
	FreedBytes     int64
	RemainingBytes int64
	StaleRemoved   int // abandoned staging, trash and lock entries removed
	// QuarantineRemoved counts quarantined snapshots deleted: those older
	// than a week, or all of them with GCPolicy.All.
	QuarantineRemoved int
}

// GC evicts least recently used snapshots that p does not keep until the
// store fits its cap (or, with p.All, every snapshot not kept), removes
// staging and trash left behind by crashed writers, and deletes quarantined
// snapshots older than a week (all of them with p.All). It keeps going past a
// failed removal and reports every failure joined in its error, along with
// what it did manage.
func (s *Store) GC(ctx context.Context, p GCPolicy) (*GCReport, error) {
	capBytes := plugind.PositiveOr(p.CapBytes, s.capBytes)
	snaps, err := s.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	rep := &GCReport{}
	var total int64
	var candidates []Snapshot
	lastUsed := make(map[string]time.Time, len(snaps))
	for _, sn := range snaps {
		total += sn.Bytes
		if p.Keep[sn.Digest] {
			continue
		}
		t := sn.ModTime
		if u, ok := p.LastUsed[sn.Digest]; ok && u.After(t) {
			t = u
		}
		lastUsed[sn.Digest] = t
		candidates = append(candidates, sn)
	}
	slices.SortStableFunc(candidates, func(a, b Snapshot) int {
		return cmp.Or(lastUsed[a.Digest].Compare(lastUsed[b.Digest]), strings.Compare(a.Digest, b.Digest))
	})
	var errs []error
	for _, sn := range candidates {
		if !p.All && total <= capBytes {
			break
		}
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		err := s.Remove(sn.Digest)
		switch {
		case plugind.CodeOf(err) == plugind.CodeNotFound:
			total -= sn.Bytes // another GC got there first
		case err != nil:
			errs = append(errs, err)
		default:
			total -= sn.Bytes
			rep.FreedBytes += sn.Bytes
			rep.Evicted = append(rep.Evicted, sn.Digest)
		}
	}
	rep.RemainingBytes = total
	if ctx.Err() == nil {
		var staleErr, quarantineErr error
		rep.StaleRemoved, staleErr = s.removeStale(time.Now().Add(-staleAfter))
		rep.QuarantineRemoved, quarantineErr = s.removeQuarantined(time.Now().Add(-quarantineKeep), p.All)
		errs = append(errs, staleErr, quarantineErr) // errors.Join drops the nils
	}
	if err := errors.Join(errs...); err != nil {
		return rep, fmt.Errorf("gc: %w", err)
	}
	return rep, nil
}

// Remove deletes snapshot digest: it is renamed into trash/ first, so it
// vanishes from snapshots/ in one step, then deleted.
func (s *Store) Remove(digest string) error {
	var bin string
	err := s.takeOut(digest, "remove", func(hex string) (string, error) {
		var err error
		bin, err = os.MkdirTemp(s.trash, hex[:12]+"-")
		return filepath.Join(bin, "tree"), err
	})
	if err != nil {
		_ = os.Remove(bin) // the empty bin, if it was made
		return err
	}
	if err := removeTree(bin); err != nil {
		// Out of snapshots/ already; GC sweeps the rest of trash later.
		return fmt.Errorf("remove %s: delete: %w", digest, err)
	}
	return nil
}

// removeStale deletes staging and trash entries last modified before
// cutoff, and lock files of snapshots that are gone.
func (s *Store) removeStale(cutoff time.Time) (int, error) {
	var n int
	var errs []error
	for _, dir := range []string{s.staging, s.trash} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if newest(p).After(cutoff) {
				continue
			}
			if err := removeTree(p); err != nil {
				errs = append(errs, err)
				continue
			}
			n++
		}
	}
	entries, err := os.ReadDir(s.locks)
	if err != nil {
		errs = append(errs, err)
	}
	for _, e := range entries {
		hex, ok := strings.CutSuffix(e.Name(), ".lock")
		if !ok || ValidateDigest(digestPrefix+hex) != nil || exists(filepath.Join(s.snapshots, hex)) {
			continue
		}
		p := filepath.Join(s.locks, e.Name())
		if info, err := os.Stat(p); err != nil || info.ModTime().After(cutoff) {
			continue
		}
		// Only while nobody holds it. Should a committer open the old file
		// just before it goes, the rename in commit is still atomic and a
		// loser finds the winner's identical snapshot.
		l := flock.New(p)
		if ok, err := l.TryLock(); err != nil || !ok {
			continue
		}
		if os.Remove(p) == nil {
			n++
		}
		l.Unlock()
	}
	return n, errors.Join(errs...)
}

// newest is the later ModTime of a staging/trash entry and its tree child,
// which is where a live writer's activity shows.
func newest(p string) time.Time {
	var t time.Time
	for _, q := range []string{p, filepath.Join(p, "tree")} {
		if info, err := os.Lstat(q); err == nil && info.ModTime().After(t) {
			t = info.ModTime()
		}
	}
	return t
}
