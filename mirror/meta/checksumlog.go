package meta

import (
	"context"
	"errors"
	"fmt"
	"slices"

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
// call appended it (AppendLogRecords of one).
func (d *DB) AppendLogRecord(ctx context.Context, logPath, commit string, text []byte) (id int64, appended bool, err error) {
	got, err := d.AppendLogRecords(ctx, []LogAppend{{LogPath: logPath, Commit: commit, Text: text}})
	if err != nil {
		return 0, false, err
	}
	return got[0].ID, got[0].New, nil
}

// LogAppend is a record to append: its key (a log path and a commit) and
// its text.
type LogAppend struct {
	LogPath, Commit string
	Text            []byte
}

// Appended is what became of a LogAppend: its record's id, and whether
// this call appended it (false: the log had it), then with the tree the
// append made, which holds it.
type Appended struct {
	ID   int64
	New  bool
	Tree tlog.Tree
}

// AppendLogRecords appends each of recs the log does not have yet, in
// order, in one transaction: a record's id is where it landed, or where
// the log had it (a key twice in recs lands once). Appends are serialized
// across replicas by an advisory transaction lock, under which the
// records, their stored hashes and the new tree are written together: a
// failure leaves the log as it was. One transaction for many records is
// what makes a bulk install's hundreds of new records cheap: the lock,
// the tree's row and the commit are paid once (the mirror gathers the
// appends of concurrent lookups, logAppender).
func (d *DB) AppendLogRecords(ctx context.Context, recs []LogAppend) ([]Appended, error) {
	out := make([]Appended, len(recs))
	keys := make([]string, len(recs))
	for i, r := range recs {
		keys[i] = logKey(r.LogPath, r.Commit)
	}
	// Most calls find their records there (another replica appended them
	// while this one fetched): they need not queue for the lock to see it.
	have, err := logRecordIDs(ctx, d.pool, keys)
	if err != nil {
		return nil, dbErr("look up checksum log records: %w", err)
	}
	if len(have) == len(slices.Compact(slices.Sorted(slices.Values(keys)))) {
		for i, k := range keys {
			out[i] = Appended{ID: have[k]}
		}
		return out, nil
	}
	what := fmt.Sprintf("append %d records to the checksum log", len(recs))
	if len(recs) == 1 {
		what = "append " + recs[0].LogPath + "@" + recs[0].Commit + " to the checksum log"
	}
	err = d.inTx(ctx, what, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, logLock); err != nil {
			return err
		}
		have, err := logRecordIDs(ctx, tx, keys) // appended meanwhile?
		if err != nil {
			return err
		}
		var n int64
		if err := tx.QueryRow(ctx, `SELECT size FROM log_tree`).Scan(&n); err != nil {
			return err
		}
		r := &batchHashes{db: hashReader(ctx, tx), known: map[int64]tlog.Hash{}}
		var idx []int64
		var raw [][]byte
		var ids []int64
		var rkeys, paths, commits, texts []string
		for i, rec := range recs {
			if id, ok := have[keys[i]]; ok {
				out[i] = Appended{ID: id}
				continue
			}
			hashes, err := tlog.StoredHashes(n, rec.Text, r)
			if err != nil {
				return err
			}
			for j, h := range hashes {
				x := tlog.StoredHashCount(n) + int64(j)
				r.known[x] = h
				idx, raw = append(idx, x), append(raw, h[:])
			}
			ids, rkeys = append(ids, n), append(rkeys, keys[i])
			paths, commits, texts = append(paths, rec.LogPath), append(commits, rec.Commit), append(texts, string(rec.Text))
			have[keys[i]] = n
			out[i] = Appended{ID: n, New: true}
			n++
		}
		if _, err := tx.Exec(ctx, `INSERT INTO log_hashes (idx, hash) SELECT * FROM unnest($1::bigint[], $2::bytea[])`, idx, raw); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO log_records (id, key_sha256, log_path, commit, text)
			SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[])`, ids, rkeys, paths, commits, texts); err != nil {
			return err
		}
		th, err := tlog.TreeHash(n, r)
		if err != nil {
			return err
		}
		for i := range out {
			if out[i].New {
				out[i].Tree = tlog.Tree{N: n, Hash: th}
			}
		}
		_, err = tx.Exec(ctx, `UPDATE log_tree SET size = $1, hash = $2`, n, th[:])
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// logRecordIDs are the ids of the records the log has of keys (key_sha256
// values), by key.
func logRecordIDs(ctx context.Context, q querier, keys []string) (map[string]int64, error) {
	rows, _ := q.Query(ctx, `SELECT key_sha256, id FROM log_records WHERE key_sha256 = ANY($1)`, keys)
	out := map[string]int64{}
	var k string
	var id int64
	_, err := pgx.ForEachRow(rows, []any{&k, &id}, func() error { out[k] = id; return nil })
	return out, err
}

// batchHashes reads stored hashes for an append of many records: the ones
// this append computed (not written yet) and the ones already read come
// from memory, the rest from the database, all of a call in one query.
type batchHashes struct {
	db    tlog.HashReader
	known map[int64]tlog.Hash
}

func (b *batchHashes) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	var missing []int64
	for _, x := range indexes {
		if _, ok := b.known[x]; !ok {
			missing = append(missing, x)
		}
	}
	if len(missing) > 0 {
		got, err := b.db.ReadHashes(missing)
		if err != nil {
			return nil, err
		}
		for i, x := range missing {
			b.known[x] = got[i]
		}
	}
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		out[i] = b.known[x]
	}
	return out, nil
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
