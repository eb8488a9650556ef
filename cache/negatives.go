package cache

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
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

// ListRefs returns every cached ref of remote: what a tree URL's REF is
// matched against offline.
func (db *DB) ListRefs(ctx context.Context, remote string) ([]Ref, error) {
	var out []Ref
	err := eachRow(ctx, db.query, `SELECT ref, sha, etag, resolved_at FROM refs WHERE remote = ?`, []any{remote}, func(rows *sql.Rows) error {
		r := Ref{Remote: remote}
		var at int64
		err := rows.Scan(&r.Ref, &r.SHA, &r.ETag, &at)
		r.ResolvedAt = fromNanos(at)
		out = append(out, r)
		return err
	})
	if err != nil {
		return nil, db.readFailed(ctx, fmt.Errorf("cache: list refs of %s: %w", remote, err))
	}
	return out, nil
}

// FirstOf is the first of keys, in their order, with a negative of remote
// in negs that has not expired at now.
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
