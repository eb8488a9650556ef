package mirror

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/tlog"

	"reasonix.io/plugind/mirror/meta"
)

// The checksum log's routes (SPEC §17), served when the replica has a
// LogKey, under /log so a client's REASONIX_CHECKSUM_LOG URL is
// https://MIRROR/log; they need the same bearer token as /v1:
//
//	GET /log/latest                the signed tree head
//	GET /log/lookup/LOGPATH@SHA    the record's id and text, then the signed head
//	GET /log/tile/8/L/N[.p/W]      a hash tile; L "data": the records' texts
//
// The answers are byte for byte those of Go's checksum database
// (golang.org/x/mod/sumdb.Server), so its client checks them; the routes
// are the mirror's own rather than sumdb.Server because that one refuses
// a version that is not semver (ours is the commit), writes its
// operations' errors into its answers, and says only 404 or 500. Here a
// refusal is the mirror's JSON error like every /v1 route's: 400 for a
// malformed key, commit or tile, 403 for a repository the policy or the
// token's scopes refuse (checked only when the mirror must fetch: a
// record the log has is answered to any token, as its tiles, which hold
// every record, are), 404 for a record the mirror cannot make (no such
// commit, folder or repository, or a commit on no branch or tag) or a tile
// past the log's end, 502/503 for upstream or the mirror itself failing.
// Every request is audited (actions log.latest, log.lookup, log.tile).

// maxLookup bounds a lookup's escaped key.
const maxLookup = 4 << 10

func (s *Server) logRoutes(mux *http.ServeMux) {
	l := s.sumLog
	for route, h := range map[string]func(*checksumLog, http.ResponseWriter, *http.Request){
		"latest": (*checksumLog).handleLatest, "lookup/{key...}": (*checksumLog).handleLookup, "tile/{tile...}": (*checksumLog).handleTile,
	} {
		name, _, _ := strings.Cut(route, "/")
		mux.Handle("GET /log/"+route, s.instrument("log."+name, s.auth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h(l, w, r) }))))
	}
}

func (l *checksumLog) handleLatest(w http.ResponseWriter, r *http.Request) {
	e := &meta.Entry{Action: "log.latest"}
	signed, err := l.Signed(r.Context())
	if err != nil {
		l.s.fail(w, r, e, err)
		return
	}
	e.Outcome = outcomeHit
	l.s.answer(w, r, e, func() { writeText(w, "no-cache", signed) })
}

func (l *checksumLog) handleLookup(w http.ResponseWriter, r *http.Request) {
	e := &meta.Entry{Action: "log.lookup"}
	key := r.PathValue("key")
	e.Repo = key
	var msg, signed []byte
	err := checkText("key", key)
	escPath, escVers, found := strings.Cut(key, "@")
	switch {
	case err != nil:
	case len(key) > maxLookup:
		err = badRequest("the key is %d bytes long; at most %d", len(key), maxLookup)
	case !found || strings.Contains(escVers, "@"):
		err = badRequest("want /log/lookup/LOGPATH@COMMIT, got %q", key)
	default:
		var path, vers string
		if path, err = module.UnescapePath(escPath); err != nil {
			err = badRequest("%q is not an escaped log path: %v", escPath, err)
		} else if vers, err = module.UnescapeVersion(escVers); err != nil {
			err = badRequest("%q is not an escaped commit: %v", escVers, err)
		} else {
			msg, signed, err = l.answer(r.Context(), path, vers, e)
		}
	}
	switch {
	case err != nil && e.Outcome == outcomeOutOfScope:
		l.s.refuseScope(w, r, e, l.s.toAPI(r, err))
	case err != nil:
		l.s.fail(w, r, e, err)
	default:
		l.s.answer(w, r, e, func() { writeText(w, "no-cache", append(msg, signed...)) })
	}
}

// answer is a lookup's answer: the record, formatted, and the signed head
// of a tree that holds it.
func (l *checksumLog) answer(ctx context.Context, logPath, commit string, e *meta.Entry) (msg, signed []byte, err error) {
	hit, err := l.lookup(ctx, logPath, commit, e)
	if err != nil {
		return nil, nil, err
	}
	if msg, err = tlog.FormatRecord(hit.ID, hit.Text); err != nil {
		return nil, nil, err
	}
	signed, err = l.sign(hit.Tree)
	return msg, signed, err
}

func (l *checksumLog) handleTile(w http.ResponseWriter, r *http.Request) {
	e := &meta.Entry{Action: "log.tile", Paths: r.PathValue("tile")}
	t, err := tlog.ParseTilePath("tile/" + r.PathValue("tile"))
	if err != nil {
		l.s.fail(w, r, e, badRequest("%q is not a tile path (tile/H/L/N[.p/W])", e.Paths))
		return
	}
	if t.H != logTileHeight {
		l.s.fail(w, r, e, badRequest("tile height %d: this log serves tiles of height %d", t.H, logTileHeight))
		return
	}
	// A full tile never changes: one read before is answered from memory.
	full := t.W == 1<<t.H
	data, cached := l.fullTiles.Get(t.Path())
	if !full || !cached {
		if err = l.tileInLog(r, t); err == nil {
			if t.L == -1 {
				data, err = l.recordTile(r, t)
			} else {
				data, err = l.ReadTileData(r.Context(), t)
			}
		}
		if err != nil {
			l.s.fail(w, r, e, err)
			return
		}
		if full {
			l.fullTiles.Add(t.Path(), data)
		}
	}
	e.Outcome = outcomeHit
	// A full tile never changes; a partial one is superseded as the log grows.
	cache := "no-cache"
	if full {
		cache = "private, max-age=31536000, immutable"
	}
	l.s.answer(w, r, e, func() {
		if t.L == -1 {
			writeText(w, cache, data)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Cache-Control", cache)
		_, _ = w.Write(data)
	})
}

// tileInLog refuses, before reading anything else, a tile that starts past
// the log's end (or so far past it that its index does not fit).
func (l *checksumLog) tileInLog(r *http.Request, t tlog.Tile) error {
	tree, err := l.s.cfg.DB.LogTree(r.Context())
	if err != nil {
		return err
	}
	shift := t.H * (max(t.L, 0) + 1) // the records one tile at level L covers, as a power of 2
	if shift >= 62 || t.N > (tree.N>>shift) || t.N<<shift >= tree.N {
		return fmt.Errorf("tile %s: past the log's %d records: %w", t.Path(), tree.N, meta.ErrNotInLog)
	}
	return nil
}

// recordTile is a data tile: the texts of its records, each as
// tlog.FormatRecord writes it without its first line (the id), as
// sumdb.Server serves them.
func (l *checksumLog) recordTile(r *http.Request, t tlog.Tile) ([]byte, error) {
	start := t.N << t.H
	texts, err := l.ReadRecords(r.Context(), start, int64(t.W))
	if err != nil {
		return nil, err
	}
	var data []byte
	for i, text := range texts {
		msg, err := tlog.FormatRecord(start+int64(i), text)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", start+int64(i), err)
		}
		_, msg, _ = bytes.Cut(msg, []byte{'\n'})
		data = append(data, msg...)
	}
	return data, nil
}

func writeText(w http.ResponseWriter, cache string, b []byte) {
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	w.Header().Set("Cache-Control", cache)
	_, _ = w.Write(b)
}
