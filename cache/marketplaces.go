package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// GetMarketplace returns the marketplace document read from remote at sha.
func (db *DB) GetMarketplace(ctx context.Context, remote, sha string) ([]byte, bool, error) {
	var doc []byte
	err := db.queryRow(ctx,
		`SELECT document FROM marketplaces WHERE remote = ? AND sha = ?`,
		remote, sha).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, db.readFailed(ctx, fmt.Errorf("cache: get marketplace %s@%s: %w", remote, sha, err))
	}
	if doc == nil {
		doc = []byte{}
	}
	return doc, true, nil
}

// PutMarketplace stores the marketplace document read from remote at sha.
// A commit's content never changes, so a second put just replaces bytes
// that should be identical.
func (db *DB) PutMarketplace(ctx context.Context, remote, sha string, doc []byte) error {
	if remote == "" || sha == "" {
		return fmt.Errorf("cache: put marketplace: remote and sha are required (got %q %q)", remote, sha)
	}
	if doc == nil {
		doc = []byte{} // the column is NOT NULL; an empty document is still a document
	}
	err := db.write(ctx, "put marketplace", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO marketplaces (remote, sha, document, fetched_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (remote, sha) DO UPDATE SET document = excluded.document, fetched_at = excluded.fetched_at`,
			remote, sha, doc, time.Now().UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("cache: put marketplace %s@%s: %w", remote, sha, err)
	}
	return nil
}
