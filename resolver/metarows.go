package resolver

import (
	"context"
	"slices"
	"sync"
	"time"

	"reasonix.io/plugind/cache"
)

// resolveMeta is the cache as the Cached host layer sees it during a
// Resolve. Its hit and miss counts go to the useLog, written in the one
// transaction that ends the Resolve (flushUses), instead of a write
// transaction per lookup; its negative results and reachability verdicts
// come from the Resolve's metaRows when those were read ahead, instead of
// a query per repository.
type resolveMeta struct {
	*cache.DB
	uses *useLog
}

func (r resolveMeta) Count(_ context.Context, kind string, hit bool) error {
	r.uses.count(kind, hit)
	return nil
}

func (r resolveMeta) FirstNegative(ctx context.Context, remote string, now time.Time, keys ...cache.NegativeKey) (cache.Negative, bool, error) {
	if rows, ok := metaRowsOf(ctx, remote); ok {
		n, found := rows.firstNegative(remote, now, keys)
		return n, found, nil
	}
	return r.DB.FirstNegative(ctx, remote, now, keys...)
}

func (r resolveMeta) PutNegative(ctx context.Context, n cache.Negative) error {
	if rows, ok := ctx.Value(metaRowsKey{}).(*metaRows); ok {
		rows.putNegative(n)
	}
	return r.DB.PutNegative(ctx, n)
}

func (r resolveMeta) GetVerdict(ctx context.Context, remote, sha string) (cache.Verdict, bool, error) {
	if rows, ok := ctx.Value(metaRowsKey{}).(*metaRows); ok {
		if v, found, read := rows.verdict(remote, sha); read {
			return v, found, nil
		}
	}
	return r.DB.GetVerdict(ctx, remote, sha)
}

func (r resolveMeta) PutVerdict(ctx context.Context, v cache.Verdict) error {
	if rows, ok := ctx.Value(metaRowsKey{}).(*metaRows); ok {
		rows.putVerdict(v)
	}
	return r.DB.PutVerdict(ctx, v)
}

// metaRows holds, for one Resolve, the unexpired negative results of the
// repositories a marketplace points into and the verdicts of their pinned
// commits, read in one query each before their lookups (preload), and
// kept current with what the Resolve records. Like snapRows it lives in
// the Resolve's context only: the next Resolve reads afresh what other
// processes wrote.
type metaRows struct {
	mu        sync.Mutex
	remotes   map[string]bool // those whose negatives were read
	negatives []cache.Negative
	verdicts  map[cache.RepoAt]cache.Verdict
	asked     map[cache.RepoAt]bool // those whose verdict was read (absent: none)
}

type metaRowsKey struct{}

func withMetaRows(ctx context.Context) context.Context {
	if _, ok := ctx.Value(metaRowsKey{}).(*metaRows); ok {
		return ctx
	}
	return context.WithValue(ctx, metaRowsKey{}, &metaRows{
		remotes: map[string]bool{}, verdicts: map[cache.RepoAt]cache.Verdict{}, asked: map[cache.RepoAt]bool{},
	})
}

// metaRowsOf returns the Resolve's metaRows when remote's negatives were
// read ahead.
func metaRowsOf(ctx context.Context, remote string) (*metaRows, bool) {
	rows, ok := ctx.Value(metaRowsKey{}).(*metaRows)
	if !ok {
		return nil, false
	}
	rows.mu.Lock()
	defer rows.mu.Unlock()
	return rows, rows.remotes[remote]
}

// preload reads the negatives of the remotes of ats and the verdicts of
// ats, those not read yet. A failed read leaves them to the lookups, one
// by one.
func (m *metaRows) preload(ctx context.Context, db *cache.DB, ats []cache.RepoAt, now time.Time) {
	var remotes []string
	var pairs []cache.RepoAt
	m.mu.Lock()
	seen := map[string]bool{}
	for _, at := range ats {
		if !m.remotes[at.Remote] && !seen[at.Remote] {
			seen[at.Remote] = true
			remotes = append(remotes, at.Remote)
		}
		if !m.asked[at] {
			pairs = append(pairs, at)
		}
	}
	m.mu.Unlock()
	if len(remotes) > 1 {
		if negs, err := db.GetNegativesOf(ctx, remotes, now); err == nil {
			m.mu.Lock()
			for _, r := range remotes {
				m.remotes[r] = true
			}
			m.negatives = append(m.negatives, negs...)
			m.mu.Unlock()
		}
	}
	if len(pairs) > 1 {
		if got, err := db.GetVerdictsOf(ctx, pairs); err == nil {
			m.mu.Lock()
			for _, at := range pairs {
				if _, raced := m.asked[at]; raced {
					continue // recorded by this Resolve meanwhile: newer
				}
				m.asked[at] = true
				if v, ok := got[at]; ok {
					m.verdicts[at] = v
				}
			}
			m.mu.Unlock()
		}
	}
}

// firstNegative is cache.FirstNegative over the rows read.
func (m *metaRows) firstNegative(remote string, now time.Time, keys []cache.NegativeKey) (cache.Negative, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return cache.FirstOf(m.negatives, remote, now, keys)
}

func (m *metaRows) putNegative(n cache.Negative) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.remotes[n.Remote] {
		return // not read ahead: lookups go to the database, which has it
	}
	m.negatives = slices.DeleteFunc(m.negatives, func(o cache.Negative) bool {
		return o.Kind == n.Kind && o.Remote == n.Remote && o.SHA == n.SHA && o.Path == n.Path
	})
	m.negatives = append(m.negatives, n)
}

// verdict returns the verdict read for remote@sha; read is false when it
// was not read ahead.
func (m *metaRows) verdict(remote, sha string) (v cache.Verdict, found, read bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	at := cache.RepoAt{Remote: remote, SHA: sha}
	if !m.asked[at] {
		return cache.Verdict{}, false, false
	}
	v, found = m.verdicts[at]
	return v, found, true
}

func (m *metaRows) putVerdict(v cache.Verdict) {
	m.mu.Lock()
	defer m.mu.Unlock()
	at := cache.RepoAt{Remote: v.Remote, SHA: v.SHA}
	m.asked[at] = true
	m.verdicts[at] = v
}
