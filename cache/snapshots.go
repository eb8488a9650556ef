package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// GetSnapshot returns the store digest of remote's tree at sha below
// subdir ("" for the root). A hit says only that the tree was stored once;
// the store may have evicted it since, so callers check the store too.
func (db *DB) GetSnapshot(ctx context.Context, remote, sha, subdir string) (string, bool, error) {
	var digest string
	err := db.queryRow(ctx,
		`SELECT digest FROM snapshots WHERE remote = ? AND sha = ? AND subdir = ?`,
		remote, sha, subdir).Scan(&digest)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, db.readFailed(ctx, fmt.Errorf("cache: get snapshot %s@%s:%s: %w", remote, sha, subdir, err))
	}
	return digest, true, nil
}

// PutSnapshot records that remote's tree at sha below subdir has digest.
func (db *DB) PutSnapshot(ctx context.Context, remote, sha, subdir, digest string) error {
	return db.PutSnapshots(ctx, []SnapshotRecord{{Remote: remote, SHA: sha, Subdir: subdir, Digest: digest}})
}

// SnapshotRecord is one snapshots row: remote's tree at SHA below Subdir
// has Digest.
type SnapshotRecord struct{ Remote, SHA, Subdir, Digest string }

// PutSnapshots records recs in one transaction (a bulk plan records a
// folder digest per entry; a transaction each was most of its writes).
func (db *DB) PutSnapshots(ctx context.Context, recs []SnapshotRecord) error {
	for _, r := range recs {
		if r.Remote == "" || r.SHA == "" || r.Digest == "" {
			return fmt.Errorf("cache: put snapshot: remote, sha and digest are required (got %q %q %q)", r.Remote, r.SHA, r.Digest)
		}
	}
	if len(recs) == 0 {
		return nil
	}
	now := time.Now().UnixNano()
	err := db.write(ctx, "put snapshot", func(tx *sql.Tx) error {
		for _, r := range recs {
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO snapshots (remote, sha, subdir, digest, created_at) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (remote, sha, subdir) DO UPDATE SET digest = excluded.digest`,
				r.Remote, r.SHA, r.Subdir, r.Digest, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		r := recs[0]
		return fmt.Errorf("cache: put snapshot %s@%s:%s (and %d more): %w", r.Remote, r.SHA, r.Subdir, len(recs)-1, err)
	}
	return nil
}

// TouchSnapshot records that the snapshot digest was used at at. Use times
// only move forward, so a late, older touch cannot make a snapshot look
// less recently used than it is.
func (db *DB) TouchSnapshot(ctx context.Context, digest string, at time.Time) error {
	if digest == "" {
		return errors.New("cache: touch snapshot: empty digest")
	}
	err := db.write(ctx, "touch snapshot", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO snapshot_uses (digest, last_used) VALUES (?, ?)
			ON CONFLICT (digest) DO UPDATE SET last_used = max(last_used, excluded.last_used)`,
			digest, toNanos(at))
		return err
	})
	if err != nil {
		return fmt.Errorf("cache: touch snapshot %s: %w", digest, err)
	}
	return nil
}

// SnapshotUses returns the last use time of every snapshot ever touched,
// the LastUsed input of store GC.
func (db *DB) SnapshotUses(ctx context.Context) (map[string]time.Time, error) {
	rows, err := db.query(ctx, `SELECT digest, last_used FROM snapshot_uses`)
	if err != nil {
		return nil, fmt.Errorf("cache: snapshot uses: %w", err)
	}
	defer rows.Close()
	uses := make(map[string]time.Time)
	for rows.Next() {
		var d string
		var at int64
		if err := rows.Scan(&d, &at); err != nil {
			return nil, fmt.Errorf("cache: snapshot uses: %w", err)
		}
		uses[d] = fromNanos(at)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cache: snapshot uses: %w", err)
	}
	return uses, nil
}

// ForgetSnapshots drops every record pointing at the given digests (source
// mappings and use times), for after store GC has evicted them, so a later
// lookup misses cleanly instead of naming a snapshot that is gone.
func (db *DB) ForgetSnapshots(ctx context.Context, digests []string) error {
	if len(digests) == 0 {
		return nil
	}
	err := db.write(ctx, "forget snapshots", func(tx *sql.Tx) error {
		for _, d := range digests {
			if _, err := tx.ExecContext(ctx, `DELETE FROM snapshots WHERE digest = ?`, d); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM snapshot_uses WHERE digest = ?`, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cache: forget %d snapshots: %w", len(digests), err)
	}
	return nil
}

// GetSnapshots returns every recorded digest of remote's tree at sha, by
// subdir: one query where a bulk plan would otherwise make one per folder
// and per kind of record (issue 13: a warm re-plan of hundreds of entries).
func (db *DB) GetSnapshots(ctx context.Context, remote, sha string) (map[string]string, error) {
	rows, err := db.query(ctx,
		`SELECT subdir, digest FROM snapshots WHERE remote = ? AND sha = ?`, remote, sha)
	if err != nil {
		return nil, db.readFailed(ctx, fmt.Errorf("cache: get snapshots %s@%s: %w", remote, sha, err))
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var subdir, digest string
		if err := rows.Scan(&subdir, &digest); err != nil {
			return nil, db.readFailed(ctx, fmt.Errorf("cache: get snapshots %s@%s: %w", remote, sha, err))
		}
		out[subdir] = digest
	}
	if err := rows.Err(); err != nil {
		return nil, db.readFailed(ctx, fmt.Errorf("cache: get snapshots %s@%s: %w", remote, sha, err))
	}
	return out, nil
}

// RepoAt names a repository at a commit.
type RepoAt struct{ Remote, SHA string }

// GetSnapshotsOf is GetSnapshots for many (remote, SHA) at once, a query
// per few hundred: a bulk plan asks about every repository it points
// into. Every one of ats is in the result, with no records when none are
// stored.
func (db *DB) GetSnapshotsOf(ctx context.Context, ats []RepoAt) (map[RepoAt]map[string]string, error) {
	out := make(map[RepoAt]map[string]string, len(ats))
	for _, at := range ats {
		out[at] = map[string]string{}
	}
	err := inBatches(ats, func(values string, args []any) error {
		return db.scanSnapshots(ctx, `SELECT remote, sha, subdir, digest FROM snapshots WHERE (remote, sha) IN (VALUES `+values+`)`, args, out)
	})
	if err != nil {
		return nil, db.readFailed(ctx, fmt.Errorf("cache: get snapshots of %d repositories: %w", len(ats), err))
	}
	return out, nil
}

func (db *DB) scanSnapshots(ctx context.Context, q string, args []any, out map[RepoAt]map[string]string) error {
	return db.eachRow(ctx, q, args, func(rows *sql.Rows) error {
		var at RepoAt
		var subdir, digest string
		if err := rows.Scan(&at.Remote, &at.SHA, &subdir, &digest); err != nil {
			return err
		}
		if m, ok := out[at]; ok {
			m[subdir] = digest
		}
		return nil
	})
}
