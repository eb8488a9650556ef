package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Verdict is whether a commit was found on one of its repository's
// branches or tags, and when that was checked.
type Verdict struct {
	Remote, SHA string
	Reachable   bool
	CheckedAt   time.Time
}

// GetVerdict returns the cached reachability verdict of remote@sha.
func (db *DB) GetVerdict(ctx context.Context, remote, sha string) (Verdict, bool, error) {
	v := Verdict{Remote: remote, SHA: sha}
	var reachable, at int64
	err := db.queryRow(ctx,
		`SELECT reachable, checked_at FROM verdicts WHERE remote = ? AND sha = ?`,
		remote, sha).Scan(&reachable, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Verdict{}, false, nil
	}
	if err != nil {
		return Verdict{}, false, db.readFailed(ctx, fmt.Errorf("cache: get verdict %s@%s: %w", remote, sha, err))
	}
	v.Reachable, v.CheckedAt = reachable != 0, fromNanos(at)
	return v, true, nil
}

// PutVerdict records (or replaces) a reachability verdict.
func (db *DB) PutVerdict(ctx context.Context, v Verdict) error {
	if v.Remote == "" || v.SHA == "" {
		return fmt.Errorf("cache: put verdict: remote and sha are required")
	}
	reachable := 0
	if v.Reachable {
		reachable = 1
	}
	err := db.write(ctx, "put verdict", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO verdicts (remote, sha, reachable, checked_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (remote, sha) DO UPDATE SET reachable = excluded.reachable, checked_at = excluded.checked_at`,
			v.Remote, v.SHA, reachable, toNanos(v.CheckedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("cache: put verdict %s@%s: %w", v.Remote, v.SHA, err)
	}
	return nil
}
