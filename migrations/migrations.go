// Package migrations holds the SQL migrations of the metadata cache
// (SPEC §8), embedded so the binary carries its own schema. Files are
// goose-style: NNNNN_name.sql with "-- +goose Up" and "-- +goose Down"
// sections, applied in version order.
package migrations

import "embed"

// FS holds every migration file. It is read-only, so sharing it as a
// package variable carries no mutable state.
//
//go:embed *.sql
var FS embed.FS
