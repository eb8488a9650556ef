package cache

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// UpdateCheck returns the stored record of the last update check (SPEC
// §12), false when none was stored.
func (db *DB) UpdateCheck(ctx context.Context) ([]byte, bool, error) {
	return db.document(ctx, "update check", `SELECT body FROM update_checks WHERE id = 1`)
}

// PutUpdateCheck replaces the stored record of the last update check.
func (db *DB) PutUpdateCheck(ctx context.Context, body []byte, checkedAt time.Time) error {
	err := db.write(ctx, "put update check", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO update_checks (id, body, checked_at) VALUES (1, ?, ?)
			ON CONFLICT (id) DO UPDATE SET body = excluded.body, checked_at = excluded.checked_at`,
			body, checkedAt.UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("cache: put update check: %w", err)
	}
	return nil
}
