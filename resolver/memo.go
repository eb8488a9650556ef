package resolver

import (
	"context"
	"time"

	"reasonix.io/plugind/cache"
)

// memo is the resolver's view of the cache: nil-safe (no cache, nothing
// remembered) and forgiving (a failed write is reported once and the
// operation goes on), so no call site has to check either.
type memo struct {
	db      *cache.DB
	onError func(error)
}

func (s *Sources) memo() memo { return memo{db: s.cfg.Cache, onError: s.cacheWriteFailed} }

func (m memo) wrote(err error) {
	if err != nil {
		m.onError(err)
	}
}

func (m memo) snapshot(ctx context.Context, remote, sha, key string) (string, bool) {
	if m.db == nil {
		return "", false
	}
	d, ok, err := m.db.GetSnapshot(ctx, remote, sha, key)
	return d, err == nil && ok
}

func (m memo) putSnapshot(ctx context.Context, remote, sha, key, digest string) {
	if m.db != nil {
		m.wrote(m.db.PutSnapshot(ctx, remote, sha, key, digest))
	}
}

func (m memo) touch(ctx context.Context, digest string, now time.Time) {
	if m.db != nil {
		m.wrote(m.db.TouchSnapshot(ctx, digest, now))
	}
}

func (m memo) count(ctx context.Context, kind string, hit bool) {
	if m.db != nil {
		m.wrote(m.db.Count(ctx, kind, hit))
	}
}

func (m memo) marketplace(ctx context.Context, remote, sha string) ([]byte, bool) {
	if m.db == nil {
		return nil, false
	}
	doc, ok, err := m.db.GetMarketplace(ctx, remote, sha)
	return doc, err == nil && ok
}

func (m memo) putMarketplace(ctx context.Context, remote, sha string, doc []byte) {
	if m.db != nil {
		m.wrote(m.db.PutMarketplace(ctx, remote, sha, doc))
	}
}
