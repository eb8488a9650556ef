// Package meta is the team mirror's metadata in PostgreSQL (SPEC §15):
// the store of its host.Cached layer (resolved refs with their ETags,
// reachability verdicts, negative results; cached.go), (repository,
// commit, folders) → tree digest, marketplace documents, leases that make one replica do each upstream operation,
// hashed client tokens and the audit log. Every replica shares one
// database; nothing here is kept in a replica's memory, so any replica can
// answer any request and one can die at any time.
package meta

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"reasonix.io/plugind"
	"reasonix.io/plugind/mirror/meta/migrations"
	"reasonix.io/plugind/secrets"
)

// DB is the mirror's metadata database.
type DB struct {
	pool *pgxpool.Pool
}

// Open connects to the database dsn (a PostgreSQL URL or key=value string;
// a password is better given by PGPASSWORD or ~/.pgpass than in it) and
// brings its schema up to date. Replicas starting together migrate one at a
// time (a session advisory lock).
func Open(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the DSN, password included.
		return nil, fmt.Errorf("--postgres: not a PostgreSQL connection string: %s", secrets.Mask(err.Error()))
	}
	if cfg.MaxConns < 16 {
		// Waiting requests poll; a few dozen concurrent clients need more
		// than pgxpool's default of 4 per core on a small machine.
		cfg.MaxConns = 16
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, dbErr("connect to PostgreSQL: %s", secrets.Mask(err.Error()))
	}
	db := &DB{pool: pool}
	if err = db.Ping(ctx); err == nil {
		err = db.migrate(ctx)
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the connections.
func (d *DB) Close() { d.pool.Close() }

// Ping checks that the database answers.
func (d *DB) Ping(ctx context.Context) error {
	if err := d.pool.Ping(ctx); err != nil {
		return dbErr("PostgreSQL %s:%d: %s", d.pool.Config().ConnConfig.Host, d.pool.Config().ConnConfig.Port, secrets.Mask(err.Error()))
	}
	return nil
}

func (d *DB) migrate(ctx context.Context) error {
	sqlDB := stdlib.OpenDBFromPool(d.pool)
	defer sqlDB.Close()
	locker, err := lock.NewPostgresSessionLocker()
	var p *goose.Provider
	if err == nil {
		p, err = goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS, goose.WithSessionLocker(locker))
	}
	if err == nil {
		_, err = p.Up(ctx)
	}
	if err != nil {
		return dbErr("migrate the mirror's schema: %w", err)
	}
	return nil
}

// SQLDB returns a database/sql handle over the same pool, for tools.
func (d *DB) SQLDB() *sql.DB { return stdlib.OpenDBFromPool(d.pool) }

// row scans the one row query finds into dest: ok is false when there is
// none, and what names the read in an error.
func (d *DB) row(ctx context.Context, what, query string, args []any, dest ...any) (bool, error) {
	err := d.pool.QueryRow(ctx, query, args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, dbErr("%s: %w", what, err)
	}
	return true, nil
}

// exec runs one statement; what names it in an error.
func (d *DB) exec(ctx context.Context, what, stmt string, args ...any) error {
	if _, err := d.pool.Exec(ctx, stmt, args...); err != nil {
		return dbErr("%s: %w", what, err)
	}
	return nil
}

// collect scans every row query finds with scan; what names the read in an
// error.
func collect[T any](ctx context.Context, d *DB, what, query string, args []any, scan pgx.RowToFunc[T]) ([]T, error) {
	rows, _ := d.pool.Query(ctx, query, args...) // a failed query fails its rows too
	list, err := pgx.CollectRows(rows, scan)
	if err != nil {
		return nil, dbErr("%s: %w", what, err)
	}
	return list, nil
}

// inTx runs fn in one transaction; what names it in an error.
func (d *DB) inTx(ctx context.Context, what string, fn func(pgx.Tx) error) error {
	if err := pgx.BeginFunc(ctx, d.pool, fn); err != nil {
		return dbErr("%s: %w", what, err)
	}
	return nil
}

// Object is a snapshot archive in the object store.
type Object struct {
	Digest        string // tree digest (the object's name)
	Size          int64  // archive bytes
	ArchiveSHA256 string
	Files         int
	Bytes         int64 // file content bytes
}

// PathsKey is how the snapshots table names a set of folders: "" for the
// whole tree, else the sorted, de-duplicated paths, one per line.
func PathsKey(paths []string) string {
	if slices.ContainsFunc(paths, func(p string) bool { return p == "" || p == "." }) {
		return ""
	}
	sorted := slices.Sorted(slices.Values(paths))
	return strings.Join(slices.Compact(sorted), "\n")
}

// SplitPaths is the folders a PathsKey names (nil: the whole tree).
func SplitPaths(key string) []string {
	if key == "" {
		return nil
	}
	return strings.Split(key, "\n")
}

// Stored is a stored snapshot: its archive, and the submodules whose
// content the archive holds (paths from the tree's root), whose
// repositories a token's scopes must cover as well as the snapshot's own.
type Stored struct {
	Object
	Submodules []plugind.Submodule
}

// Snapshot returns the archive holding paths (a PathsKey) of repo at sha.
// A row stored before submodules were recorded (migration 00005) is not
// found: the caller stores it again, with them.
func (d *DB) Snapshot(ctx context.Context, repo, sha, paths string) (Stored, bool, error) {
	var st Stored
	var subs []byte
	what := "read the snapshot of " + repo + "@" + sha
	ok, err := d.row(ctx, what, `SELECT o.digest, o.size, o.archive_sha256, o.files, o.bytes, s.submodules
		FROM snapshots s JOIN objects o ON o.digest = s.digest
		WHERE s.repo = $1 AND s.sha = $2 AND s.paths_key = $3 AND s.paths = $4 AND s.submodules IS NOT NULL`,
		[]any{repo, sha, hashKey(paths), paths},
		&st.Digest, &st.Size, &st.ArchiveSHA256, &st.Files, &st.Bytes, &subs)
	if ok && err == nil {
		if jerr := json.Unmarshal(subs, &st.Submodules); jerr != nil {
			return Stored{}, false, dbErr("%s: its submodules: %w", what, jerr)
		}
	}
	return st, ok, err
}

// GetObject returns the archive of digest.
func (d *DB) GetObject(ctx context.Context, digest string) (Object, bool, error) {
	o := Object{Digest: digest}
	ok, err := d.row(ctx, "read object "+digest, `SELECT size, archive_sha256, files, bytes FROM objects WHERE digest = $1`,
		[]any{digest}, &o.Size, &o.ArchiveSHA256, &o.Files, &o.Bytes)
	return o, ok, err
}

// hashKey is the hex SHA-256 of s, a key column's stand-in for a value too
// long for an index entry: the snapshots table's key for a folder list is
// its hashKey, so a list of any length fits the primary key's index
// (migration 00002).
func hashKey(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// PutSnapshot records that o (already in the object store) holds paths of
// repo at sha, with the submodules subs. The first record of an object
// wins (objects are immutable), but for a row stored before submodules
// were recorded, which this one replaces.
func (d *DB) PutSnapshot(ctx context.Context, repo, sha, paths string, o Object, subs []plugind.Submodule) error {
	if subs == nil {
		subs = []plugind.Submodule{} // recorded: none
	}
	doc, err := json.Marshal(subs)
	if err != nil {
		return fmt.Errorf("record the snapshot of %s@%s: %w", repo, sha, err)
	}
	return d.inTx(ctx, "record the snapshot of "+repo+"@"+sha, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO objects (digest, size, archive_sha256, files, bytes) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (digest) DO NOTHING`, o.Digest, o.Size, o.ArchiveSHA256, o.Files, o.Bytes); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO snapshots (repo, sha, paths_key, paths, digest, submodules) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (repo, sha, paths_key) DO UPDATE SET digest = EXCLUDED.digest, submodules = EXCLUDED.submodules
			WHERE snapshots.submodules IS NULL`, repo, sha, hashKey(paths), paths, o.Digest, doc)
		return err
	})
}

// PutMarketplace stores the marketplace document at path of repo at sha.
func (d *DB) PutMarketplace(ctx context.Context, repo, sha, path string, doc []byte) error {
	return d.exec(ctx, "record the marketplace of "+repo+"@"+sha, `INSERT INTO marketplaces (repo, sha, path, document)
		VALUES ($1, $2, $3, $4) ON CONFLICT (repo, sha, path) DO NOTHING`, repo, sha, path, doc)
}

// Marketplace returns a stored marketplace document of repo at sha: the
// one at path, or, with path "", the first one stored.
func (d *DB) Marketplace(ctx context.Context, repo, sha, path string) (string, []byte, bool, error) {
	var p string
	var doc []byte
	ok, err := d.row(ctx, "read the marketplace of "+repo+"@"+sha, `SELECT path, document FROM marketplaces
		WHERE repo = $1 AND sha = $2 AND ($3 = '' OR path = $3) ORDER BY path LIMIT 1`, []any{repo, sha, path}, &p, &doc)
	return p, doc, ok, err
}

// Sweep deletes expired negative results and leases that expired long ago
// (a dead replica's), so the tables stay small.
func (d *DB) Sweep(ctx context.Context) error {
	if err := d.exec(ctx, "sweep negative results", `DELETE FROM negatives WHERE expires_at < now()`); err != nil {
		return err
	}
	return d.exec(ctx, "sweep leases", `DELETE FROM leases WHERE expires_at < now() - interval '1 hour'`)
}

// ForgetObject drops the records of an archive that is no longer in the
// object store (an operator deleted it), so the next request stores it
// again.
func (d *DB) ForgetObject(ctx context.Context, digest string) error {
	return d.inTx(ctx, "forget object "+digest, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM snapshots WHERE digest = $1`, digest); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM objects WHERE digest = $1`, digest)
		return err
	})
}
