package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// GetPlan returns the stored body of plan planID.
func (db *DB) GetPlan(ctx context.Context, planID string) ([]byte, bool, error) {
	return db.document(ctx, "plan "+planID, `SELECT body FROM plans WHERE plan_id = ?`, planID)
}

// PutPlan stores plan planID with the snapshot digests it installs from.
// Putting the same plan again replaces it and renews its creation time:
// re-planning makes a plan live again, and its snapshots with it.
func (db *DB) PutPlan(ctx context.Context, planID string, body []byte, digests []string) error {
	if planID == "" {
		return errors.New("cache: put plan: empty plan id")
	}
	if body == nil {
		body = []byte{}
	}
	err := db.write(ctx, "put plan", func(tx *sql.Tx) error {
		e := &execs{ctx: ctx, tx: tx}
		e.exec(`
			INSERT INTO plans (plan_id, body, created_at) VALUES (?, ?, ?)
			ON CONFLICT (plan_id) DO UPDATE SET body = excluded.body, created_at = excluded.created_at`,
			planID, body, time.Now().UnixNano())
		e.exec(`DELETE FROM plan_snapshots WHERE plan_id = ?`, planID)
		for _, d := range digests {
			if d != "" { // an unpinnable (link) action has no snapshot
				e.exec(`INSERT OR IGNORE INTO plan_snapshots (plan_id, digest) VALUES (?, ?)`, planID, d)
			}
		}
		return e.err
	})
	if err != nil {
		return fmt.Errorf("cache: put plan %s: %w", planID, err)
	}
	return nil
}

// RenewPlan makes plan planID live again (renews its creation time, as
// PutPlan does) when it is stored with exactly these snapshot digests, and
// reports whether it did. A re-plan that lands on a stored planId then
// costs one small transaction instead of re-encoding and rewriting a body
// that says the same thing; a plan whose snapshots moved (say, a full-repo
// snapshot evicted and a folder snapshot fetched instead) is not renewed,
// so the caller stores it whole and GC keeps what it now needs.
func (db *DB) RenewPlan(ctx context.Context, planID string, digests []string) (bool, error) {
	want := map[string]bool{}
	for _, d := range digests {
		if d != "" {
			want[d] = true
		}
	}
	renewed := false
	err := db.write(ctx, "renew plan", func(tx *sql.Tx) error {
		n, stale := 0, false
		err := eachRow(ctx, tx.QueryContext, `SELECT digest FROM plan_snapshots WHERE plan_id = ?`, []any{planID}, func(rows *sql.Rows) error {
			var d string
			err := rows.Scan(&d)
			stale = stale || !want[d] // stored with a digest this plan no longer uses
			n++
			return err
		})
		if err != nil || stale || n != len(want) {
			return err
		}
		// Only the small plan_renewals row is written: updating plans'
		// created_at would make SQLite rewrite the whole body.
		var exists int
		switch err := tx.QueryRowContext(ctx, `SELECT 1 FROM plans WHERE plan_id = ?`, planID).Scan(&exists); {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return err
		}
		_, err = tx.ExecContext(ctx, `
			INSERT INTO plan_renewals (plan_id, renewed_at) VALUES (?, ?)
			ON CONFLICT (plan_id) DO UPDATE SET renewed_at = excluded.renewed_at`,
			planID, time.Now().UnixNano())
		renewed = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("cache: renew plan %s: %w", planID, err)
	}
	return renewed, nil
}

// liveSince is the SQL for when plan p was last made live: put or renewed.
const liveSince = `max(p.created_at, coalesce((SELECT r.renewed_at FROM plan_renewals r WHERE r.plan_id = p.plan_id), 0))`

// LivePlanDigests returns the digests used by plans created (or renewed)
// after since: the snapshots store GC must keep because a stored plan may
// still be approved and applied.
func (db *DB) LivePlanDigests(ctx context.Context, since time.Time) (map[string]bool, error) {
	live := make(map[string]bool)
	err := eachRow(ctx, db.query, `
		SELECT DISTINCT ps.digest FROM plan_snapshots ps
		JOIN plans p ON p.plan_id = ps.plan_id
		WHERE `+liveSince+` > ?`, []any{toNanos(since)}, func(rows *sql.Rows) error {
		var d string
		err := rows.Scan(&d)
		live[d] = true
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cache: live plan digests: %w", err)
	}
	return live, nil
}

// PrunePlans deletes plans created (and not renewed) at or before before,
// with their digest lists, and returns how many went, so the plans table
// does not grow forever. Plans are never pruned implicitly.
func (db *DB) PrunePlans(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := db.write(ctx, "prune plans", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM plans AS p WHERE `+liveSince+` <= ?`, toNanos(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("cache: prune plans: %w", err)
	}
	return n, nil
}
