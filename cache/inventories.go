package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// GetInventory returns the inventory stored under key.
func (db *DB) GetInventory(ctx context.Context, key string) ([]byte, bool, error) {
	var body []byte
	err := db.queryRow(ctx, `SELECT body FROM inventories WHERE key = ?`, key).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, db.readFailed(ctx, fmt.Errorf("cache: get inventory: %w", err))
	}
	return body, true, nil
}

// GetInventories returns the inventories stored under any of keys, in a
// query per few hundred keys instead of one per key: a bulk plan looks up
// one per entry.
func (db *DB) GetInventories(ctx context.Context, keys []string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(keys))
	const chunk = 500 // well under SQLite's bound on query parameters
	for len(keys) > 0 {
		n := min(len(keys), chunk)
		args := make([]any, n)
		for i, k := range keys[:n] {
			args[i] = k
		}
		q := `SELECT key, body FROM inventories WHERE key IN (?` + strings.Repeat(",?", n-1) + `)`
		if err := db.scanInventories(ctx, q, args, out); err != nil {
			return nil, db.readFailed(ctx, fmt.Errorf("cache: get inventories: %w", err))
		}
		keys = keys[n:]
	}
	return out, nil
}

func (db *DB) scanInventories(ctx context.Context, q string, args []any, out map[string][]byte) error {
	return db.eachRow(ctx, q, args, func(rows *sql.Rows) error {
		var key string
		var body []byte
		if err := rows.Scan(&key, &body); err != nil {
			return err
		}
		out[key] = body
		return nil
	})
}

// PutInventory stores body under key. Keys name immutable content, so a
// second put replaces identical bytes.
func (db *DB) PutInventory(ctx context.Context, key string, body []byte) error {
	return db.PutInventories(ctx, map[string][]byte{key: body})
}

// PutInventories stores every key's body in one transaction: a cold bulk
// plan loads a manifest per entry, and a transaction each was a large
// share of its writes.
func (db *DB) PutInventories(ctx context.Context, bodies map[string][]byte) error {
	for key, body := range bodies {
		if key == "" || body == nil {
			return errors.New("cache: put inventory: key and body are required")
		}
	}
	if len(bodies) == 0 {
		return nil
	}
	now := time.Now().UnixNano()
	err := db.write(ctx, "put inventory", func(tx *sql.Tx) error {
		for key, body := range bodies {
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO inventories (key, body, created_at) VALUES (?, ?, ?)
				ON CONFLICT (key) DO UPDATE SET body = excluded.body`,
				key, body, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cache: put inventory: %w", err)
	}
	return nil
}
