-- When a stored plan was last made live again by a re-plan that landed on
-- the same planId (SPEC §8: GC keeps the snapshots of live plans). Kept
-- apart from plans because SQLite rewrites a whole row to update one
-- column, and a bulk plan's body is megabytes: renewing it in place
-- rewrote the body on every warm re-plan. A plan is live since the later
-- of its created_at and its renewed_at.

-- +goose Up
CREATE TABLE plan_renewals (
    plan_id    TEXT    NOT NULL PRIMARY KEY REFERENCES plans (plan_id) ON DELETE CASCADE,
    renewed_at INTEGER NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE plan_renewals;
