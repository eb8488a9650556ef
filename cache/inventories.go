package cache

import (
	"context"
	"database/sql"
	"errors"
)

// The inventories table keeps what manifest.Load made of a store tree,
// under a key naming that immutable content. A bulk plan loads a manifest
// per entry: it reads them all in one query (LoadInventories) and writes
// the new ones with the rest of its Session.

// LoadInventories reads, a query per few hundred, those of keys not read
// yet. A failed read leaves them to their first lookup.
func (s *Session) LoadInventories(ctx context.Context, keys []string) {
	if s != nil {
		s.invs.load(ctx, &s.mu, keys)
	}
}

// Inventory returns the inventory stored under key.
func (s *Session) Inventory(ctx context.Context, key string) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	body := s.invs.get(ctx, &s.mu, key)
	return body, body != nil
}

// PutInventory stores body under key. Keys name immutable content, so a
// second put replaces identical bytes.
func (s *Session) PutInventory(key string, body []byte) error {
	if key == "" || body == nil {
		return errors.New("cache: put inventory: key and body are required")
	}
	if s != nil {
		s.mu.Lock()
		s.w.invs[key] = body
		s.invs.m[key] = body // it replaces whatever is stored
		s.mu.Unlock()
	}
	return nil
}

func (db *DB) inventoriesOf(ctx context.Context, keys []string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(keys))
	err := readIn(ctx, db, "inventories", keys, oneParam, `SELECT key, body FROM inventories WHERE key IN`, func(rows *sql.Rows) error {
		var key string
		var body []byte
		if err := rows.Scan(&key, &body); err != nil {
			return err
		}
		out[key] = body
		return nil
	})
	return out, err
}
