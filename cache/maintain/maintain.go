// Package maintain keeps the snapshot store and the cache together (SPEC
// §8): stats, garbage collection of what nothing uses, verification, and
// the repair that quarantines a damaged snapshot and forgets what the
// cache derived from it. It stands beside the installer, whose registry
// says what is in use and whose lock it takes to move snapshots.
package maintain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/store"
)

// livePlanWindow is how long a stored plan keeps its snapshots from GC: long
// enough for a person to review a plan and approve it.
const livePlanWindow = 7 * 24 * time.Hour

// CacheStats is what `reasonix cache stats` reports.
type CacheStats struct {
	Store *store.Stats             `json:"store"`
	Cache map[string]cache.HitMiss `json:"cache"`
	// CacheUnavailable says why Cache is empty: the cache could not be
	// opened (see Maintenance.CacheErr).
	CacheUnavailable string `json:"cacheUnavailable,omitempty"`
}

// Home is what maintenance needs of the installed home (the installer's).
type Home interface {
	// LockHome takes the lock every publication holds, so no install is
	// copying from a snapshot while it moves.
	LockHome(ctx context.Context) (unlock func(), err error)
	// InstalledPins lists the remote sources installed plugins were planned
	// from, each pinned to its commit (Ref) and folder (Subdir): GC keeps
	// their snapshots, so update and offline re-plans keep working.
	InstalledPins(ctx context.Context) ([]source.Source, error)
}

// Maintenance runs the cache and store commands against one home.
type Maintenance struct {
	Home  Home
	Store *store.Store
	// Cache may be nil when the cache could not be opened; CacheErr then
	// says why. Stats and Store.Verify work without it; GC refuses, because only
	// the cache knows which snapshots live plans and installed plugins use.
	Cache    *cache.DB
	CacheErr error
	Now      func() time.Time
}

// Stats reports store sizes and cache hit rates.
func (m *Maintenance) Stats(ctx context.Context) (*CacheStats, error) {
	st, err := m.Store.Stats(ctx)
	if err != nil {
		return nil, err
	}
	if m.Cache == nil {
		return &CacheStats{Store: st, Cache: map[string]cache.HitMiss{}, CacheUnavailable: m.cacheErr().Error()}, nil
	}
	hm, err := m.Cache.Stats(ctx)
	if err != nil {
		return nil, err
	}
	return &CacheStats{Store: st, Cache: hm}, nil
}

func (m *Maintenance) cacheErr() error {
	return cmp.Or(m.CacheErr, errors.New("no cache"))
}

// GC evicts least recently used snapshots that no installed plugin and no
// live plan uses, then forgets what the cache said about them.
func (m *Maintenance) GC(ctx context.Context, all bool) (*store.GCReport, error) {
	if m.Cache == nil {
		return nil, fmt.Errorf("cache gc needs the cache to know which snapshots installed plugins and live plans use, and it is unavailable (%v); nothing was evicted", m.cacheErr())
	}
	keep, err := m.keep(ctx)
	if err != nil {
		return nil, err
	}
	uses, err := m.Cache.SnapshotUses(ctx)
	if err != nil {
		return nil, err
	}
	rep, gcErr := m.Store.GC(ctx, store.GCPolicy{Keep: keep, LastUsed: uses, All: all})
	if rep != nil && len(rep.Evicted) > 0 {
		if err := m.Cache.ForgetSnapshots(ctx, rep.Evicted); err != nil {
			return rep, fmt.Errorf("forget evicted snapshots: %w", err)
		}
	}
	if _, err := m.Cache.PrunePlans(ctx, m.now().Add(-livePlanWindow)); err != nil {
		return rep, err
	}
	return rep, gcErr
}

func (m *Maintenance) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// keep is every snapshot an installed plugin was planned from (so update and
// offline re-plans keep working) or a recent plan names.
func (m *Maintenance) keep(ctx context.Context) (map[string]bool, error) {
	keep, err := m.Cache.LivePlanDigests(ctx, m.now().Add(-livePlanWindow))
	if err != nil {
		return nil, err
	}
	pins, err := m.Home.InstalledPins(ctx)
	if err != nil {
		return nil, err
	}
	sess := m.Cache.Session()
	ats := make([]cache.RepoAt, len(pins))
	for i, s := range pins {
		ats[i] = cache.RepoAt{Remote: s.Key(), SHA: s.Ref}
	}
	sess.Load(ctx, ats)
	for i, s := range pins {
		if d, ok := sess.Whole(ctx, ats[i]); ok {
			keep[d] = true
		}
		if d, ok := sess.Holding(ctx, ats[i], s.Subdir); ok {
			keep[d] = true
		}
	}
	return keep, nil
}

// RepairReport is what Repair found and did. Checked and Bad are Verify's;
// Quarantined lists the snapshots moved to the store's quarantine/ (their
// cache records forgotten), Unrepaired the problems left: stray entries,
// which are reported and never deleted, and snapshots that could not be
// moved.
type RepairReport struct {
	store.VerifyReport
	Quarantined []string            `json:"quarantined"`
	Unrepaired  []store.BadSnapshot `json:"unrepaired"`
}

// Repair re-hashes the store and quarantines every snapshot that fails, so
// the next plan that needs one fetches it afresh (`cache verify --repair`).
// It holds the home lock, so no install is copying from a snapshot while it
// moves. Without a cache it still quarantines; there are no records to
// forget.
func (m *Maintenance) Repair(ctx context.Context) (*RepairReport, error) {
	unlock, err := m.Home.LockHome(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	vr, err := m.Store.Verify(ctx)
	if err != nil {
		return nil, err
	}
	rep := &RepairReport{VerifyReport: *vr, Quarantined: []string{}, Unrepaired: []store.BadSnapshot{}}
	for _, b := range vr.Bad {
		if store.ValidateDigest(b.Digest) != nil {
			rep.Unrepaired = append(rep.Unrepaired, b)
			continue
		}
		if err := m.Store.Quarantine(b.Digest); err != nil {
			rep.Unrepaired = append(rep.Unrepaired, store.BadSnapshot{Digest: b.Digest, Problem: fmt.Sprintf("%s; quarantine failed: %v", b.Problem, err)})
			continue
		}
		rep.Quarantined = append(rep.Quarantined, b.Digest)
		if m.Cache != nil {
			if err := m.Cache.ForgetDigest(ctx, b.Digest); err != nil {
				rep.Unrepaired = append(rep.Unrepaired, store.BadSnapshot{Digest: b.Digest, Problem: fmt.Sprintf("quarantined, but its cache records could not be forgotten: %v", err)})
			}
		}
	}
	return rep, nil
}
