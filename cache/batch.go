package cache

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// The readers of a Session (Load): a marketplace of a thousand entries
// over two hundred repositories asked for each repository's snapshot
// records, verdict and negatives one query at a time, and with SQLite's
// per-statement cost those queries were a large share of a warm plan.
// Each reader here answers for many keys in a query per few hundred.

// batchChunk bounds the keys of one query (a key is one or two
// parameters), well under SQLite's bound on query parameters.
const batchChunk = 400

// readIn runs query, which ends in "IN", for keys, a query per chunk of
// them with the chunk as its "(VALUES (?, ?), …)" list of rows (one per
// key, params of each), and hands every row to scan. A failure is a read
// failure of what.
func readIn[K any](ctx context.Context, db *DB, what string, keys []K, params func(K) []any, query string, scan func(*sql.Rows) error) error {
	for len(keys) > 0 {
		n := min(len(keys), batchChunk)
		var args []any
		values := make([]string, n)
		for i, k := range keys[:n] {
			p := params(k)
			args = append(args, p...)
			values[i] = "(?" + strings.Repeat(", ?", len(p)-1) + ")"
		}
		if err := eachRow(ctx, db.sql.QueryContext, query+" (VALUES "+strings.Join(values, ", ")+")", args, scan); err != nil {
			return db.readFailed(ctx, fmt.Errorf("cache: get %s: %w", what, err))
		}
		keys = keys[n:]
	}
	return nil
}

func (at RepoAt) params() []any { return []any{at.Remote, at.SHA} }

func oneParam(k string) []any { return []any{k} }

// eachRow runs q through query (the database's, a prepared statement's
// (DB.query) or a transaction's QueryContext) and hands every row to scan.
func eachRow(ctx context.Context, query func(context.Context, string, ...any) (*sql.Rows, error), q string, args []any, scan func(*sql.Rows) error) error {
	rows, err := query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// verdictsOf returns the verdicts recorded for any of ats.
func (db *DB) verdictsOf(ctx context.Context, ats []RepoAt) (map[RepoAt]Verdict, error) {
	out := make(map[RepoAt]Verdict, len(ats))
	err := readIn(ctx, db, fmt.Sprintf("verdicts of %d commits", len(ats)), ats, RepoAt.params, `SELECT remote, sha, reachable, checked_at FROM verdicts WHERE (remote, sha) IN`, func(rows *sql.Rows) error {
		var v Verdict
		var reachable, at int64
		if err := rows.Scan(&v.Remote, &v.SHA, &reachable, &at); err != nil {
			return err
		}
		v.Reachable, v.CheckedAt = reachable != 0, fromNanos(at)
		out[RepoAt{v.Remote, v.SHA}] = v
		return nil
	})
	return out, err
}

// negativesOf returns, by remote, every negative result of remotes (a
// few per dead repository at most): whether one has expired is the
// lookup's to say, by its clock.
func (db *DB) negativesOf(ctx context.Context, remotes []string) (map[string][]Negative, error) {
	out := map[string][]Negative{}
	err := readIn(ctx, db, fmt.Sprintf("negatives of %d repositories", len(remotes)), remotes, oneParam, `SELECT kind, remote, sha, path, code, message, created_at, expires_at FROM negatives
		WHERE remote IN`, func(rows *sql.Rows) error {
		var n Negative
		var created, expires int64
		if err := rows.Scan(&n.Kind, &n.Remote, &n.SHA, &n.Path, &n.Code, &n.Message, &created, &expires); err != nil {
			return err
		}
		n.Created, n.Expires = fromNanos(created), fromNanos(expires)
		out[n.Remote] = append(out[n.Remote], n)
		return nil
	})
	return out, err
}
