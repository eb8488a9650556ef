-- The team mirror's metadata (SPEC §15). Repositories are named by their
-- source key, host included ("github.com/owner/repo"); every time is the
-- database's clock, so replicas on machines whose clocks disagree still
-- agree on leases and expiry.

-- +goose Up
CREATE TABLE refs (
    repo        text        NOT NULL,
    ref         text        NOT NULL, -- "HEAD" is the default branch
    sha         text        NOT NULL,
    etag        text        NOT NULL DEFAULT '', -- upstream's, for the next conditional request
    resolved_at timestamptz NOT NULL, -- when upstream last gave a new answer
    checked_at  timestamptz NOT NULL, -- when upstream last confirmed it
    PRIMARY KEY (repo, ref)
);

CREATE TABLE ref_lists (
    repo       text        PRIMARY KEY,
    head       text        NOT NULL,
    commits    jsonb       NOT NULL,
    checked_at timestamptz NOT NULL
);

-- Positive reachability verdicts (SPEC §6): a commit on a branch or tag
-- stays in its history. Negative ones live in negatives, with an expiry.
CREATE TABLE verdicts (
    repo       text        NOT NULL,
    sha        text        NOT NULL,
    checked_at timestamptz NOT NULL,
    PRIMARY KEY (repo, sha)
);

-- Archives in the object store, by tree digest: uploaded once, immutable.
CREATE TABLE objects (
    digest         text        PRIMARY KEY,
    size           bigint      NOT NULL, -- archive bytes
    archive_sha256 text        NOT NULL,
    files          integer     NOT NULL,
    bytes          bigint      NOT NULL, -- file content bytes
    created_at     timestamptz NOT NULL DEFAULT now()
);

-- (repository, commit, folders) -> tree digest. paths is "" for the whole
-- tree, else the sorted folder paths joined by newlines.
CREATE TABLE snapshots (
    repo       text        NOT NULL,
    sha        text        NOT NULL,
    paths      text        NOT NULL,
    digest     text        NOT NULL REFERENCES objects (digest),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo, sha, paths)
);

CREATE TABLE marketplaces (
    repo       text        NOT NULL,
    sha        text        NOT NULL,
    path       text        NOT NULL,
    document   bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo, sha, path)
);

-- Things that do not exist (or failed) for a while: kind is repo, ref,
-- commit, unreachable, path, full_budget or failed.
CREATE TABLE negatives (
    kind       text        NOT NULL,
    repo       text        NOT NULL,
    key        text        NOT NULL, -- the ref or commit ("" for a repository)
    code       text        NOT NULL,
    message    text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (kind, repo, key)
);

-- One upstream operation per name across replicas; an expired lease is
-- taken over.
CREATE TABLE leases (
    name            text        PRIMARY KEY,
    holder          text        NOT NULL,
    acquired_at     timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL,
    previous_holder text        NOT NULL DEFAULT ''
);

CREATE TABLE tokens (
    name       text        PRIMARY KEY,
    hash       bytea       NOT NULL UNIQUE, -- sha256 of the token
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);

CREATE TABLE audit (
    id      bigserial   PRIMARY KEY,
    at      timestamptz NOT NULL DEFAULT now(),
    client  text        NOT NULL, -- the token's name
    replica text        NOT NULL,
    action  text        NOT NULL,
    repo    text        NOT NULL DEFAULT '',
    ref     text        NOT NULL DEFAULT '',
    sha     text        NOT NULL DEFAULT '',
    paths   text        NOT NULL DEFAULT '',
    outcome text        NOT NULL,
    detail  text        NOT NULL DEFAULT '',
    digest  text        NOT NULL DEFAULT ''
);
CREATE INDEX audit_at ON audit (at);
CREATE INDEX audit_repo ON audit (repo, at);

-- +goose Down
DROP TABLE audit;
DROP TABLE tokens;
DROP TABLE leases;
DROP TABLE negatives;
DROP TABLE marketplaces;
DROP TABLE snapshots;
DROP TABLE objects;
DROP TABLE verdicts;
DROP TABLE ref_lists;
DROP TABLE refs;
