package meta

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/tlog"
)

// The checksum log's storage (SPEC §17, migration 00006): its records,
// tlog's stored hashes, and the tree they make. The log's rules — what a
// record says, how its head is signed — are the mirror's; here is only
// how the log is kept so that every replica appends to one log.

// ErrNotInLog: a record, hash or tile the log does not have (yet).
var ErrNotInLog = errors.New("not in the checksum log")

// logLock is the advisory lock that serializes appends across replicas:
// one per database, distinct from goose's migration lock.
const logLock int64 = 0x7265617369786c67 // "reasixlg"

// LogTree is the log's current tree: its size and root hash.
func (d *DB) LogTree(ctx context.Context) (tlog.Tree, error) {
	var t tlog.Tree
	var h []byte
	ok, err := d.row(ctx, "read the checksum log's tree", `SELECT size, hash FROM log_tree`, nil, &t.N, &h)
	switch {
	case err != nil:
		return t, err
	case !ok || len(h) != tlog.HashSize:
		return t, dbErr("read the checksum log's tree: its row is missing or malformed")
	}
	copy(t.Hash[:], h)
	return t, nil
}

// LogRecordID returns the id of the record of logPath at commit.
func (d *DB) LogRecordID(ctx context.Context, logPath, commit string) (int64, bool, error) {
	var id int64
	ok, err := d.row(ctx, "look up a checksum log record", `SELECT id FROM log_records WHERE key_sha256 = $1`,
		[]any{logKey(logPath, commit)}, &id)
	return id, ok, err
}

// LogHit is a record the log has, with the tree it was read beside.
type LogHit struct {
	ID   int64
	Text []byte
	Tree tlog.Tree
}

// LogRecord returns the record of logPath at commit and the log's current
// tree, in one query: a bulk install looks up hundreds of records the log
// already has, each answered with a head of a tree that holds it.
func (d *DB) LogRecord(ctx context.Context, logPath, commit string) (LogHit, bool, error) {
	var h LogHit
	var text string
	var hash []byte
	ok, err := d.row(ctx, "look up a checksum log record", `SELECT r.id, r.text, t.size, t.hash FROM log_records r CROSS JOIN log_tree t WHERE r.key_sha256 = $1`,
		[]any{logKey(logPath, commit)}, &h.ID, &text, &h.Tree.N, &hash)
	if !ok || err != nil {
		return LogHit{}, ok, err
	}
	if len(hash) != tlog.HashSize || h.ID >= h.Tree.N {
		return LogHit{}, false, dbErr("look up a checksum log record: the log's tree row is malformed or behind record %d", h.ID)
	}
	copy(h.Tree.Hash[:], hash)
	h.Text = []byte(text)
	return h, true, nil
}

func logKey(logPath, commit string) string { return hashKey(logPath + "@" + commit) }

// AppendLogRecord appends text as the record of logPath at commit, unless
// the log has one already: it returns the record's id, and whether this
// call appended it. Appends are serialized across replicas by an advisory
// transaction lock, under which the record, its stored hashes and the new
// tree are written together: a failure leaves the log as it was.
func (d *DB) AppendLogRecord(ctx context.Context, logPath, commit string, text []byte) (id int64, appended bool, err error) {
	// Most calls find the record there (another replica appended it while
	// this one fetched): they need not queue for the lock to see it.
	if id, ok, err := d.LogRecordID(ctx, logPath, commit); err != nil || ok {
		return id, false, err
	}
	what := "append " + logPath + "@" + commit + " to the checksum log"
	err = d.inTx(ctx, what, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, logLock); err != nil {
			return err
		}
		key := logKey(logPath, commit)
		err := tx.QueryRow(ctx, `SELECT id FROM log_records WHERE key_sha256 = $1`, key).Scan(&id)
		if err == nil || !errors.Is(err, pgx.ErrNoRows) {
			return err // appended meanwhile, or failed
		}
		var n int64
		if err := tx.QueryRow(ctx, `SELECT size FROM log_tree`).Scan(&n); err != nil {
			return err
		}
		r := hashReader(ctx, tx)
		hashes, err := tlog.StoredHashes(n, text, r)
		if err != nil {
			return err
		}
		idx := make([]int64, len(hashes))
		raw := make([][]byte, len(hashes))
		for i, h := range hashes {
			idx[i], raw[i] = tlog.StoredHashCount(n)+int64(i), h[:]
		}
		if _, err := tx.Exec(ctx, `INSERT INTO log_hashes (idx, hash) SELECT * FROM unnest($1::bigint[], $2::bytea[])`, idx, raw); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO log_records (id, key_sha256, log_path, commit, text) VALUES ($1, $2, $3, $4, $5)`,
			n, key, logPath, commit, string(text)); err != nil {
			return err
		}
		th, err := tlog.TreeHash(n+1, r) // reads the hashes just written
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE log_tree SET size = $1, hash = $2`, n+1, th[:]); err != nil {
			return err
		}
		id, appended = n, true
		return nil
	})
	return id, appended, err
}

// LogRecords returns the texts of records id to id+n-1; ErrNotInLog when
// the log does not have them all.
func (d *DB) LogRecords(ctx context.Context, id, n int64) ([][]byte, error) {
	texts, err := collect(ctx, d, "read checksum log records", `SELECT text FROM log_records WHERE id >= $1 AND id < $1 + $2 ORDER BY id`,
		[]any{id, n}, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	if int64(len(texts)) != n {
		return nil, fmt.Errorf("records %d to %d: %w", id, id+n-1, ErrNotInLog)
	}
	out := make([][]byte, len(texts))
	for i, t := range texts {
		out[i] = []byte(t)
	}
	return out, nil
}

// LogTile returns the data of hash tile t (t.L ≥ 0), read from the stored
// hashes; ErrNotInLog when the log is not that large yet.
func (d *DB) LogTile(ctx context.Context, t tlog.Tile) ([]byte, error) {
	data, err := tlog.ReadTileData(t, hashReader(ctx, d.pool))
	if err != nil && !errors.Is(err, ErrNotInLog) {
		return nil, dbErr("read checksum log tile %s: %w", t.Path(), err)
	}
	return data, err
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// hashReader reads stored hashes through q (within an append's
// transaction, it sees the hashes that transaction wrote).
func hashReader(ctx context.Context, q querier) tlog.HashReader {
	return tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		rows, _ := q.Query(ctx, `SELECT idx, hash FROM log_hashes WHERE idx = ANY($1)`, indexes)
		found := map[int64]tlog.Hash{}
		var idx int64
		var h []byte
		_, err := pgx.ForEachRow(rows, []any{&idx, &h}, func() error {
			if len(h) != tlog.HashSize {
				return fmt.Errorf("stored hash %d is %d bytes", idx, len(h))
			}
			found[idx] = tlog.Hash(h)
			return nil
		})
		if err != nil {
			return nil, err
		}
		out := make([]tlog.Hash, len(indexes))
		for i, x := range indexes {
			h, ok := found[x]
			if !ok {
				return nil, fmt.Errorf("stored hash %d: %w", x, ErrNotInLog)
			}
			out[i] = h
		}
		return out, nil
	})
}
