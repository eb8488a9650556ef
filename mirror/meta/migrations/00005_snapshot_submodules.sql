-- A snapshot records the submodules whose content its archive holds
-- ([{"path", "url", "commit"}], paths from the tree's root), so the mirror
-- can refuse a token whose scopes do not cover a submodule's repository
-- even when the snapshot was stored for another token. NULL: stored before
-- this was recorded; such a row is read as absent and recorded again on
-- the next request for it (one upstream fetch; the archive itself is kept).

-- +goose Up
ALTER TABLE snapshots ADD COLUMN submodules jsonb;

-- +goose Down
ALTER TABLE snapshots DROP COLUMN submodules;
