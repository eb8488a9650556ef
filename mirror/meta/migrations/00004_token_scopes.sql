-- A token's scopes (SPEC §15): RULEs as the operator wrote them (checked by
-- the policy package's parser, and parsed again on every use), limiting what
-- the token may fetch. None, the default, is what every earlier token had:
-- anything the policy allows.

-- +goose Up
ALTER TABLE tokens ADD COLUMN scopes text[] NOT NULL DEFAULT '{}';

-- +goose Down
-- Without the column a scoped token would fetch anything: revoke those
-- rather than widen them.
UPDATE tokens SET revoked_at = now() WHERE revoked_at IS NULL AND cardinality(scopes) > 0;
ALTER TABLE tokens DROP COLUMN scopes;
