// Package cache is the SQLite metadata cache of SPEC §8: resolved refs,
// source snapshots, marketplace documents, plans, snapshot use times and
// hit/miss counters, in $REASONIX_HOME/cache/cache.db.
//
// Concurrency: the database runs in WAL mode, so readers never block. Every
// write runs in a BEGIN IMMEDIATE transaction (the write lock is taken up
// front, so a transaction never has to upgrade a stale read snapshot, the one
// case busy_timeout cannot retry), writes from one *DB are serialized in
// process, and writers in other processes or other *DB handles wait on the
// 10 s busy timeout instead of failing with SQLITE_BUSY.
package cache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver

	"reasonix.io/plugind/migrations"
)

// busyTimeout bounds how long a writer waits for another one (another
// process, usually) before SQLITE_BUSY surfaces.
const busyTimeout = 10 * time.Second

// DB is an open cache. It is safe for concurrent use.
type DB struct {
	sql *sql.DB
	// wsem serializes this handle's writers so they queue here, cancellably,
	// rather than spinning in SQLite's busy handler against each other.
	wsem chan struct{}
}

// Open opens (creating it and its parent directory if needed) the cache at
// path and brings its schema up to date.
func Open(ctx context.Context, path string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open cache %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("open cache %s: %w", abs, err)
	}
	sqldb, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("open cache %s: %w", abs, err)
	}
	db := &DB{sql: sqldb, wsem: make(chan struct{}, 1)}
	if err := migrate(ctx, sqldb, abs); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("open cache %s: %w", abs, err)
	}
	return db, nil
}

// dsn builds a file: URI so any character in the path (even '?' or '#')
// survives, with the connection settings every pooled connection needs.
func dsn(abs string) string {
	q := url.Values{}
	// busy_timeout is applied first by the driver, before journal_mode, so
	// even the WAL switch on a fresh file waits instead of failing.
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	if u.Path != "" && u.Path[0] != '/' { // a Windows drive path
		u.Path = "/" + u.Path
	}
	return u.String()
}

// migrate applies pending migrations. goose has no SQLite locker, so two
// processes opening a fresh cache at once are serialized with a lock file
// beside it (never the database file itself: closing any descriptor of that
// file would drop SQLite's own POSIX locks held by this process).
func migrate(ctx context.Context, sqldb *sql.DB, abs string) error {
	lock := flock.New(abs + ".migrate.lock")
	ok, err := lock.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil {
		return fmt.Errorf("lock for migration: %w", err)
	}
	if !ok {
		return errors.New("lock for migration: not acquired")
	}
	defer lock.Unlock()
	p, err := goose.NewProvider(goose.DialectSQLite3, sqldb, migrations.FS,
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// Close closes the database.
func (db *DB) Close() error {
	return db.sql.Close()
}

// write runs fn in one BEGIN IMMEDIATE transaction.
func (db *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	select {
	case db.wsem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-db.wsem }()
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Times are stored as Unix nanoseconds; the zero time is stored as 0 so it
// round-trips as the zero time.
func toNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
