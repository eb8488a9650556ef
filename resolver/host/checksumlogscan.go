package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"reasonix.io/plugind"
	"reasonix.io/plugind/checksumlog"
)

// A bulk plan asks the log for hundreds of records a cold home has never
// verified. The sumdb protocol answers one record per lookup; but a team's
// log is small beside such a plan (a 300-entry marketplace is 300 records,
// two data tiles), and its data tiles hold every record, proven by the
// same hash tiles a lookup's proof is read from. So when reading the whole
// log costs a fraction of the lookups it replaces (scanWorth), LookupMany
// reads it tile by tile instead, against the signed tree head one real
// lookup has just brought up to date — the sumdb client checked that head
// extends the one this home remembered, so a log that forks is still
// caught — and looks up one by one only the keys the log does not hold
// yet, which its server then adds. (Issue 27: 300 lookups cost a cold
// install from a warm mirror 1.3–1.4× its time without the log.)

const (
	// logTileHeight is the tile height the log serves and the sumdb
	// client reads (the mirror's, and Go's checksum database's).
	logTileHeight = 8
	// scanMin is the fewest unverified keys worth a scan.
	scanMin = 16
)

// scanWorth reports whether reading a log of n records (data tiles and
// the level-0 hash tiles that prove them: two requests per 256 records)
// costs under a quarter of the requests of need lookups.
func scanWorth(n int64, need int) bool {
	tiles := (n + 1<<logTileHeight - 1) >> logTileHeight
	return need >= scanMin && 2*tiles <= int64(need)/4
}

// LookupMany is Lookup of every key, each answer handed to each (i the
// key's index) as it is known; it returns once every key was answered.
// Offline, or for keys this home verified before, it is Lookup. The other
// keys are looked up one by one, at most Parallel at once, unless they are
// many beside the log's size: then one is looked up (which brings the
// tree head up to date, proven to extend the remembered one), the log is
// read by data tiles proven against that head, and only the keys it does
// not hold are looked up. later, when not nil, closes when the caller has
// fetched the trees the keys name: when the log lacked many of them, they
// are read again by tiles then, after another lookup brings the head up
// to date (a team mirror records a folder as it serves it).
func (l *ChecksumLog) LookupMany(ctx context.Context, keys []LogKey, offline bool, later <-chan struct{}, each func(i int, rec *LogRecord, err error)) {
	var missing []int
	for i, k := range keys {
		rec, ok, err := l.known(k)
		switch {
		case ok || err != nil:
			each(i, rec, err)
		case offline:
			rec, err := l.Lookup(ctx, k.Place, k.Path, k.Commit, true)
			each(i, rec, err)
		default:
			missing = append(missing, i)
		}
	}
	// round looks up one key, then reads what else the log holds by tiles;
	// false when that lookup failed. A home that remembers no tree head
	// yet has nothing a head must extend: the log's latest, signed, is
	// taken as the sumdb client would take it, without the lookup.
	round := func() bool {
		if !l.firstHead() {
			first := missing[0]
			rec, err := l.ask(ctx, keys[first])
			each(first, rec, err)
			missing = missing[1:]
			if err != nil {
				return false
			}
		}
		missing = l.answerFromScan(ctx, keys, missing, each)
		return true
	}
	if len(missing) > scanMin && round() && len(missing) > scanMin && later != nil {
		select {
		case <-later:
			round()
		case <-ctx.Done():
		}
	}
	var wg sync.WaitGroup
	for _, i := range missing {
		wg.Go(func() {
			rec, err := l.ask(ctx, keys[i])
			each(i, rec, err)
		})
	}
	wg.Wait()
}

// firstHead remembers the log's latest signed tree head when this home
// remembers none, reporting whether it did: as on any first contact with
// a log, there is no earlier head it must extend, and the records read
// against it are proven in it; later heads must extend it. Anything amiss
// (a head that does not verify, another process remembering one first)
// is left to the sumdb client's lookup.
func (l *ChecksumLog) firstHead() bool {
	file := l.latestFile()
	if cur, err := l.ops.ReadConfig(file); err != nil || len(cur) > 0 {
		return false
	}
	msg, err := l.ops.ReadRemote("/latest")
	if err != nil {
		return false
	}
	// An empty log has nothing to read, and a head of no records is not
	// one the sumdb client can prove a later head extends.
	if tree, err := l.openHead(msg); err != nil || tree.N == 0 {
		return false
	}
	return l.ops.WriteConfig(file, nil, msg) == nil
}

// latestFile is the config file (sumdb.ClientOps) of the latest tree
// head this home accepted, as the sumdb client names it.
func (l *ChecksumLog) latestFile() string { return l.Name() + "/latest" }

// openHead verifies a signed tree head with the log's key and reads its
// tree.
func (l *ChecksumLog) openHead(msg []byte) (tlog.Tree, error) {
	n, err := note.Open(msg, l.vers)
	if err != nil {
		return tlog.Tree{}, err
	}
	return tlog.ParseTree([]byte(n.Text))
}

// answerFromScan answers the keys missing (indexes into keys) that the
// log holds, when reading it is worth it, and returns the rest. A scan that
// proves the log lied answers every one of them with the SECURITY ERROR;
// one that could not read the log leaves them all to lookups.
func (l *ChecksumLog) answerFromScan(ctx context.Context, keys []LogKey, missing []int, each func(int, *LogRecord, error)) []int {
	recs, err := l.scan(ctx, len(missing))
	switch {
	case errors.Is(err, ErrLogSecurity):
		for _, i := range missing {
			each(i, nil, err)
		}
		return nil
	case err != nil:
		l.ops.log.Debug("checksum log: not read by tiles; looking records up one by one", "err", err)
		return missing
	case recs == nil:
		return missing
	}
	var rest, found []int
	var verified []*LogRecord
	for _, i := range missing {
		lp, _, err := keys[i].escaped()
		if err != nil {
			each(i, nil, err)
			continue
		}
		rec, ok := recs[lp+"@"+keys[i].Commit]
		if !ok {
			rest = append(rest, i)
			continue
		}
		found, verified = append(found, i), append(verified, rec)
	}
	l.remember(verified...)
	for j, i := range found {
		each(i, verified[j], nil)
	}
	return rest
}

// scan reads every record of the log's latest tree this home accepted,
// proven to be in it, by log path and commit; nil when the log is too
// large for need keys to be worth it (scanWorth) or no head is known.
func (l *ChecksumLog) scan(ctx context.Context, need int) (map[string]*LogRecord, error) {
	msg, err := l.ops.ReadConfig(l.latestFile())
	if err != nil || len(msg) == 0 {
		return nil, err
	}
	tree, err := l.openHead(msg)
	if err != nil {
		return nil, fmt.Errorf("the remembered tree head: %w", err)
	}
	if tree.N == 0 || !scanWorth(tree.N, need) {
		return nil, nil
	}
	tiles := &logTiles{ops: l.ops, name: l.Name()}
	hashes := tlog.TileHashReader(tree, tiles)
	var mu sync.Mutex
	out := map[string]*LogRecord{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for start := int64(0); start < tree.N; start += 1 << logTileHeight {
		t := tlog.Tile{H: logTileHeight, L: -1, N: start >> logTileHeight, W: int(min(1<<logTileHeight, tree.N-start))}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			recs, err := l.dataTile(t, tree, tiles, hashes)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range recs {
				key := checksumlog.LogPath(r.Place, r.Path) + "@" + r.Commit
				if was, dup := out[key]; dup {
					return l.scanRefusal(tree, "its signed tree holds two records of %s: #%d and #%d", r.Key(), was.ID, r.ID)
				}
				out[key] = r
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// dataTile reads data tile t of tree and proves each of its records is
// the one tree holds at its index: its record hash is the level-0 hash the
// verified hash tiles give there. A full tile, once proven, is cached.
func (l *ChecksumLog) dataTile(t tlog.Tile, tree tlog.Tree, tiles *logTiles, hashes tlog.HashReader) ([]*LogRecord, error) {
	data, cached, err := tiles.tile(t)
	if err != nil {
		return nil, err
	}
	texts := splitRecords(data)
	start := t.N << t.H
	if len(texts) != t.W {
		return nil, l.scanRefusal(tree, "its data tile %s holds %d records, want %d", t.Path(), len(texts), t.W)
	}
	indexes := make([]int64, t.W)
	for j := range indexes {
		indexes[j] = tlog.StoredHashIndex(0, start+int64(j))
	}
	want, err := hashes.ReadHashes(indexes)
	if err != nil {
		if tiles.failed() {
			return nil, err // a tile could not be read: lookups instead
		}
		return nil, l.scanRefusal(tree, "its hash tiles do not prove its signed tree: %v", err)
	}
	out := make([]*LogRecord, 0, len(texts))
	for j, text := range texts {
		id := start + int64(j)
		if tlog.RecordHash(text) != want[j] {
			return nil, l.scanRefusal(tree, "record #%d of its data tile %s is not the record its signed tree holds there:\n\t%s", id, t.Path(), bytes.TrimRight(text, "\n"))
		}
		r, err := checksumlog.ParseRecord(text)
		if err != nil {
			continue // proven, but not a record of ours: no plan's key names it
		}
		out = append(out, &LogRecord{Record: r, ID: id, TreeSize: tree.N, TreeHash: tree.Hash})
	}
	if t.W == 1<<t.H && !cached {
		tiles.SaveTiles([]tlog.Tile{t}, [][]byte{data})
	}
	return out, nil
}

// scanRefusal is the SECURITY ERROR of a log whose tiles do not prove what
// its signed tree head says.
func (l *ChecksumLog) scanRefusal(tree tlog.Tree, format string, args ...any) error {
	return plugind.Errorf(plugind.CodeDigestMismatch, "checksum log %s (%s), signed tree of %d records, hash %s: %s\n\n%w\n%s",
		l.Name(), l.URL(), tree.N, tree.Hash, fmt.Sprintf(format, args...), ErrLogSecurity,
		"The log, a mirror serving it, or something in between altered what it served. Nothing was installed.")
}

// splitRecords cuts a data tile into its records' texts: each is the text
// (lines ending in a newline, none empty) and a blank line
// (tlog.FormatRecord without its id line).
func splitRecords(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.Index(data, []byte("\n\n"))
		if i < 0 {
			return append(out, data) // malformed: counted, then refused
		}
		out = append(out, data[:i+1])
		data = data[i+2:]
	}
	return out
}

// logTiles reads the log's tiles: hash tiles for tlog.TileHashReader,
// which checks each against the tree before using it, and data tiles for
// dataTile, which checks their records. A tile comes from the home's
// cache (where the sumdb client keeps the tiles it verified, under the
// same names), else from the log; a partial hash tile from a full one
// when the log has completed it. Tiles proven are saved. (sumdb.Client's own reader is
// not exported.)
type logTiles struct {
	ops    *logOps
	name   string
	flight singleflight.Group // data tiles proven side by side share the hash tiles above them
	mu     sync.Mutex
	read   error // the last tile that could not be read
}

func (r *logTiles) Height() int { return logTileHeight }

func (r *logTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		v, err, _ := r.flight.Do(t.Path(), func() (any, error) {
			data, _, err := r.tile(t)
			return data, err
		})
		data, _ := v.([]byte)
		if err != nil {
			r.mu.Lock()
			r.read = err
			r.mu.Unlock()
			return nil, err
		}
		out[i] = data
	}
	return out, nil
}

// tile reads t; cached reports it came from the home's cache as asked.
// Only a hash tile is cut from a full one: its hashes have a fixed size,
// a data tile's records do not.
func (r *logTiles) tile(t tlog.Tile) (data []byte, cached bool, err error) {
	if data, err := r.ops.ReadCache(r.cacheName(t)); err == nil {
		return data, true, nil
	}
	whole := t
	whole.W = 1 << t.H
	prefix := whole != t && t.L >= 0
	if prefix {
		if data, err := r.ops.ReadCache(r.cacheName(whole)); err == nil && len(data) == whole.W*tlog.HashSize {
			return data[:t.W*tlog.HashSize], false, nil
		}
	}
	data, err = r.ops.ReadRemote("/" + t.Path())
	if err != nil && prefix {
		if full, ferr := r.ops.ReadRemote("/" + whole.Path()); ferr == nil && len(full) == whole.W*tlog.HashSize {
			return full[:t.W*tlog.HashSize], false, nil
		}
	}
	return data, false, err
}

// cacheName is where the home's cache keeps t (as the sumdb client names
// it).
func (r *logTiles) cacheName(t tlog.Tile) string { return r.name + "/" + t.Path() }

// SaveTiles caches tiles that were proven.
func (r *logTiles) SaveTiles(tiles []tlog.Tile, data [][]byte) {
	for i, t := range tiles {
		r.ops.WriteCache(r.cacheName(t), data[i])
	}
}

// failed reports whether a tile could not be read (rather than proven
// wrong).
func (r *logTiles) failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.read != nil
}
