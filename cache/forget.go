package cache

import (
	"context"
	"database/sql"
	"fmt"
)

// ForgetDigest drops what the cache derived from the stored tree of snapshot
// digest, for when that snapshot failed verification and was quarantined:
//
//   - the subdirectory digests of every (remote, sha) whose tree it is, and
//     the inventories keyed by any of those digests or by digest itself:
//     they were computed by reading the stored tree, which may have been
//     damaged before they were, so they are recomputed from a fresh fetch;
//   - its use time.
//
// Snapshot rows are keyed by subdir: "" for a whole tree, "@P" for a
// snapshot holding folder P, "/P" for folder P's own digest (see the
// resolver). The rows of whole or partial trees stay: they were recorded
// from the fetched content as it was committed, they name what a fresh
// fetch must hash to, and they let an offline plan name the quarantined
// snapshot instead of saying the commit was never fetched. The snapshot
// being gone from the store already makes every lookup through them a miss
// (callers check the store), so the next online plan fetches again.
func (db *DB) ForgetDigest(ctx context.Context, digest string) error {
	if digest == "" {
		return fmt.Errorf("cache: forget digest: empty digest")
	}
	err := db.write(ctx, "forget digest", func(tx *sql.Tx) error {
		// Every digest recorded under the same trees: the root's own and
		// its subdirectories'.
		derived := []string{digest}
		err := eachRow(ctx, tx.QueryContext, `
			SELECT DISTINCT s.digest FROM snapshots s
			JOIN snapshots root ON root.remote = s.remote AND root.sha = s.sha
				AND (root.subdir = '' OR substr(root.subdir, 1, 1) = '@')
			WHERE root.digest = ?`, []any{digest}, func(rows *sql.Rows) error {
			var d string
			err := rows.Scan(&d)
			if d != digest {
				derived = append(derived, d)
			}
			return err
		})
		if err != nil {
			return err
		}
		e := &execs{ctx: ctx, tx: tx}
		e.exec(`
			DELETE FROM snapshots WHERE substr(subdir, 1, 1) = '/' AND (remote, sha) IN
				(SELECT remote, sha FROM snapshots WHERE digest = ?
					AND (subdir = '' OR substr(subdir, 1, 1) = '@'))`, digest)
		// Inventory keys embed the tree digest they describe (instr, not
		// LIKE: no character of a digest is then special).
		for _, d := range derived {
			e.exec(`DELETE FROM inventories WHERE instr(key, ?) > 0`, d)
		}
		e.exec(`DELETE FROM snapshot_uses WHERE digest = ?`, digest)
		return e.err
	})
	if err != nil {
		return fmt.Errorf("cache: forget digest %s: %w", digest, err)
	}
	return nil
}
