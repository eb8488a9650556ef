package cache

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Negative is a remembered "does not exist": a repository, ref, commit or
// path that a host said is not there, kept until Expires so re-plans do not
// ask again (SPEC §8). Code and Message are the error as it was reported.
type Negative struct {
	Kind    string // "repo", "ref", "commit", "path"
	Remote  string
	SHA     string // the ref or commit asked for ("" for a repository)
	Path    string // the path asked for ("" unless Kind is "path")
	Code    string
	Message string
	Created time.Time
	Expires time.Time
}

// NegativeKey names one negative result of a remote.
type NegativeKey struct{ Kind, SHA, Path string }

// FirstNegative returns the first of keys (in their order) with a negative
// result of remote that has not expired at now: one query where a lookup
// per key was three for every repository of a bulk plan.
func (db *DB) FirstNegative(ctx context.Context, remote string, now time.Time, keys ...NegativeKey) (Negative, bool, error) {
	if len(keys) == 0 {
		return Negative{}, false, nil
	}
	args := []any{remote, toNanos(now)}
	for _, k := range keys {
		args = append(args, k.Kind, k.SHA, k.Path)
	}
	var negs []Negative
	if err := db.scanNegatives(ctx, `SELECT kind, remote, sha, path, code, message, created_at, expires_at FROM negatives
		WHERE remote = ? AND expires_at > ? AND (kind, sha, path) IN (VALUES (?, ?, ?)`+strings.Repeat(", (?, ?, ?)", len(keys)-1)+`)`, args, &negs); err != nil {
		return Negative{}, false, db.readFailed(ctx, fmt.Errorf("cache: get negatives of %s: %w", remote, err))
	}
	n, ok := FirstOf(negs, remote, now, keys)
	return n, ok, nil
}

// FirstOf is FirstNegative over negatives already read (GetNegativesOf):
// the first of keys, in their order, with a negative of remote in negs
// that has not expired at now.
func FirstOf(negs []Negative, remote string, now time.Time, keys []NegativeKey) (Negative, bool) {
	best, found := len(keys), Negative{}
	for _, n := range negs {
		if n.Remote != remote || !n.Expires.After(now) {
			continue
		}
		if i := slices.Index(keys, NegativeKey{n.Kind, n.SHA, n.Path}); i >= 0 && i < best {
			best, found = i, n
		}
	}
	return found, best < len(keys)
}

// PutNegative records a negative result (replacing an older one).
func (db *DB) PutNegative(ctx context.Context, n Negative) error {
	if n.Kind == "" || n.Remote == "" {
		return fmt.Errorf("cache: put negative: kind and remote are required")
	}
	err := db.write(ctx, "put negative", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO negatives (kind, remote, sha, path, code, message, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (kind, remote, sha, path) DO UPDATE SET
				code = excluded.code, message = excluded.message,
				created_at = excluded.created_at, expires_at = excluded.expires_at`,
			n.Kind, n.Remote, n.SHA, n.Path, n.Code, n.Message, toNanos(n.Created), toNanos(n.Expires))
		return err
	})
	if err != nil {
		return fmt.Errorf("cache: put negative %s %s: %w", n.Kind, n.Remote, err)
	}
	return nil
}

// ForgetNegatives drops every negative result about remote (a host that
// now answers, or --refresh).
func (db *DB) ForgetNegatives(ctx context.Context, remote string) error {
	return db.write(ctx, "forget negatives", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM negatives WHERE remote = ?`, remote)
		return err
	})
}

// ListRefs returns every cached ref of remote: what a tree URL's REF is
// matched against offline.
func (db *DB) ListRefs(ctx context.Context, remote string) ([]Ref, error) {
	rows, err := db.query(ctx, `SELECT ref, sha, etag, resolved_at FROM refs WHERE remote = ?`, remote)
	if err != nil {
		return nil, db.readFailed(ctx, fmt.Errorf("cache: list refs of %s: %w", remote, err))
	}
	defer rows.Close()
	var out []Ref
	for rows.Next() {
		r := Ref{Remote: remote}
		var at int64
		if err := rows.Scan(&r.Ref, &r.SHA, &r.ETag, &at); err != nil {
			return nil, err
		}
		r.ResolvedAt = fromNanos(at)
		out = append(out, r)
	}
	return out, rows.Err()
}
