-- The mirror's refs, verdicts and negative results are now the host.Cached
-- layer's store (host.MetaStore, cached.go): a verdict may say "not on any
-- branch or tag" (the layer believes it only for its negative TTL), and a
-- negative result may be about a path at a commit — a missing folder, or a
-- tree refused for some folders — whose folder list can be longer than an
-- index entry holds, so it is keyed by its SHA-256 (as snapshots are,
-- 00002). The mirror's own "full_budget" rows are that layer's content
-- verdicts now.

-- +goose Up
ALTER TABLE verdicts ADD COLUMN reachable boolean NOT NULL DEFAULT true;
DELETE FROM negatives WHERE kind = 'full_budget';
ALTER TABLE negatives ADD COLUMN path text NOT NULL DEFAULT '';
ALTER TABLE negatives ADD COLUMN path_key text NOT NULL DEFAULT ''; -- '' or the hex SHA-256 of path
ALTER TABLE negatives DROP CONSTRAINT negatives_pkey;
ALTER TABLE negatives ADD PRIMARY KEY (kind, repo, key, path_key);

-- +goose Down
DELETE FROM negatives WHERE path_key <> '';
ALTER TABLE negatives DROP CONSTRAINT negatives_pkey;
ALTER TABLE negatives ADD PRIMARY KEY (kind, repo, key);
ALTER TABLE negatives DROP COLUMN path_key;
ALTER TABLE negatives DROP COLUMN path;
DELETE FROM verdicts WHERE NOT reachable;
ALTER TABLE verdicts DROP COLUMN reachable;
