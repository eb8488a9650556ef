-- The submodules of each fetched tree (SPEC §8): a gitlink's folder, the
-- repository its .gitmodules entry names and the commit it pins, per
-- (remote, sha), nested ones with their paths from the outer root. A
-- re-plan from the store lists them as the fetch that stored the tree did.
--
-- Snapshot records made before submodules and links to folders were
-- followed name trees without that content: they are forgotten, so the
-- next plan fetches those commits once more. So are remembered missing
-- paths, which may have been folders of a submodule.

-- +goose Up
CREATE TABLE submodules (
    remote  TEXT NOT NULL,
    sha     TEXT NOT NULL,
    path    TEXT NOT NULL,
    url     TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    PRIMARY KEY (remote, sha, path)
) WITHOUT ROWID;

DELETE FROM snapshots;
DELETE FROM negatives WHERE kind = 'path';

-- +goose Down
DROP TABLE submodules;
