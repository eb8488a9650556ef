// Package migrations holds the team mirror's PostgreSQL schema (SPEC §15)
// as goose migrations, embedded so the binary carries its own schema.
package migrations

import "embed"

// FS holds every migration file; read-only, so a package variable is safe.
//
//go:embed *.sql
var FS embed.FS
