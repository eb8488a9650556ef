package migrations

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite"
)

func TestFilesAreNumberedGooseSQL(t *testing.T) {
	t.Parallel()
	names, err := fs.Glob(FS, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("no embedded migrations: %v", err)
	}
	pattern := regexp.MustCompile(`^\d{5}_[a-z0-9_]+\.sql$`)
	for _, n := range names {
		b, err := fs.ReadFile(FS, n)
		if err != nil {
			t.Fatal(err)
		}
		if !pattern.MatchString(n) {
			t.Errorf("%s: name is not NNNNN_snake_case.sql", n)
		}
		for _, marker := range []string{"-- +goose Up", "-- +goose Down"} {
			if !strings.Contains(string(b), marker) {
				t.Errorf("%s: missing %q", n, marker)
			}
		}
	}
}

// Every migration must apply, roll back completely and apply again: a Down
// that leaves something behind breaks the second Up.
func TestUpDownUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectSQLite3, db, FS, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	wantTables := []string{"counters", "inventories", "marketplaces", "negatives", "plan_renewals", "plan_snapshots", "plans", "refs", "snapshot_uses", "snapshots", "submodules", "update_checks", "verdicts"}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	if got := userTables(t, db); strings.Join(got, ",") != strings.Join(wantTables, ",") {
		t.Fatalf("tables after up = %v, want %v", got, wantTables)
	}
	if _, err := p.DownTo(ctx, 0); err != nil {
		t.Fatalf("down: %v", err)
	}
	if got := userTables(t, db); len(got) != 0 {
		t.Fatalf("tables left after down: %v", got)
	}
	var indexes int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'`).Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if indexes != 0 {
		t.Fatalf("%d indexes left after down", indexes)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("second up: %v", err)
	}
	if pending, err := p.HasPending(ctx); err != nil || pending {
		t.Fatalf("pending after up = %v, %v", pending, err)
	}
}

func userTables(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'
		AND name NOT LIKE 'sqlite_%' AND name != 'goose_db_version' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}
