-- The git tree ids of a commit's folders, as a proven fetch named them
-- (host.Fetched.GitTrees: the git transport reads them, an archive is
-- hashed to them). The checksum log's records carry a tree's id beside its
-- digest (SPEC §17); the mirror stores a commit's whole tree once and
-- answers for any folder of it later, when only this table still knows
-- that folder's id. path '' is the root. Keyed by path_key, the hex
-- SHA-256 of path, so a path of any length fits the index (as snapshots'
-- paths_key, migration 00002). A commit stored before this table, or
-- fetched without proof, has no rows: its records say "-".

-- +goose Up
CREATE TABLE git_trees (
    repo     text NOT NULL,
    sha      text NOT NULL,
    path_key text NOT NULL,
    path     text NOT NULL,
    tree     text NOT NULL CHECK (tree ~ '^[0-9a-f]{40}$'),
    PRIMARY KEY (repo, sha, path_key)
);

-- +goose Down
DROP TABLE git_trees;
