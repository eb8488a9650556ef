-- What a package in the store contributes, as manifest.Load read it, keyed by
-- the loader's version, the tree digest and the name override. Store trees
-- never change, so a warm re-plan reads these instead of re-parsing hundreds
-- of manifests.

-- +goose Up
CREATE TABLE inventories (
    key        TEXT    NOT NULL PRIMARY KEY,
    body       BLOB    NOT NULL,
    created_at INTEGER NOT NULL
) WITHOUT ROWID;

-- +goose Down
DROP TABLE inventories;
