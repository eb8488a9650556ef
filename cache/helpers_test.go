package cache

import (
	"context"
	"time"
)

// One record at a time, each committed at once through its own Session:
// what the tests below set up and read back.

func (db *DB) putSnapshot(ctx context.Context, remote, sha, key, digest string) error {
	s := db.Session()
	s.putSnapshot(RepoAt{remote, sha}, key, digest)
	return s.Commit(ctx)
}

func (db *DB) getSnapshot(ctx context.Context, remote, sha, key string) (string, bool, error) {
	d, ok := db.Session().snapshot(ctx, RepoAt{remote, sha}, key)
	return d, ok, nil
}

func (db *DB) touchSnapshot(ctx context.Context, digest string, at time.Time) error {
	s := db.Session()
	s.Touch(digest, at)
	return s.Commit(ctx)
}

func (db *DB) count(ctx context.Context, kind string, hit bool) error {
	s := db.Session()
	_ = s.Count(ctx, kind, hit)
	return s.Commit(ctx)
}

func (db *DB) putMarketplace(ctx context.Context, remote, sha string, doc []byte) error {
	s := db.Session()
	s.PutMarketplace(remote, sha, doc)
	return s.Commit(ctx)
}

func (db *DB) putNegative(ctx context.Context, n Negative) error {
	s := db.Session()
	if err := s.PutNegative(ctx, n); err != nil {
		return err
	}
	return s.Commit(ctx)
}

func (db *DB) putInventory(ctx context.Context, key string, body []byte) error {
	s := db.Session()
	if err := s.PutInventory(key, body); err != nil {
		return err
	}
	return s.Commit(ctx)
}

func (db *DB) getInventory(ctx context.Context, key string) ([]byte, bool, error) {
	body, ok := db.Session().Inventory(ctx, key)
	return body, ok, nil
}
