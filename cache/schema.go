package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strings"
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
//
// Nothing is written to the file before it is known to be ours (or new):
// the WAL switch, which rewrites the header, comes after checkNotForeign,
// so a file that is moved aside is moved exactly as it was found.
// maxConns bounds the pooled connections to one cache file.
const maxConns = 4

func openReady(ctx context.Context, abs string) (*sql.DB, error) {
	if err := makePrivate(abs); err != nil {
		return nil, err
	}
	sqldb, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, err
	}
	// A few connections, all kept: opening one (pragmas, schema) costs
	// more than most queries, and with database/sql's default of two idle
	// connections a bulk plan's parallel lookups opened and closed them by
	// the hundred (issue 13).
	sqldb.SetMaxOpenConns(maxConns)
	sqldb.SetMaxIdleConns(maxConns)
	fail := func(err error) (*sql.DB, error) {
		_ = sqldb.Close()
		return nil, err
	}
	versioned, err := checkNotForeign(ctx, sqldb)
	if err != nil {
		return fail(err)
	}
	// Persistent in the file: one switch serves every pooled connection.
	if _, err := sqldb.ExecContext(ctx, `PRAGMA journal_mode = WAL`); err != nil {
		return fail(fmt.Errorf("switch to WAL: %w", err))
	}
	if err := migrate(ctx, sqldb, versioned); err != nil {
		return fail(err)
	}
	if err := probeSchema(ctx, sqldb); err != nil {
		return fail(err)
	}
	return sqldb, nil
}

// errForeignSchema marks a database some other program wrote: tables, but
// no migration history.
var errForeignSchema = errors.New("foreign schema")

// checkNotForeign refuses a database that has tables but no goose version
// table, and says whether it has one. Reading the table list is also the
// first read of the file: a file that is not a database fails here.
func checkNotForeign(ctx context.Context, sqldb *sql.DB) (versioned bool, err error) {
	var tables []string
	err = eachRow(ctx, sqldb.QueryContext, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`, nil, func(rows *sql.Rows) error {
		var name string
		err := rows.Scan(&name)
		versioned = versioned || name == versionTable
		tables = append(tables, name)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("read schema: %w", err)
	}
	if len(tables) > 0 && !versioned {
		const show = 5
		if len(tables) > show {
			tables = append(tables[:show], "…")
		}
		return false, fmt.Errorf("%w: tables %v but no migration history", errForeignSchema, tables)
	}
	return versioned, nil
}

// versionTable is goose's migration history table.
const versionTable = "goose_db_version"

// errHistory marks a failure to read or apply the migration history: the
// file's schema is not one the migrations lead to.
var errHistory = errors.New("migration history")

// errNewerSchema marks a database migrated by a newer reasonix whose schema
// this one cannot read: not corrupt, so it is left alone.
var errNewerSchema = errors.New("newer schema")

// migrate applies pending migrations. A database already at the latest
// version (every open but the first) is left alone without asking goose,
// which would list and re-check the whole history. A database past every
// known migration was written by a newer reasonix; it is used as is when the
// probe finds what this code reads, and never migrated down.
func migrate(ctx context.Context, sqldb *sql.DB, versioned bool) error {
	p, err := goose.NewProvider(goose.DialectSQLite3, sqldb, migrations.FS,
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	var target int64
	for _, src := range p.ListSources() {
		target = max(target, src.Version)
	}
	if versioned {
		var current int64
		if err := sqldb.QueryRowContext(ctx, `SELECT COALESCE(MAX(version_id), 0) FROM `+versionTable+` WHERE is_applied`).Scan(&current); err != nil {
			return fmt.Errorf("migrate: %w: read version: %w", errHistory, err)
		}
		switch {
		case current == target:
			return nil
		case current > target:
			if err := probeSchema(ctx, sqldb); err != nil {
				return fmt.Errorf("%w: the cache has schema version %d, this reasonix knows up to %d, and cannot read it: %v", errNewerSchema, current, target, err)
			}
			return nil
		}
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w: %w", errHistory, err)
	}
	dropParserBuffers()
	return nil
}

// schemaProbes name every table and column the cache's queries use. One
// statement over them all compiles only when they all exist, which catches
// a foreign or half-migrated schema at Open rather than in the middle of an
// install; one statement, because each costs a compile (ten took 3 ms of
// every command's start).
var schemaProbes = []struct{ table, columns string }{
	{"refs", "remote, ref, sha, etag, resolved_at"},
	{"snapshots", "remote, sha, subdir, digest, created_at"},
	{"marketplaces", "remote, sha, document, fetched_at"},
	{"plans", "plan_id, body, created_at"},
	{"plan_snapshots", "plan_id, digest"},
	{"plan_renewals", "plan_id, renewed_at"},
	{"snapshot_uses", "digest, last_used"},
	{"counters", "kind, hits, misses"},
	{"inventories", "key, body, created_at"},
	{"submodules", "remote, sha, path, url, commit_sha"},
	{"update_checks", "id, body, checked_at"},
	{"verdicts", "remote, sha, reachable, checked_at"},
	{"negatives", "kind, remote, sha, path, code, message, created_at, expires_at"},
}

func probeSchema(ctx context.Context, sqldb *sql.DB) error {
	var cols, tables []string
	for i, p := range schemaProbes {
		alias := fmt.Sprintf("t%d", i)
		for c := range strings.SplitSeq(p.columns, ", ") {
			cols = append(cols, alias+"."+c)
		}
		tables = append(tables, p.table+" AS "+alias)
	}
	rows, err := sqldb.QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+strings.Join(tables, ", ")+" LIMIT 0")
	if err != nil {
		return fmt.Errorf("schema check: %w", err)
	}
	return rows.Close()
}

// dropParserBuffers frees what goose's SQL parser keeps after a migration:
// it reads each file, up and down at once, through a 4 MiB scanner buffer
// taken from a sync.Pool, so a cold open leaves some 16 MiB of buffers in
// the pool. The pool holds them through one collection and frees them at
// the next; until then they count as live and set the collector's next
// goal at twice that, letting a cold plan's first second fill 30 MiB of
// heap with garbage (SPEC §14's 64 MiB includes it). Two collections of a
// heap this small take well under a millisecond, and only a migration pays.
func dropParserBuffers() {
	runtime.GC()
	runtime.GC()
}
