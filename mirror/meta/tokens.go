package meta

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"

	"reasonix.io/plugind/internal/lazyregexp"
	"reasonix.io/plugind/mirror/policy"
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

// Token is a live token, as a request bearing it is checked.
type Token struct {
	Name string
	// Scopes limit what it may fetch (none: anything the policy allows).
	Scopes policy.Scopes
}

// ErrTokenScopes: a live token's stored scopes no longer parse (a newer
// reasonix is stricter, or the row was edited by hand). The token is
// refused rather than treated as having none.
var ErrTokenScopes = errors.New("the token's stored scopes do not parse")

// CreateToken makes a new bearer token for the client name, limited to
// scopes (checked by policy.ParseScopes; none: anything the policy allows),
// and stores only its hash: the token itself is returned once and never
// kept. A revoked name may be reused.
func (d *DB) CreateToken(ctx context.Context, name string, scopes policy.Scopes) (string, error) {
	if !tokenName.MatchString(name) {
		return "", fmt.Errorf("token name %q: use 1 to 100 letters, digits and . _ @ -, starting with a letter or digit", name)
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // never fails
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	var got string
	switch ok, err := d.row(ctx, fmt.Sprintf("store token %q", name), `INSERT INTO tokens (name, hash, scopes) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET hash = EXCLUDED.hash, scopes = EXCLUDED.scopes, created_at = now(), revoked_at = NULL
		WHERE tokens.revoked_at IS NOT NULL
		RETURNING name`, []any{name, hashToken(token), scopes.Rules()}, &got); {
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

// Authenticate returns the live token, ok false when there is none
// (unknown or revoked). Its scopes are parsed again, by today's parser: a
// stored scope that no longer parses is ErrTokenScopes, never no scopes.
func (d *DB) Authenticate(ctx context.Context, token string) (Token, bool, error) {
	var t Token
	var rules []string
	ok, err := d.row(ctx, "check a token", `SELECT name, scopes FROM tokens WHERE hash = $1 AND revoked_at IS NULL`, []any{hashToken(token)}, &t.Name, &rules)
	if !ok || err != nil {
		return Token{}, false, err
	}
	if t.Scopes, err = policy.ParseScopes(rules); err != nil {
		return Token{}, false, fmt.Errorf("token %q: %w (%w); make it again: reasonix mirror token revoke, then create", t.Name, ErrTokenScopes, err)
	}
	return t, true, nil
}
