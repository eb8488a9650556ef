package meta

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"reasonix.io/plugind"
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
	Outcome string // hit, upstream, waited, not_modified, blocked, out_of_scope, not_found, error
	Detail  string // the rule that blocked, the error, the previous lease holder
	Digest  string
}

// maxDetail bounds the free-text fields of an entry.
const maxDetail = 8 << 10

// Audit appends e. Every field is stored whatever bytes it holds (Text);
// the indexed repository is cut to MaxKey and free text to maxDetail, so
// the only way for a row to fail is for the database itself to fail.
func (d *DB) Audit(ctx context.Context, e Entry) error {
	key := func(s string) string { return clip(Text(s), MaxKey) }
	text := func(s string) string { return clip(Text(s), maxDetail) }
	return d.exec(ctx, "append to the audit log", `INSERT INTO audit (client, replica, action, repo, ref, sha, paths, outcome, detail, digest)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		key(e.Client), key(e.Replica), key(e.Action), key(e.Repo), key(e.Ref), key(e.SHA), Text(e.Paths),
		key(e.Outcome), text(e.Detail), key(e.Digest))
}

// AuditFilter selects audit entries; empty fields match everything.
type AuditFilter struct {
	Repo, Action, Outcome, Client string
	Since                         time.Time
	Limit                         int // default 1000
}

// AuditLog returns matching entries, oldest first.
func (d *DB) AuditLog(ctx context.Context, f AuditFilter) ([]Entry, error) {
	f.Limit = plugind.PositiveOr(f.Limit, 1000)
	// Columns in Entry's field order (pgx.RowToStructByPos).
	return collect(ctx, d, "read the audit log", `SELECT at, client, replica, action, repo, ref, sha, paths, outcome, detail, digest
		FROM audit WHERE ($1 = '' OR repo = $1) AND ($2 = '' OR action = $2) AND ($3 = '' OR outcome = $3)
			AND ($4 = '' OR client = $4) AND at >= $5
		ORDER BY id LIMIT $6`, []any{f.Repo, f.Action, f.Outcome, f.Client, f.Since, f.Limit}, pgx.RowToStructByPos[Entry])
}
