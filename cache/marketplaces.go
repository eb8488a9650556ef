package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// marketplace returns the marketplace document read from remote at sha.
func (db *DB) marketplace(ctx context.Context, remote, sha string) ([]byte, bool, error) {
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
