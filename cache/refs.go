package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Ref is a resolved ref: what SHA remote's ref pointed at, and when. ETag
// lets the next check be a conditional request.
type Ref struct {
	Remote, Ref, SHA, ETag string
	ResolvedAt             time.Time
}

// GetRef returns the cached resolution of remote's ref.
func (db *DB) GetRef(ctx context.Context, remote, ref string) (Ref, bool, error) {
	r := Ref{Remote: remote, Ref: ref}
	var at int64
	err := db.queryRow(ctx,
		`SELECT sha, etag, resolved_at FROM refs WHERE remote = ? AND ref = ?`,
		remote, ref).Scan(&r.SHA, &r.ETag, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Ref{}, false, nil
	}
	if err != nil {
		return Ref{}, false, db.readFailed(ctx, fmt.Errorf("cache: get ref %s %s: %w", remote, ref, err))
	}
	r.ResolvedAt = fromNanos(at)
	return r, true, nil
}

// upsertRef records (or replaces) one ref resolution.
const upsertRef = `
	INSERT INTO refs (remote, ref, sha, etag, resolved_at) VALUES (?, ?, ?, ?, ?)
	ON CONFLICT (remote, ref) DO UPDATE SET
		sha = excluded.sha, etag = excluded.etag, resolved_at = excluded.resolved_at`

func (r Ref) check() error {
	if r.Remote == "" || r.Ref == "" || r.SHA == "" {
		return fmt.Errorf("cache: put ref: remote, ref and sha are required (got %q %q %q)", r.Remote, r.Ref, r.SHA)
	}
	return nil
}

// PutRef records (or replaces) a ref resolution.
func (db *DB) PutRef(ctx context.Context, r Ref) error {
	if err := r.check(); err != nil {
		return err
	}
	err := db.write(ctx, "put ref", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, upsertRef, r.Remote, r.Ref, r.SHA, r.ETag, toNanos(r.ResolvedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("cache: put ref %s %s: %w", r.Remote, r.Ref, err)
	}
	return nil
}

// ReplaceRefs records a remote's whole ref listing in one transaction:
// refs it no longer advertises are forgotten (an offline plan must not
// pick a tag deleted upstream), a ref whose commit is unchanged keeps its
// ETag, and the others are written with resolvedAt at.
func (db *DB) ReplaceRefs(ctx context.Context, remote string, commits map[string]string, at time.Time) error {
	if remote == "" {
		return fmt.Errorf("cache: replace refs: remote is required")
	}
	err := db.write(ctx, "replace refs", func(tx *sql.Tx) error {
		known := map[string]string{}
		err := eachRow(ctx, tx.QueryContext, `SELECT ref, sha FROM refs WHERE remote = ?`, []any{remote}, func(rows *sql.Rows) error {
			var ref, sha string
			err := rows.Scan(&ref, &sha)
			known[ref] = sha
			return err
		})
		if err != nil {
			return err
		}
		e := &execs{ctx: ctx, tx: tx}
		for ref := range known {
			if _, ok := commits[ref]; !ok {
				e.exec(`DELETE FROM refs WHERE remote = ? AND ref = ?`, remote, ref)
			}
		}
		for ref, sha := range commits {
			if ref != "" && sha != "" && known[ref] != sha {
				e.exec(upsertRef, remote, ref, sha, "", toNanos(at))
			}
		}
		return e.err
	})
	if err != nil {
		return fmt.Errorf("cache: replace refs of %s: %w", remote, err)
	}
	return nil
}
