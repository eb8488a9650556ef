package cache

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// apply writes w in tx (Session.Commit).
func (w *sessionWrites) apply(ctx context.Context, tx *sql.Tx) error {
	now := time.Now().UnixNano()
	e := &execs{ctx: ctx, tx: tx}
	exec := e.exec
	for at, rows := range w.snaps {
		for key, digest := range rows {
			exec(`
				INSERT INTO snapshots (remote, sha, subdir, digest, created_at) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (remote, sha, subdir) DO UPDATE SET digest = excluded.digest`,
				at.Remote, at.SHA, key, digest, now)
		}
	}
	for at, subs := range w.subs {
		for _, s := range subs {
			exec(`
				INSERT INTO submodules (remote, sha, path, url, commit_sha) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (remote, sha, path) DO UPDATE SET url = excluded.url, commit_sha = excluded.commit_sha`,
				at.Remote, at.SHA, s.Path, s.URL, s.Commit)
		}
	}
	for _, v := range w.verdicts {
		exec(`
			INSERT INTO verdicts (remote, sha, reachable, checked_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (remote, sha) DO UPDATE SET reachable = excluded.reachable, checked_at = excluded.checked_at`,
			v.Remote, v.SHA, v.Reachable, toNanos(v.CheckedAt)) // the driver binds a bool as 1 or 0
	}
	for _, n := range w.negs {
		exec(`
			INSERT INTO negatives (kind, remote, sha, path, code, message, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (kind, remote, sha, path) DO UPDATE SET
				code = excluded.code, message = excluded.message,
				created_at = excluded.created_at, expires_at = excluded.expires_at`,
			n.Kind, n.Remote, n.SHA, n.Path, n.Code, n.Message, toNanos(n.Created), toNanos(n.Expires))
	}
	for at, doc := range w.markets {
		exec(`
			INSERT INTO marketplaces (remote, sha, document, fetched_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (remote, sha) DO UPDATE SET document = excluded.document, fetched_at = excluded.fetched_at`,
			at.Remote, at.SHA, doc, now)
	}
	for key, body := range w.invs {
		exec(`
			INSERT INTO inventories (key, body, created_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET body = excluded.body`,
			key, body, now)
	}
	for _, r := range w.refs {
		exec(upsertRef, r.Remote, r.Ref, r.SHA, r.ETag, toNanos(r.ResolvedAt))
	}
	for kind, c := range w.counts {
		if kind == "" && e.err == nil {
			e.err = errors.New("count: empty kind")
		}
		exec(`
			INSERT INTO counters (kind, hits, misses) VALUES (?, ?, ?)
			ON CONFLICT (kind) DO UPDATE SET hits = hits + excluded.hits, misses = misses + excluded.misses`,
			kind, c.Hits, c.Misses)
	}
	for digest, at := range w.touched {
		if digest == "" && e.err == nil {
			e.err = errors.New("touch snapshot: empty digest")
		}
		exec(`
			INSERT INTO snapshot_uses (digest, last_used) VALUES (?, ?)
			ON CONFLICT (digest) DO UPDATE SET last_used = max(last_used, excluded.last_used)`,
			digest, toNanos(at))
	}
	return e.err
}
