// Package meta is the team mirror's metadata in PostgreSQL (SPEC §15):
// resolved refs with their ETags, reachability verdicts, (repository,
// commit, folders) → tree digest, marketplace documents, negative results
// with an expiry, leases that make one replica do each upstream operation,
// hashed client tokens and the audit log. Every replica shares one
// database; nothing here is kept in a replica's memory, so any replica can
// answer any request and one can die at any time.
package meta

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

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
	if err := db.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if err := db.migrate(ctx); err != nil {
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
	if err != nil {
		return dbErr("migrate the mirror's schema: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS, goose.WithSessionLocker(locker))
	if err != nil {
		return dbErr("migrate the mirror's schema: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return dbErr("migrate the mirror's schema: %w", err)
	}
	return nil
}

// SQLDB returns a database/sql handle over the same pool, for tools.
func (d *DB) SQLDB() *sql.DB { return stdlib.OpenDBFromPool(d.pool) }

// seconds turns a duration into the double precision make_interval takes.
func seconds(d time.Duration) float64 { return d.Seconds() }

// Ref is a resolved ref.
type Ref struct {
	Repo, Ref, SHA, ETag string
	ResolvedAt           time.Time
	// Age is how long ago upstream last confirmed the answer, by the
	// database's clock.
	Age time.Duration
}

// GetRef returns the stored answer for ref of repo.
func (d *DB) GetRef(ctx context.Context, repo, ref string) (Ref, bool, error) {
	r := Ref{Repo: repo, Ref: ref}
	var age float64
	err := d.pool.QueryRow(ctx, `SELECT sha, etag, resolved_at, extract(epoch FROM now() - checked_at)
		FROM refs WHERE repo = $1 AND ref = $2`, repo, ref).Scan(&r.SHA, &r.ETag, &r.ResolvedAt, &age)
	if errors.Is(err, pgx.ErrNoRows) {
		return Ref{}, false, nil
	}
	if err != nil {
		return Ref{}, false, dbErr("read ref %s of %s: %w", ref, repo, err)
	}
	r.Age = time.Duration(age * float64(time.Second))
	return r, true, nil
}

// PutRef records upstream's answer: a new SHA moves resolved_at, a
// confirmed one only checked_at. The ETag is upstream's bytes, made
// storable.
func (d *DB) PutRef(ctx context.Context, r Ref) error {
	_, err := d.pool.Exec(ctx, `INSERT INTO refs (repo, ref, sha, etag, resolved_at, checked_at)
		VALUES ($1, $2, $3, $4, now(), now())
		ON CONFLICT (repo, ref) DO UPDATE SET
			resolved_at = CASE WHEN refs.sha = EXCLUDED.sha THEN refs.resolved_at ELSE now() END,
			sha = EXCLUDED.sha,
			etag = CASE WHEN EXCLUDED.etag = '' AND refs.sha = EXCLUDED.sha THEN refs.etag ELSE EXCLUDED.etag END,
			checked_at = now()`, r.Repo, r.Ref, r.SHA, Text(r.ETag))
	if err != nil {
		return dbErr("record ref %s of %s: %w", r.Ref, r.Repo, err)
	}
	return nil
}

// RefList is a repository's advertised branches and tags.
type RefList struct {
	Head    string
	Commits map[string]string
	Age     time.Duration
}

// GetRefList returns the stored listing of repo.
func (d *DB) GetRefList(ctx context.Context, repo string) (RefList, bool, error) {
	var l RefList
	var age float64
	err := d.pool.QueryRow(ctx, `SELECT head, commits, extract(epoch FROM now() - checked_at)
		FROM ref_lists WHERE repo = $1`, repo).Scan(&l.Head, &l.Commits, &age)
	if errors.Is(err, pgx.ErrNoRows) {
		return RefList{}, false, nil
	}
	if err != nil {
		return RefList{}, false, dbErr("read the refs of %s: %w", repo, err)
	}
	l.Age = time.Duration(age * float64(time.Second))
	return l, true, nil
}

// PutRefList records a listing. Names are upstream's bytes, made storable
// (jsonb refuses NUL as json.Marshal spells it).
func (d *DB) PutRefList(ctx context.Context, repo string, l RefList) error {
	commits := make(map[string]string, len(l.Commits))
	for name, sha := range l.Commits {
		commits[Text(name)] = Text(sha)
	}
	l.Commits, l.Head = commits, Text(l.Head)
	_, err := d.pool.Exec(ctx, `INSERT INTO ref_lists (repo, head, commits, checked_at) VALUES ($1, $2, $3, now())
		ON CONFLICT (repo) DO UPDATE SET head = EXCLUDED.head, commits = EXCLUDED.commits, checked_at = now()`,
		repo, l.Head, l.Commits)
	if err != nil {
		return dbErr("record the refs of %s: %w", repo, err)
	}
	return nil
}

// Reachable reports whether commit sha of repo is known to be on a branch
// or tag.
func (d *DB) Reachable(ctx context.Context, repo, sha string) (bool, error) {
	var one int
	err := d.pool.QueryRow(ctx, `SELECT 1 FROM verdicts WHERE repo = $1 AND sha = $2`, repo, sha).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, dbErr("read the verdict on %s@%s: %w", repo, sha, err)
	}
	return true, nil
}

// PutReachable records that commit sha of repo is on a branch or tag.
func (d *DB) PutReachable(ctx context.Context, repo, sha string) error {
	_, err := d.pool.Exec(ctx, `INSERT INTO verdicts (repo, sha, checked_at) VALUES ($1, $2, now())
		ON CONFLICT (repo, sha) DO NOTHING`, repo, sha)
	if err != nil {
		return dbErr("record the verdict on %s@%s: %w", repo, sha, err)
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

// Snapshot returns the archive holding paths of repo at sha.
func (d *DB) Snapshot(ctx context.Context, repo, sha, paths string) (Object, bool, error) {
	var o Object
	err := d.pool.QueryRow(ctx, `SELECT o.digest, o.size, o.archive_sha256, o.files, o.bytes
		FROM snapshots s JOIN objects o ON o.digest = s.digest
		WHERE s.repo = $1 AND s.sha = $2 AND s.paths_key = $3 AND s.paths = $4`, repo, sha, pathsKey(paths), paths).
		Scan(&o.Digest, &o.Size, &o.ArchiveSHA256, &o.Files, &o.Bytes)
	if errors.Is(err, pgx.ErrNoRows) {
		return Object{}, false, nil
	}
	if err != nil {
		return Object{}, false, dbErr("read the snapshot of %s@%s: %w", repo, sha, err)
	}
	return o, true, nil
}

// GetObject returns the archive of digest.
func (d *DB) GetObject(ctx context.Context, digest string) (Object, bool, error) {
	o := Object{Digest: digest}
	err := d.pool.QueryRow(ctx, `SELECT size, archive_sha256, files, bytes FROM objects WHERE digest = $1`, digest).
		Scan(&o.Size, &o.ArchiveSHA256, &o.Files, &o.Bytes)
	if errors.Is(err, pgx.ErrNoRows) {
		return Object{}, false, nil
	}
	if err != nil {
		return Object{}, false, dbErr("read object %s: %w", digest, err)
	}
	return o, true, nil
}

// pathsKey is the snapshots table's key for a folder list: its SHA-256, so
// a list of any length fits the primary key's index (migration 00002).
func pathsKey(paths string) string {
	sum := sha256.Sum256([]byte(paths))
	return hex.EncodeToString(sum[:])
}

// PutSnapshot records that o (already in the object store) holds paths of
// repo at sha. The first record of an object wins: objects are immutable.
func (d *DB) PutSnapshot(ctx context.Context, repo, sha, paths string, o Object) error {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return dbErr("record the snapshot of %s@%s: %w", repo, sha, err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `INSERT INTO objects (digest, size, archive_sha256, files, bytes) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (digest) DO NOTHING`, o.Digest, o.Size, o.ArchiveSHA256, o.Files, o.Bytes); err != nil {
		return dbErr("record object %s: %w", o.Digest, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO snapshots (repo, sha, paths_key, paths, digest) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (repo, sha, paths_key) DO NOTHING`, repo, sha, pathsKey(paths), paths, o.Digest); err != nil {
		return dbErr("record the snapshot of %s@%s: %w", repo, sha, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return dbErr("record the snapshot of %s@%s: %w", repo, sha, err)
	}
	return nil
}

// PutMarketplace stores the marketplace document at path of repo at sha.
func (d *DB) PutMarketplace(ctx context.Context, repo, sha, path string, doc []byte) error {
	_, err := d.pool.Exec(ctx, `INSERT INTO marketplaces (repo, sha, path, document) VALUES ($1, $2, $3, $4)
		ON CONFLICT (repo, sha, path) DO NOTHING`, repo, sha, path, doc)
	if err != nil {
		return dbErr("record the marketplace of %s@%s: %w", repo, sha, err)
	}
	return nil
}

// Marketplace returns a stored marketplace document of repo at sha: the
// one at path, or, with path "", the first one stored.
func (d *DB) Marketplace(ctx context.Context, repo, sha, path string) (string, []byte, bool, error) {
	var p string
	var doc []byte
	err := d.pool.QueryRow(ctx, `SELECT path, document FROM marketplaces
		WHERE repo = $1 AND sha = $2 AND ($3 = '' OR path = $3) ORDER BY path LIMIT 1`, repo, sha, path).Scan(&p, &doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, dbErr("read the marketplace of %s@%s: %w", repo, sha, err)
	}
	return p, doc, true, nil
}

// Negative is a remembered "does not exist" (or a recent failure).
type Negative struct {
	Kind, Repo, Key string
	Code            string
	Message         string
	Age             time.Duration
}

// GetNegative returns the unexpired negative result for (kind, repo, key).
func (d *DB) GetNegative(ctx context.Context, kind, repo, key string) (Negative, bool, error) {
	n := Negative{Kind: kind, Repo: repo, Key: key}
	var age float64
	err := d.pool.QueryRow(ctx, `SELECT code, message, extract(epoch FROM now() - created_at) FROM negatives
		WHERE kind = $1 AND repo = $2 AND key = $3 AND expires_at > now()`, kind, repo, key).Scan(&n.Code, &n.Message, &age)
	if errors.Is(err, pgx.ErrNoRows) {
		return Negative{}, false, nil
	}
	if err != nil {
		return Negative{}, false, dbErr("read negative results of %s: %w", repo, err)
	}
	n.Age = time.Duration(age * float64(time.Second))
	return n, true, nil
}

// PutNegative remembers n for ttl. Its message may quote upstream's bytes:
// it is made storable.
func (d *DB) PutNegative(ctx context.Context, n Negative, ttl time.Duration) error {
	_, err := d.pool.Exec(ctx, `INSERT INTO negatives (kind, repo, key, code, message, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, now(), now() + make_interval(secs => $6))
		ON CONFLICT (kind, repo, key) DO UPDATE SET code = EXCLUDED.code, message = EXCLUDED.message,
			created_at = now(), expires_at = EXCLUDED.expires_at`,
		n.Kind, n.Repo, n.Key, n.Code, clip(Text(n.Message), maxDetail), seconds(ttl))
	if err != nil {
		return dbErr("record a negative result for %s: %w", n.Repo, err)
	}
	return nil
}

// Sweep deletes expired negative results and leases that expired long ago
// (a dead replica's), so the tables stay small.
func (d *DB) Sweep(ctx context.Context) error {
	if _, err := d.pool.Exec(ctx, `DELETE FROM negatives WHERE expires_at < now()`); err != nil {
		return dbErr("sweep negative results: %w", err)
	}
	if _, err := d.pool.Exec(ctx, `DELETE FROM leases WHERE expires_at < now() - interval '1 hour'`); err != nil {
		return dbErr("sweep leases: %w", err)
	}
	return nil
}

// ForgetObject drops the records of an archive that is no longer in the
// object store (an operator deleted it), so the next request stores it
// again.
func (d *DB) ForgetObject(ctx context.Context, digest string) error {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return dbErr("forget object %s: %w", digest, err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `DELETE FROM snapshots WHERE digest = $1`, digest); err != nil {
		return dbErr("forget object %s: %w", digest, err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM objects WHERE digest = $1`, digest); err != nil {
		return dbErr("forget object %s: %w", digest, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return dbErr("forget object %s: %w", digest, err)
	}
	return nil
}

// SnapshotRow is one (repository, commit, folders) → archive record.
type SnapshotRow struct {
	Repo, SHA string
	Paths     []string // nil: the whole tree
	Object
}

// Snapshots lists up to limit snapshot records, newest first.
func (d *DB) Snapshots(ctx context.Context, limit int) ([]SnapshotRow, error) {
	rows, err := d.pool.Query(ctx, `SELECT s.repo, s.sha, s.paths, o.digest, o.size, o.archive_sha256, o.files, o.bytes
		FROM snapshots s JOIN objects o ON o.digest = s.digest ORDER BY s.created_at DESC LIMIT $1`, limit)
	if err != nil {
		return nil, dbErr("list snapshots: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SnapshotRow, error) {
		var s SnapshotRow
		var paths string
		err := r.Scan(&s.Repo, &s.SHA, &paths, &s.Digest, &s.Size, &s.ArchiveSHA256, &s.Files, &s.Bytes)
		if paths != "" {
			s.Paths = strings.Split(paths, "\n")
		}
		return s, err
	})
	if err != nil {
		return nil, dbErr("list snapshots: %w", err)
	}
	return list, nil
}

// Want names one negative result to look for.
type Want struct{ Kind, Key string }

// FirstNegative returns the first unexpired negative result of repo among
// want, in want's order, in one query.
func (d *DB) FirstNegative(ctx context.Context, repo string, want ...Want) (Negative, bool, error) {
	kinds := make([]string, len(want))
	keys := make([]string, len(want))
	for i, w := range want {
		kinds[i], keys[i] = w.Kind, w.Key
	}
	n := Negative{Repo: repo}
	var age float64
	err := d.pool.QueryRow(ctx, `SELECT n.kind, n.key, n.code, n.message, extract(epoch FROM now() - n.created_at)
		FROM negatives n JOIN unnest($2::text[], $3::text[]) WITH ORDINALITY AS w(kind, key, ord)
			ON n.kind = w.kind AND n.key = w.key
		WHERE n.repo = $1 AND n.expires_at > now()
		ORDER BY w.ord LIMIT 1`, repo, kinds, keys).Scan(&n.Kind, &n.Key, &n.Code, &n.Message, &age)
	if errors.Is(err, pgx.ErrNoRows) {
		return Negative{}, false, nil
	}
	if err != nil {
		return Negative{}, false, dbErr("read negative results of %s: %w", repo, err)
	}
	n.Age = time.Duration(age * float64(time.Second))
	return n, true, nil
}
