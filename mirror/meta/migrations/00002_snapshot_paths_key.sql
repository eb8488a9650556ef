-- Snapshots are keyed by the SHA-256 of their folder list (paths_key, hex)
-- rather than by the list itself: a bulk plan asking for many folders of
-- one repository sends a list longer than a btree index entry holds (about
-- 2.7 kB), and storing its snapshot failed.

-- +goose Up
ALTER TABLE snapshots ADD COLUMN paths_key text;
UPDATE snapshots SET paths_key = encode(sha256(convert_to(paths, 'UTF8')), 'hex');
ALTER TABLE snapshots ALTER COLUMN paths_key SET NOT NULL;
ALTER TABLE snapshots DROP CONSTRAINT snapshots_pkey;
ALTER TABLE snapshots ADD PRIMARY KEY (repo, sha, paths_key);

-- +goose Down
DELETE FROM snapshots WHERE octet_length(paths) > 2000;
ALTER TABLE snapshots DROP CONSTRAINT snapshots_pkey;
ALTER TABLE snapshots ADD PRIMARY KEY (repo, sha, paths);
ALTER TABLE snapshots DROP COLUMN paths_key;
