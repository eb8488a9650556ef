package mirror

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
	"golang.org/x/sync/singleflight"

	"reasonix.io/plugind"
	"reasonix.io/plugind/checksumlog"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// checksumLog is the checksum log a replica serves (SPEC §17): Go's
// checksum-database operations over the mirror's PostgreSQL (meta's
// log tables), its heads signed with the replica's LogKey. A record is
// "LOGPATH SHA sha256:HEX GITTREE|-" (checksumlog.Record.Line), looked up
// by the module path checksumlog.LogPath spells and the 40-hex commit as
// the version. A lookup of a record the log does not have makes the
// mirror fetch and verify the commit itself, through the path every
// snapshot takes (one upstream fetch per repo@SHA across replicas), and
// append what it found.
type checksumLog struct {
	s      *Server
	signer note.Signer
	// reading shares one read of a tree's list (treeFiles) among the
	// lookups of its folders.
	reading  singleflight.Group
	appender *logAppender
	// fullTiles keeps the full tiles served last, by path: they never
	// change, and every client that reads the log by tiles reads them.
	fullTiles *lru.Cache[string, []byte]
	// head is the last signed head, of headTree (Signed).
	headMu   sync.Mutex
	head     []byte
	headTree tlog.Tree
}

// keptTiles bounds checksumLog.fullTiles: a full data tile is about 40
// KB (256 records), a hash tile 8 KB.
const keptTiles = 256

// keptTrees bounds Server.treeLists: a bulk install's repositories and
// more (a list is at most 20,000 files of ~150 bytes).
const keptTrees = 128

var _ sumdb.ServerOps = (*checksumLog)(nil)

// maxTileWidth is the width of a full tile at the height the sumdb client
// reads (8): record tiles are read in one query of at most this many.
const (
	logTileHeight = 8
	maxTileWidth  = 1 << logTileHeight
)

// Signed implements sumdb.ServerOps: the current tree head, signed.
func (l *checksumLog) Signed(ctx context.Context) ([]byte, error) {
	t, err := l.s.cfg.DB.LogTree(ctx)
	if err != nil {
		return nil, err
	}
	return l.sign(t)
}

// sign is the signed head of tree t, signed once per tree (every lookup
// answers with one).
func (l *checksumLog) sign(t tlog.Tree) ([]byte, error) {
	l.headMu.Lock()
	defer l.headMu.Unlock()
	if l.head == nil || l.headTree != t {
		msg, err := note.Sign(&note.Note{Text: string(tlog.FormatTree(t))}, l.signer)
		if err != nil {
			return nil, err
		}
		l.head, l.headTree = msg, t
	}
	return l.head, nil
}

// ReadRecords implements sumdb.ServerOps.
func (l *checksumLog) ReadRecords(ctx context.Context, id, n int64) ([][]byte, error) {
	if id < 0 || n < 1 || n > maxTileWidth {
		return nil, badRequest("records %d to %d: at most %d at a time", id, id+n-1, maxTileWidth)
	}
	return l.s.cfg.DB.LogRecords(ctx, id, n)
}

// ReadTileData implements sumdb.ServerOps (hash tiles only, t.L ≥ 0).
func (l *checksumLog) ReadTileData(ctx context.Context, t tlog.Tile) ([]byte, error) {
	return l.s.cfg.DB.LogTile(ctx, t)
}

// Lookup implements sumdb.ServerOps: the id of the record of m (Path a
// log path, Version a commit), appended first when the log has none.
func (l *checksumLog) Lookup(ctx context.Context, m module.Version) (int64, error) {
	hit, err := l.lookup(ctx, m.Path, m.Version, &meta.Entry{})
	return hit.ID, err
}

// lookup is Lookup, with the record's text and a tree that holds it,
// recording in e what it looked up and where the answer came from: "hit"
// (the log had it) or "appended". A record the log has is read with the
// tree in one query (a bulk install looks up hundreds). The token's scopes
// and the policy apply when the mirror must fetch: a record the log has is
// answered to any token, as its tiles are (they hold every record).
func (l *checksumLog) lookup(ctx context.Context, logPath, commit string, e *meta.Entry) (meta.LogHit, error) {
	place, folder, err := checksumlog.SplitLogPath(logPath)
	e.Repo, e.SHA = logPath, commit
	if err != nil {
		return meta.LogHit{}, badRequest("%v", err)
	}
	e.Repo, e.Paths = place, folder
	if !source.IsSHA(commit) {
		return meta.LogHit{}, badRequest("checksum log: version %q of %s is not a 40-hex lower-case commit id", commit, logPath)
	}
	switch hit, ok, err := l.s.cfg.DB.LogRecord(ctx, logPath, commit); {
	case err != nil:
		return meta.LogHit{}, err
	case ok:
		e.Outcome, e.Detail = outcomeHit, fmt.Sprintf("record %d", hit.ID)
		return hit, nil
	}
	src, err := placeSource(place)
	if err == nil {
		err = l.s.allowed(src)
	}
	if err != nil {
		return meta.LogHit{}, err
	}
	if miss := l.s.outOfScope(ctx, src); miss != nil {
		e.Outcome = outcomeOutOfScope
		return meta.LogHit{}, miss
	}
	rec := checksumlog.Record{Place: place, Path: folder, Commit: commit}
	rec.Digest, err = l.treeDigest(ctx, src, commit, folder, e)
	if err == nil {
		// Recorded by the fetch that stored the tree, when it proved it
		// (fetchUpstream); "" (the record says "-") for a tree stored
		// before the mirror kept them.
		var trees map[string]string
		trees, err = l.s.cfg.DB.GitTrees(ctx, src.Key(), commit, []string{folder})
		rec.GitTree = trees[folder]
	}
	if err == nil {
		err = rec.Check()
	}
	if err != nil {
		return meta.LogHit{}, err
	}
	e.Digest = rec.Digest
	text := []byte(rec.Line())
	got, err := l.appender.append(ctx, meta.LogAppend{LogPath: logPath, Commit: commit, Text: text})
	if err != nil {
		return meta.LogHit{}, err
	}
	e.Outcome, e.Detail = outcomeHit, fmt.Sprintf("record %d", got.ID)
	if !got.New {
		// Appended meanwhile, by another replica maybe: its text is the
		// log's, not necessarily the one made here.
		hit, ok, err := l.s.cfg.DB.LogRecord(ctx, logPath, commit)
		if err == nil && !ok {
			err = fmt.Errorf("record %d of %s@%s: %w", got.ID, logPath, commit, meta.ErrNotInLog)
		}
		return hit, err
	}
	e.Outcome = outcomeAppended
	l.s.m.add(logAppendsTotal, 1)
	l.s.log.Info("checksum log: appended", "record", got.ID, "key", rec.Key(), "digest", rec.Digest)
	return meta.LogHit{ID: got.ID, Text: text, Tree: got.Tree}, nil
}

// recordServed appends the records of folders paths of src at sha that
// the mirror has just cut from files (the tree it stored, or those
// folders of it) for a snapshot: a client asks for a bulk plan's folders
// before it looks their records up, so by then the log holds them and the
// client reads them by tiles (host.LookupMany) instead of asking for each
// — the lookups of a cold mirror were what made a cold install with the
// log slower (issue 27). Records are the ones a lookup would append (the
// same digest, DigestBelow of the same list, and git tree). A failure is
// logged, not the snapshot's: a lookup appends what is missing.
func (l *checksumLog) recordServed(ctx context.Context, src source.Source, sha string, paths []string, files []plugind.File) {
	place := src.Place()
	trees, err := l.s.cfg.DB.GitTrees(ctx, src.Key(), sha, paths)
	if err != nil {
		l.s.log.Warn("checksum log: the records of served folders were not appended", "repo", src.Key(), "sha", sha, "err", err)
		return
	}
	var recs []meta.LogAppend
	for _, p := range paths {
		if !holdsFolder(files, p) {
			continue
		}
		rec := checksumlog.Record{Place: place, Path: p, Commit: sha, Digest: plugind.DigestBelow(files, p), GitTree: trees[p]}
		if rec.Check() != nil {
			continue
		}
		recs = append(recs, meta.LogAppend{LogPath: checksumlog.LogPath(place, p), Commit: sha, Text: []byte(rec.Line())})
	}
	if len(recs) == 0 {
		return
	}
	got, err := l.s.cfg.DB.AppendLogRecords(ctx, recs)
	if err != nil {
		l.s.log.Warn("checksum log: the records of served folders were not appended", "repo", src.Key(), "sha", sha, "err", err)
		return
	}
	for _, a := range got {
		if a.New {
			l.s.m.add(logAppendsTotal, 1)
		}
	}
}

// holdsFolder reports whether files (a tree's list) hold anything below
// folder: only a folder of the tree has a record.
func holdsFolder(files []plugind.File, folder string) bool {
	prefix := folder + "/"
	return slices.ContainsFunc(files, func(f plugind.File) bool { return strings.HasPrefix(f.Path, prefix) })
}

// outcomeAppended: a lookup whose record the mirror fetched, verified and
// appended to the checksum log.
const outcomeAppended = "appended"

// placeSource is the repository at place ("github.com/o/r",
// "git.example.test/team/tools") as the mirror reaches it: over HTTPS,
// as every /v1 route names it. A place that does not come back as itself
// is not one the mirror can fetch.
func placeSource(place string) (source.Source, error) {
	src, err := parseRepo("https://" + place)
	if err != nil || src.Place() != place {
		return source.Source{}, &apiError{Status: http.StatusNotFound, Code: plugind.CodeNotFound, Kind: "repo",
			Msg: fmt.Sprintf("the checksum log has no record of %s, and the mirror cannot add one: it fetches repositories over HTTPS, and https://%s is not one", place, place)}
	}
	return src, nil
}

// treeDigest is the SPEC §9 tree digest of folder ("" for the root) of src
// at sha (e records a refusal for a submodule outside the token's
// scopes), from the mirror's snapshot of the whole tree (stored first when
// missing, which proves the commit is on a branch or tag, as every
// snapshot is). A folder's digest is over its files with paths relative to
// it, as a client computes it, cut from the whole tree's file list: a bulk
// install asks for hundreds of folders of a few dozen commits, and storing
// each folder's own archive to hash it made a cold install with the log
// take 2–3× as long (issue 27). Only a whole tree the mirror cannot store
// (over the budget, something in it refused elsewhere) is hashed from the
// folder's own snapshot.
func (l *checksumLog) treeDigest(ctx context.Context, src source.Source, sha, folder string, e *meta.Entry) (string, error) {
	var paths []string
	if folder != "" {
		paths = []string{folder}
	}
	whole := true
	for attempt := 0; ; attempt++ {
		var o meta.Stored
		var err error
		if whole {
			o, _, err = l.s.snapshot(ctx, src, sha, nil)
			if err != nil && folder != "" && spoilsOnlySome(err) {
				whole = false
				continue
			}
		} else {
			o, _, err = l.s.snapshot(ctx, src, sha, paths)
		}
		if err != nil {
			return "", err
		}
		if miss := l.s.submoduleOutOfScope(ctx, src.Key(), sha, submodulesIn(o.Submodules, paths)); miss != nil {
			e.Outcome = outcomeOutOfScope
			return "", miss
		}
		if folder == "" {
			return o.Digest, nil
		}
		files, err := l.treeFiles(ctx, o.Object, src, sha)
		if plugind.CodeOf(err) == plugind.CodeDigestMismatch && attempt == 0 {
			// Altered in the object store: forget it and store it again.
			if err := l.s.heal(ctx, o.Digest); err != nil {
				return "", err
			}
			continue
		}
		if err != nil {
			return "", err
		}
		if !holdsFolder(files, folder) {
			return "", &apiError{Status: http.StatusNotFound, Code: plugind.CodeNotFound, Kind: "path",
				Msg: fmt.Sprintf("%s at %s has no folder %q", src.Key(), host.Short(sha), folder)}
		}
		return plugind.DigestBelow(files, folder), nil
	}
}

// treeFiles is the file list of a stored archive, read back once per
// replica and kept by its digest (archives are immutable, so a kept list
// never goes stale); concurrent lookups of one tree's folders share the
// read.
func (l *checksumLog) treeFiles(ctx context.Context, o meta.Object, src source.Source, sha string) ([]plugind.File, error) {
	if files, ok := l.s.treeLists.Get(o.Digest); ok {
		return files, nil
	}
	v, err, _ := l.reading.Do(o.Digest, func() (any, error) {
		files, err := l.folderFiles(ctx, o, src, sha)
		if err == nil {
			l.s.treeLists.Add(o.Digest, files)
		}
		return files, err
	})
	if err != nil {
		return nil, err
	}
	return v.([]plugind.File), nil
}

// folderFiles reads back a stored archive, checked against its digest.
func (l *checksumLog) folderFiles(ctx context.Context, o meta.Object, src source.Source, sha string) ([]plugind.File, error) {
	tmp, err := os.MkdirTemp(l.s.cfg.TempDir, "reasonix-log-")
	if err != nil {
		return nil, fmt.Errorf("stage %s@%s: %w", src.Key(), host.Short(sha), err)
	}
	defer os.RemoveAll(tmp)
	return l.s.unpack(ctx, o, filepath.Join(tmp, "tree"))
}
