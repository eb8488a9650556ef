package installer

import (
	"context"
	"fmt"
	"time"

	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/resolver/source"
	"reasonix.io/plugind/store"
)

// livePlanWindow is how long a stored plan keeps its snapshots from GC: long
// enough for a person to review a plan and approve it.
const livePlanWindow = 7 * 24 * time.Hour

// CacheStats is what `reasonix cache stats` reports.
type CacheStats struct {
	Store *store.Stats             `json:"store"`
	Cache map[string]cache.HitMiss `json:"cache"`
}

// Maintenance runs the cache and store commands against one home.
type Maintenance struct {
	Installer *Installer
	Store     *store.Store
	Cache     *cache.DB
	Now       func() time.Time
}

// Stats reports store sizes and cache hit rates.
func (m *Maintenance) Stats(ctx context.Context) (*CacheStats, error) {
	st, err := m.Store.Stats(ctx)
	if err != nil {
		return nil, err
	}
	hm, err := m.Cache.Stats(ctx)
	if err != nil {
		return nil, err
	}
	return &CacheStats{Store: st, Cache: hm}, nil
}

// GC evicts least recently used snapshots that no installed plugin and no
// live plan uses, then forgets what the cache said about them.
func (m *Maintenance) GC(ctx context.Context, all bool) (*store.GCReport, error) {
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
	reg, err := LoadRegistry(m.Installer.home.RegistryPath())
	if err != nil {
		return nil, err
	}
	for _, e := range reg.Plugins {
		if e.Commit == "" {
			continue
		}
		s, err := source.Parse(e.Source)
		if err != nil || !s.IsRemote() { // a local folder or zip: no snapshot to keep
			continue
		}
		sub := s.Subdir
		if e.Subdir != "" {
			sub = e.Subdir
		}
		for _, k := range []string{"", "@" + sub} {
			if d, ok, err := m.Cache.GetSnapshot(ctx, s.Key(), e.Commit, k); err == nil && ok {
				keep[d] = true
			}
		}
	}
	return keep, nil
}

// Verify re-hashes the store.
func (m *Maintenance) Verify(ctx context.Context) (*store.VerifyReport, error) {
	return m.Store.Verify(ctx)
}
