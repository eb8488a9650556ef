-- The checksum log (SPEC §17): a transparency log of records
-- "LOGPATH SHA sha256:HEX GITTREE|-", served with Go's checksum-database
-- protocol. Records are numbered from 0 in the order they were appended,
-- with no gap; hashes are tlog's stored hashes (tlog.StoredHashIndex order),
-- from which every tile and proof is read; log_tree is the tree the log
-- has now, whose head every replica signs with the same key. Appends are
-- serialized across replicas (an advisory transaction lock), and the three
-- tables change together in the append's transaction. Nothing here is
-- ever updated or deleted but log_tree's one row: a log that forgets
-- forks, and its clients would see it.

-- +goose Up
CREATE TABLE log_records (
    id         bigint      PRIMARY KEY CHECK (id >= 0),
    -- hex SHA-256 of "LOGPATH@COMMIT": one record per key, ever, whatever
    -- the key's length (a btree entry is capped near 2.7 kB).
    key_sha256 text        NOT NULL UNIQUE,
    log_path   text        NOT NULL,
    commit     text        NOT NULL,
    text       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE log_hashes (
    idx  bigint PRIMARY KEY CHECK (idx >= 0),
    hash bytea  NOT NULL CHECK (length(hash) = 32)
);

CREATE TABLE log_tree (
    one  boolean PRIMARY KEY DEFAULT true CHECK (one),
    size bigint  NOT NULL CHECK (size >= 0),
    hash bytea   NOT NULL CHECK (length(hash) = 32)
);
-- The empty tree: size 0, the zero hash (tlog.TreeHash(0)).
INSERT INTO log_tree (size, hash) VALUES (0, decode(repeat('00', 32), 'hex'));

-- +goose Down
DROP TABLE log_tree;
DROP TABLE log_hashes;
DROP TABLE log_records;
