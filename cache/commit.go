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
	exec := func(q string, args ...any) error {
		_, err := tx.ExecContext(ctx, q, args...)
		return err
	}
	for at, rows := range w.snaps {
		for key, digest := range rows {
			if err := exec(`
				INSERT INTO snapshots (remote, sha, subdir, digest, created_at) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (remote, sha, subdir) DO UPDATE SET digest = excluded.digest`,
				at.Remote, at.SHA, key, digest, now); err != nil {
				return err
			}
		}
	}
	for at, subs := range w.subs {
		for _, s := range subs {
			if err := exec(`
				INSERT INTO submodules (remote, sha, path, url, commit_sha) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (remote, sha, path) DO UPDATE SET url = excluded.url, commit_sha = excluded.commit_sha`,
				at.Remote, at.SHA, s.Path, s.URL, s.Commit); err != nil {
				return err
			}
		}
	}
	for _, v := range w.verdicts {
		reachable := 0
		if v.Reachable {
			reachable = 1
		}
		if err := exec(`
			INSERT INTO verdicts (remote, sha, reachable, checked_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (remote, sha) DO UPDATE SET reachable = excluded.reachable, checked_at = excluded.checked_at`,
			v.Remote, v.SHA, reachable, toNanos(v.CheckedAt)); err != nil {
			return err
		}
	}
	for _, n := range w.negs {
		if err := exec(`
			INSERT INTO negatives (kind, remote, sha, path, code, message, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (kind, remote, sha, path) DO UPDATE SET
				code = excluded.code, message = excluded.message,
				created_at = excluded.created_at, expires_at = excluded.expires_at`,
			n.Kind, n.Remote, n.SHA, n.Path, n.Code, n.Message, toNanos(n.Created), toNanos(n.Expires)); err != nil {
			return err
		}
	}
	for at, doc := range w.markets {
		if err := exec(`
			INSERT INTO marketplaces (remote, sha, document, fetched_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (remote, sha) DO UPDATE SET document = excluded.document, fetched_at = excluded.fetched_at`,
			at.Remote, at.SHA, doc, now); err != nil {
			return err
		}
	}
	for key, body := range w.invs {
		if err := exec(`
			INSERT INTO inventories (key, body, created_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET body = excluded.body`,
			key, body, now); err != nil {
			return err
		}
	}
	for kind, c := range w.counts {
		if kind == "" {
			return errors.New("count: empty kind")
		}
		if err := exec(`
			INSERT INTO counters (kind, hits, misses) VALUES (?, ?, ?)
			ON CONFLICT (kind) DO UPDATE SET hits = hits + excluded.hits, misses = misses + excluded.misses`,
			kind, c.Hits, c.Misses); err != nil {
			return err
		}
	}
	for digest, at := range w.touched {
		if digest == "" {
			return errors.New("touch snapshot: empty digest")
		}
		if err := exec(`
			INSERT INTO snapshot_uses (digest, last_used) VALUES (?, ?)
			ON CONFLICT (digest) DO UPDATE SET last_used = max(last_used, excluded.last_used)`,
			digest, toNanos(at)); err != nil {
			return err
		}
	}
	return nil
}
