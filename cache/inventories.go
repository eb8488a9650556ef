package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// GetInventory returns the inventory stored under key.
func (db *DB) GetInventory(ctx context.Context, key string) ([]byte, bool, error) {
	var body []byte
	err := db.sql.QueryRowContext(ctx, `SELECT body FROM inventories WHERE key = ?`, key).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, db.readFailed(ctx, fmt.Errorf("cache: get inventory: %w", err))
	}
	return body, true, nil
}

// PutInventory stores body under key. Keys name immutable content, so a
// second put replaces identical bytes.
func (db *DB) PutInventory(ctx context.Context, key string, body []byte) error {
	if key == "" || body == nil {
		return errors.New("cache: put inventory: key and body are required")
	}
	err := db.write(ctx, "put inventory", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO inventories (key, body, created_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET body = excluded.body`,
			key, body, time.Now().UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("cache: put inventory: %w", err)
	}
	return nil
}
