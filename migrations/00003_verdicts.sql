-- Reachability verdicts (SPEC §6: is a pinned commit on one of its
-- repository's branches or tags?), cached per (remote, sha), and negative
-- results (SPEC §8: repositories, refs, commits and paths that do not
-- exist), remembered until they expire so a warm re-plan does not ask again.

-- +goose Up
CREATE TABLE verdicts (
    remote     TEXT    NOT NULL,
    sha        TEXT    NOT NULL,
    reachable  INTEGER NOT NULL,
    checked_at INTEGER NOT NULL,
    PRIMARY KEY (remote, sha)
) WITHOUT ROWID;

CREATE TABLE negatives (
    kind       TEXT    NOT NULL,
    remote     TEXT    NOT NULL,
    sha        TEXT    NOT NULL DEFAULT '',
    path       TEXT    NOT NULL DEFAULT '',
    code       TEXT    NOT NULL,
    message    TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (kind, remote, sha, path)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE negatives;
DROP TABLE verdicts;
