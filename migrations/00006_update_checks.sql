-- What the daemon's background update check last found (SPEC §12 GET
-- /updates, `reasonix plugin list --outdated`): one row, the check's JSON
-- record, so it survives a restart and the CLI reads what the daemon saw.
-- Derived data like the rest of the cache: losing it costs one check.

-- +goose Up
CREATE TABLE update_checks (
    id         INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    body       BLOB    NOT NULL,
    checked_at INTEGER NOT NULL
);

-- +goose Down
DROP TABLE update_checks;
