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
//
// Degraded disks: the Get* lookups answer a miss, not an error, when the
// storage fails (only a cancelled context is an error), and failed writes
// are counted; Failures reports both. OpenWith moves a corrupt database
// aside and starts empty; Warnings says so.
package cache

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver

	"reasonix.io/plugind"
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
	// warnings say what Open had to do to get a usable cache (see Warnings).
	warnings []string
	// failures counts storage errors absorbed since Open (see Failures).
	failures failureLog
	stmts    stmts
	// committing is read-locked by each commit in flight (see CommitLater);
	// settle takes it to wait for them.
	committing sync.RWMutex
}

// Options configure OpenWith. Zero values take the defaults.
type Options struct {
	// Log receives one warning the first time a cache operation fails and
	// is absorbed (see Failures); nil logs nothing.
	Log *slog.Logger
	// Now stamps the name a corrupt database is moved aside to; default
	// time.Now.
	Now func() time.Time
}

// OpenWith opens (creating it and its parent directory if needed) the cache
// at path and brings its schema up to date. A database that SQLite reports corrupt,
// that is not a database at all, or whose schema the migrations cannot bring
// to the one this code reads (a foreign or damaged schema) is moved aside to
// path.corrupt-<UTC time> (with its -wal and -shm) and replaced by an empty
// cache; Warnings says so. Anything else that stops the cache from opening
// (the folder cannot be created, permissions, a full disk, a directory
// where the file should be, a schema written by a newer reasonix) is
// returned as an error and nothing is moved: the cache is an optimization,
// and callers go on without one.
func OpenWith(ctx context.Context, path string, opts Options) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open cache %s: %w", path, err)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := plugind.MkdirPrivate(filepath.Dir(abs)); err != nil {
		return nil, fmt.Errorf("open cache %s: %w", abs, err)
	}
	unlock, err := lockSchema(ctx, abs)
	if err != nil {
		return nil, fmt.Errorf("open cache %s: %w", abs, err)
	}
	defer unlock()
	sqldb, err := openReady(ctx, abs)
	var warnings []string
	if err != nil {
		if !isCorrupt(ctx, err) {
			return nil, fmt.Errorf("open cache %s: %w", abs, err)
		}
		aside, merr := moveAside(abs, opts.Now())
		if merr != nil {
			return nil, fmt.Errorf("open cache %s: it is unusable (%v) and could not be moved aside: %w", abs, err, merr)
		}
		warnings = append(warnings, fmt.Sprintf("the cache %s was damaged or not a reasonix cache (%v); moved it aside to %s and started an empty cache", abs, err, filepath.Base(aside)))
		if sqldb, err = openReady(ctx, abs); err != nil {
			return nil, fmt.Errorf("open cache %s after moving the corrupt one aside: %w", abs, err)
		}
	}
	db := &DB{sql: sqldb, wsem: make(chan struct{}, 1), warnings: warnings}
	db.failures.log = opts.Log
	return db, nil
}

// Warnings says what Open had to do to get a usable cache, such as moving a
// corrupt database aside. Callers show them to the user once.
func (db *DB) Warnings() []string {
	return append([]string(nil), db.warnings...)
}

// pageCacheKiB bounds each connection's page cache.
const pageCacheKiB = 512

// dsn builds a file: URI so any character in the path (even '?' or '#')
// survives, with the connection settings every pooled connection needs.
func dsn(abs string) string {
	q := url.Values{}
	// busy_timeout is applied first, so even the WAL switch on a fresh file
	// waits instead of failing. journal_mode is not set here: it rewrites
	// the file's header, and Open switches it only once the file is known
	// to be a cache (see openReady); the setting then persists in the file.
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// SQLite's page cache is per connection, 2 MiB by default: with
	// maxConns connections, most of what SQLite held at a bulk plan's peak
	// (SPEC §14's 64 MiB). The file is small and in the system's page
	// cache anyway; a few hundred KiB each lose nothing measurable.
	q.Add("_pragma", fmt.Sprintf("cache_size(%d)", -pageCacheKiB))
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	if u.Path != "" && u.Path[0] != '/' { // a Windows drive path
		u.Path = "/" + u.Path
	}
	return u.String()
}

// Close closes the database.
func (db *DB) Close() error {
	db.settle()
	db.closeStmts()
	return db.sql.Close()
}

// write runs fn in one BEGIN IMMEDIATE transaction. A failure is counted
// (see Failures) under what, which names the write for the user.
func (db *DB) write(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	select {
	case db.wsem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-db.wsem }()
	tx, err := db.sql.BeginTx(ctx, nil)
	if err == nil {
		if err = fn(tx); err == nil {
			err = tx.Commit()
		} else {
			_ = tx.Rollback()
		}
	}
	if err != nil {
		db.failed(ctx, "write", fmt.Errorf("%s: %w", what, err))
	}
	return err
}

// execs runs statements in tx until one fails: exec after a failure does
// nothing, and err is the first failure (the transaction is then rolled
// back). Each query is prepared once in tx: SQLite parses and plans an
// unprepared one every time, and a warm re-plan's commit runs the same
// upsert for each of two hundred snapshots (3 ms of its critical path).
type execs struct {
	ctx   context.Context
	tx    *sql.Tx
	err   error
	stmts map[string]*sql.Stmt // closed with tx
}

func (e *execs) exec(q string, args ...any) {
	if e.err != nil {
		return
	}
	st, ok := e.stmts[q]
	if !ok {
		if st, e.err = e.tx.PrepareContext(e.ctx, q); e.err != nil {
			return
		}
		if e.stmts == nil {
			e.stmts = map[string]*sql.Stmt{}
		}
		e.stmts[q] = st
	}
	_, e.err = st.ExecContext(e.ctx, args...)
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
