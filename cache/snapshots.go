package cache

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// The snapshots table keeps three kinds of record of a repository's
// tree at a commit, told apart in its subdir column — the encoding lives
// here alone:
//
//	""       the store snapshot of the whole tree
//	"@P"     a store snapshot holding folder P (and maybe others)
//	"/P"     the tree digest of folder P itself, whichever snapshot holds it
//
// A snapshot record says only that the tree was stored once; the store may
// have evicted it since, so callers check the store too.

// Whole returns the store snapshot of at's whole tree.
func (s *Session) Whole(ctx context.Context, at RepoAt) (string, bool) {
	return s.snapshot(ctx, at, "")
}

// PutWhole records the store snapshot of at's whole tree.
func (s *Session) PutWhole(at RepoAt, digest string) { s.putSnapshot(at, "", digest) }

// Holding returns a store snapshot holding folder p of at.
func (s *Session) Holding(ctx context.Context, at RepoAt, p string) (string, bool) {
	return s.snapshot(ctx, at, "@"+p)
}

// PutHolding records a store snapshot holding folder p of at.
func (s *Session) PutHolding(at RepoAt, p, digest string) { s.putSnapshot(at, "@"+p, digest) }

// Folder returns the tree digest of folder p of at.
func (s *Session) Folder(ctx context.Context, at RepoAt, p string) (string, bool) {
	return s.snapshot(ctx, at, "/"+p)
}

// PutFolder records the tree digest of folder p of at.
func (s *Session) PutFolder(at RepoAt, p, digest string) { s.putSnapshot(at, "/"+p, digest) }

// SnapshotUses returns the last use time of every snapshot ever touched,
// the LastUsed input of store GC.
func (db *DB) SnapshotUses(ctx context.Context) (map[string]time.Time, error) {
	db.settle()
	uses := make(map[string]time.Time)
	err := eachRow(ctx, db.query, `SELECT digest, last_used FROM snapshot_uses`, nil, func(rows *sql.Rows) error {
		var d string
		var at int64
		err := rows.Scan(&d, &at)
		uses[d] = fromNanos(at)
		return err
	})
	if err != nil {
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
		e := &execs{ctx: ctx, tx: tx}
		for _, d := range digests {
			e.exec(`DELETE FROM snapshots WHERE digest = ?`, d)
			e.exec(`DELETE FROM snapshot_uses WHERE digest = ?`, d)
		}
		return e.err
	})
	if err != nil {
		return fmt.Errorf("cache: forget %d snapshots: %w", len(digests), err)
	}
	return nil
}

// RepoAt names a repository at a commit.
type RepoAt struct{ Remote, SHA string }

// snapshotsOf returns the snapshot records of each of ats, by key, a query
// per few hundred: every one of ats is in the result, with no records when
// none are stored.
func (db *DB) snapshotsOf(ctx context.Context, ats []RepoAt) (map[RepoAt]map[string]string, error) {
	out := make(map[RepoAt]map[string]string, len(ats))
	for _, at := range ats {
		out[at] = map[string]string{}
	}
	err := readIn(ctx, db, fmt.Sprintf("snapshots of %d repositories", len(ats)), ats, RepoAt.params, `SELECT remote, sha, subdir, digest FROM snapshots WHERE (remote, sha) IN`, func(rows *sql.Rows) error {
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
	return out, err
}
