-- Times are INTEGER Unix nanoseconds (UTC), so ordering and exact
-- round-trips need no text parsing.

-- +goose Up
CREATE TABLE refs (
    remote      TEXT    NOT NULL,
    ref         TEXT    NOT NULL,
    sha         TEXT    NOT NULL,
    etag        TEXT    NOT NULL DEFAULT '',
    resolved_at INTEGER NOT NULL,
    PRIMARY KEY (remote, ref)
) WITHOUT ROWID;

CREATE TABLE snapshots (
    remote     TEXT    NOT NULL,
    sha        TEXT    NOT NULL,
    subdir     TEXT    NOT NULL DEFAULT '',
    digest     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (remote, sha, subdir)
) WITHOUT ROWID;

CREATE INDEX snapshots_digest ON snapshots (digest);

CREATE TABLE marketplaces (
    remote     TEXT    NOT NULL,
    sha        TEXT    NOT NULL,
    document   BLOB    NOT NULL,
    fetched_at INTEGER NOT NULL,
    PRIMARY KEY (remote, sha)
);

CREATE TABLE plans (
    plan_id    TEXT    NOT NULL PRIMARY KEY,
    body       BLOB    NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE INDEX plans_created_at ON plans (created_at);

-- Which snapshots a stored plan will install from, so store GC can keep
-- them while the plan may still be approved.
CREATE TABLE plan_snapshots (
    plan_id TEXT NOT NULL REFERENCES plans (plan_id) ON DELETE CASCADE,
    digest  TEXT NOT NULL,
    PRIMARY KEY (plan_id, digest)
) WITHOUT ROWID;

CREATE TABLE snapshot_uses (
    digest    TEXT    NOT NULL PRIMARY KEY,
    last_used INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE counters (
    kind   TEXT    NOT NULL PRIMARY KEY,
    hits   INTEGER NOT NULL DEFAULT 0,
    misses INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- +goose Down
DROP TABLE counters;
DROP TABLE snapshot_uses;
DROP TABLE plan_snapshots;
DROP INDEX plans_created_at;
DROP TABLE plans;
DROP TABLE marketplaces;
DROP INDEX snapshots_digest;
DROP TABLE snapshots;
DROP TABLE refs;
