package meta

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Entry is one line of the audit log: who asked for what, when, and what
// was served.
type Entry struct {
	At      time.Time
	Client  string // the token's name
	Replica string
	Action  string // refs, resolve, reachable, snapshot, marketplace, lease.takeover
	Repo    string
	Ref     string
	SHA     string
	Paths   string
	Outcome string // hit, upstream, waited, not_modified, blocked, not_found, error
	Detail  string // the rule that blocked, the error, the previous lease holder
	Digest  string
}

// Audit appends e.
func (d *DB) Audit(ctx context.Context, e Entry) error {
	_, err := d.pool.Exec(ctx, `INSERT INTO audit (client, replica, action, repo, ref, sha, paths, outcome, detail, digest)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		e.Client, e.Replica, e.Action, e.Repo, e.Ref, e.SHA, e.Paths, e.Outcome, e.Detail, e.Digest)
	if err != nil {
		return fmt.Errorf("append to the audit log: %w", err)
	}
	return nil
}

// AuditFilter selects audit entries; empty fields match everything.
type AuditFilter struct {
	Repo, Action, Outcome, Client string
	Since                         time.Time
	Limit                         int // default 1000
}

// AuditLog returns matching entries, oldest first.
func (d *DB) AuditLog(ctx context.Context, f AuditFilter) ([]Entry, error) {
	if f.Limit <= 0 {
		f.Limit = 1000
	}
	rows, err := d.pool.Query(ctx, `SELECT at, client, replica, action, repo, ref, sha, paths, outcome, detail, digest
		FROM audit WHERE ($1 = '' OR repo = $1) AND ($2 = '' OR action = $2) AND ($3 = '' OR outcome = $3)
			AND ($4 = '' OR client = $4) AND at >= $5
		ORDER BY id LIMIT $6`, f.Repo, f.Action, f.Outcome, f.Client, f.Since, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("read the audit log: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Entry, error) {
		var e Entry
		err := r.Scan(&e.At, &e.Client, &e.Replica, &e.Action, &e.Repo, &e.Ref, &e.SHA, &e.Paths, &e.Outcome, &e.Detail, &e.Digest)
		return e, err
	})
}
