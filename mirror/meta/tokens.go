package meta

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"

	"reasonix.io/plugind/internal/lazyregexp"
)

// TokenPrefix starts every client token, so one found in a log or a
// repository is recognisable: the secrets package masks such tokens
// wherever they appear.
const TokenPrefix = "rxm_"

var tokenName = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$`)

// ErrTokenExists: a live token already has that name.
var ErrTokenExists = errors.New("a token with that name exists")

// ErrNoToken: no live token has that name.
var ErrNoToken = errors.New("no live token with that name")

func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// CreateToken makes a new bearer token for the client name and stores only
// its hash: the token itself is returned once and never kept. A revoked
// name may be reused.
func (d *DB) CreateToken(ctx context.Context, name string) (string, error) {
	if !tokenName.MatchString(name) {
		return "", fmt.Errorf("token name %q: use 1 to 100 letters, digits and . _ @ -, starting with a letter or digit", name)
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // never fails
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	var got string
	switch ok, err := d.row(ctx, fmt.Sprintf("store token %q", name), `INSERT INTO tokens (name, hash) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET hash = EXCLUDED.hash, created_at = now(), revoked_at = NULL
		WHERE tokens.revoked_at IS NOT NULL
		RETURNING name`, []any{name, hashToken(token)}, &got); {
	case err != nil:
		return "", err
	case !ok:
		return "", fmt.Errorf("token %q: %w; revoke it first (reasonix mirror token revoke --name %s)", name, ErrTokenExists, name)
	}
	return token, nil
}

// RevokeToken revokes the live token called name.
func (d *DB) RevokeToken(ctx context.Context, name string) error {
	tag, err := d.pool.Exec(ctx, `UPDATE tokens SET revoked_at = now() WHERE name = $1 AND revoked_at IS NULL`, name)
	if err != nil {
		return dbErr("revoke token %q: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("revoke token %q: %w", name, ErrNoToken)
	}
	return nil
}

// Authenticate returns the name of the live token, ok false when there is
// none (unknown or revoked).
func (d *DB) Authenticate(ctx context.Context, token string) (string, bool, error) {
	var name string
	ok, err := d.row(ctx, "check a token", `SELECT name FROM tokens WHERE hash = $1 AND revoked_at IS NULL`, []any{hashToken(token)}, &name)
	return name, ok, err
}
