package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/gofrs/flock"
	"github.com/pressly/goose/v3"

	"reasonix.io/plugind/migrations"
)

// lockSchema serializes, across processes, everything Open does to the
// database file: migrating it, and moving a corrupt one aside. goose has no
// SQLite locker, and a second process must never rename a database that the
// first has just created. The lock is a file beside the database, never the
// database itself: closing any descriptor of that file would drop SQLite's
// own POSIX locks held by this process.
func lockSchema(ctx context.Context, abs string) (unlock func(), err error) {
	lock := flock.New(abs + ".migrate.lock")
	ok, err := lock.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil {
		return nil, fmt.Errorf("lock for migration: %w", err)
	}
	if !ok {
		return nil, errors.New("lock for migration: not acquired")
	}
	return func() { _ = lock.Unlock() }, nil
}

// openReady opens the database at abs, applies pending migrations and checks
// that every table and column this package reads is there. Called under
// lockSchema. On error the handle is closed.
func openReady(ctx context.Context, abs string) (*sql.DB, error) {
	if err := checkExisting(ctx, abs); err != nil {
		return nil, err
	}
	sqldb, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, sqldb); err != nil {
		_ = sqldb.Close()
		return nil, err
	}
	if err := probeSchema(ctx, sqldb); err != nil {
		_ = sqldb.Close()
		return nil, err
	}
	return sqldb, nil
}

// errForeignSchema marks a database some other program wrote: tables, but
// no migration history.
var errForeignSchema = errors.New("foreign schema")

// checkExisting looks at an existing, non-empty database file through a
// read-only connection, before anything (the WAL switch, the migrations)
// writes to it: a file that is not a database, or one some other program
// wrote, is then moved aside exactly as it was found.
func checkExisting(ctx context.Context, abs string) error {
	if info, err := os.Stat(abs); err != nil || !info.Mode().IsRegular() || info.Size() == 0 {
		return nil // missing, empty or not a file: the real open says what is wrong
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Set("mode", "ro")
	ro, err := sql.Open("sqlite", fileURI(abs, q))
	if err != nil {
		return err
	}
	defer ro.Close()
	return checkNotForeign(ctx, ro)
}

// checkNotForeign refuses a database that has tables but no goose version
// table. Reading the table list is also the first read of the file: a file
// that is not a database fails here.
func checkNotForeign(ctx context.Context, sqldb *sql.DB) error {
	rows, err := sqldb.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	defer rows.Close()
	var tables []string
	versioned := false
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return fmt.Errorf("read schema: %w", err)
		}
		versioned = versioned || name == "goose_db_version"
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	if len(tables) > 0 && !versioned {
		const show = 5
		if len(tables) > show {
			tables = append(tables[:show], "…")
		}
		return fmt.Errorf("%w: tables %v but no migration history", errForeignSchema, tables)
	}
	return nil
}

// errNewerSchema marks a database migrated by a newer reasonix whose schema
// this one cannot read: not corrupt, so it is left alone.
var errNewerSchema = errors.New("newer schema")

// migrate applies pending migrations. A database already past every known
// migration was written by a newer reasonix; it is used as is when the probe
// finds what this code reads, and never migrated down.
func migrate(ctx context.Context, sqldb *sql.DB) error {
	p, err := goose.NewProvider(goose.DialectSQLite3, sqldb, migrations.FS,
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	current, target, err := p.GetVersions(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if current > target {
		if err := probeSchema(ctx, sqldb); err != nil {
			return fmt.Errorf("%w: the cache has schema version %d, this reasonix knows up to %d, and cannot read it: %v", errNewerSchema, current, target, err)
		}
		return nil
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// schemaProbes name every table and column the cache's queries use. A
// statement over them compiles only when they all exist, which catches a
// foreign or half-migrated schema at Open rather than in the middle of an
// install.
var schemaProbes = []string{
	`SELECT remote, ref, sha, etag, resolved_at FROM refs`,
	`SELECT remote, sha, subdir, digest, created_at FROM snapshots`,
	`SELECT remote, sha, document, fetched_at FROM marketplaces`,
	`SELECT plan_id, body, created_at FROM plans`,
	`SELECT plan_id, digest FROM plan_snapshots`,
	`SELECT digest, last_used FROM snapshot_uses`,
	`SELECT kind, hits, misses FROM counters`,
	`SELECT key, body, created_at FROM inventories`,
}

func probeSchema(ctx context.Context, sqldb *sql.DB) error {
	for _, q := range schemaProbes {
		rows, err := sqldb.QueryContext(ctx, q+" LIMIT 0")
		if err != nil {
			return fmt.Errorf("schema check: %w", err)
		}
		_ = rows.Close()
	}
	return nil
}
