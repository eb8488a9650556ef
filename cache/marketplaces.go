package cache

import (
	"context"
)

// marketplace returns the marketplace document read from remote at sha.
func (db *DB) marketplace(ctx context.Context, remote, sha string) ([]byte, bool, error) {
	return db.document(ctx, "marketplace "+remote+"@"+sha, `SELECT document FROM marketplaces WHERE remote = ? AND sha = ?`, remote, sha)
}
