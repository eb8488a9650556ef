// Package fakelog is a checksum log (SPEC §17) for tests: x/mod's
// in-memory sumdb.TestServer, served over loopback with the sumdb protocol
// (/lookup, /latest, /tile) for keys whose "version" is a 40-hex commit
// (x/mod's own handler takes semantic versions only). Like the real
// server, it adds a record it does not have by computing the tree's digest
// itself (Digests), and it counts what it is asked.
package fakelog

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"reasonix.io/plugind"
	"reasonix.io/plugind/checksumlog"
	"reasonix.io/plugind/internal/fakegithub"
)

// Digests computes the tree digest of folder path ("" the root) of commit
// of the repository at place, as the log's server would after fetching it.
type Digests func(place, path, commit string) (string, error)

// Log is a running fake log.
type Log struct {
	URL      string // the base the protocol's paths are appended to
	Verifier string // the verifier key
	Signer   string // the signer key
	srv      *httptest.Server
	ts       *sumdb.TestServer
	digests  Digests
	mu       sync.Mutex
	altered  map[string]string // record key → the digest the log records instead
	forged   map[int64][]byte  // record id → the text its data tile serves instead
	auth     []string          // Authorization headers seen
	requests atomic.Int64
	lookups  atomic.Int64
	down     atomic.Bool
}

// New starts a log named name that computes records with d.
func New(t testing.TB, name string, d Digests) *Log {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		t.Fatal(err)
	}
	return NewWithKey(t, skey, vkey, d)
}

// NewWithKey starts a log signing with skey: two logs with one key and
// different records are a log that forks.
func NewWithKey(t testing.TB, skey, vkey string, d Digests) *Log {
	t.Helper()
	l := &Log{Verifier: vkey, Signer: skey, digests: d, altered: map[string]string{}, forged: map[int64][]byte{}}
	l.ts = sumdb.NewTestServer(skey, l.gosum)
	l.srv = httptest.NewServer(http.HandlerFunc(l.serve))
	t.Cleanup(l.srv.Close)
	l.URL = l.srv.URL + "/log"
	return l
}

// Env is REASONIX_CHECKSUM_LOG's value for this log.
func (l *Log) Env() string { return l.Verifier + " " + l.URL }

// Requests counts every request; Lookups those to /lookup.
func (l *Log) Requests() int64 { return l.requests.Load() }
func (l *Log) Lookups() int64  { return l.lookups.Load() }

// Reset zeroes the counts.
func (l *Log) Reset() { l.requests.Store(0); l.lookups.Store(0) }

// Auth lists the Authorization headers the log was sent.
func (l *Log) Auth() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.auth...)
}

// Alter makes the log record digest for the key, whatever the tree holds
// (a compromised log, or a compromised source the log fetched first).
func (l *Log) Alter(place, path, commit, digest string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.altered[checksumlog.KeyOf(place, path, commit)] = digest
}

// ForgeTileRecord makes the data tile holding record id serve text (a
// line ending in a newline) in its place: a log, or a mirror serving it,
// that shows in its tiles a record its tree does not hold.
func (l *Log) ForgeTileRecord(id int64, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forged[id] = []byte(text)
}

// Down makes every request fail with 503 (true) or be answered again.
func (l *Log) Down(down bool) { l.down.Store(down) }

func (l *Log) gosum(logPath, commit string) ([]byte, error) {
	place, path, err := checksumlog.SplitLogPath(logPath)
	if err != nil {
		return nil, err
	}
	key := checksumlog.KeyOf(place, path, commit)
	l.mu.Lock()
	d, ok := l.altered[key]
	l.mu.Unlock()
	if !ok {
		if d, err = l.digests(place, path, commit); err != nil {
			return nil, err
		}
	}
	r := checksumlog.Record{Place: place, Path: path, Commit: commit, Digest: d}
	if err := r.Check(); err != nil {
		return nil, err
	}
	return []byte(r.Line()), nil
}

func (l *Log) serve(w http.ResponseWriter, r *http.Request) {
	l.requests.Add(1)
	if a := r.Header.Get("Authorization"); a != "" {
		l.mu.Lock()
		l.auth = append(l.auth, a)
		l.mu.Unlock()
	}
	if l.down.Load() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	ctx := r.Context()
	p, ok := strings.CutPrefix(r.URL.Path, "/log")
	switch {
	case !ok:
		http.NotFound(w, r)
	case strings.HasPrefix(p, "/lookup/"):
		l.lookups.Add(1)
		escPath, escVers, _ := strings.Cut(strings.TrimPrefix(p, "/lookup/"), "@")
		path, err := module.UnescapePath(escPath)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		vers, err := module.UnescapeVersion(escVers)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id, err := l.ts.Lookup(ctx, module.Version{Path: path, Version: vers})
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		recs, err := l.ts.ReadRecords(ctx, id, 1)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		msg, err := tlog.FormatRecord(id, recs[0])
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		signed, err := l.ts.Signed(ctx)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Write(append(msg, signed...))
	case p == "/latest":
		signed, err := l.ts.Signed(ctx)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Write(signed)
	case strings.HasPrefix(p, "/tile/"):
		t, err := tlog.ParseTilePath(p[1:])
		if err != nil {
			http.Error(w, "invalid tile syntax", http.StatusBadRequest)
			return
		}
		read := l.readTile
		if t.L == -1 {
			read = l.readDataTile
		}
		data, err := read(ctx, t)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		w.Write(data)
	default:
		http.NotFound(w, r)
	}
}

// readTile answers a tile only when the tree holds all of it (the test
// server's ReadTileData would panic past its end).
func (l *Log) readTile(ctx context.Context, t tlog.Tile) (data []byte, err error) {
	defer func() {
		if recover() != nil {
			data, err = nil, errors.New("no such tile")
		}
	}()
	return l.ts.ReadTileData(ctx, t)
}

// readDataTile answers a data tile: its records' texts, each followed by
// a blank line, as sumdb.Server serves them (forged ones as forged).
func (l *Log) readDataTile(ctx context.Context, t tlog.Tile) (data []byte, err error) {
	defer func() {
		if recover() != nil {
			data, err = nil, errors.New("no such tile")
		}
	}()
	start := t.N << t.H
	texts, err := l.ts.ReadRecords(ctx, start, int64(t.W))
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, text := range texts {
		if f, ok := l.forged[start+int64(i)]; ok {
			text = f
		}
		data = append(append(data, text...), '\n')
	}
	return data, nil
}

// GitDigest is the SPEC §9 tree digest of folder path ("" the root) of
// commit in the bare repository gitDir, from git archive: what a log's
// server computes when it fetches the commit itself.
func GitDigest(gitDir, commit, path string) (string, error) {
	args := []string{"--git-dir", gitDir, "archive", "--format=tar", commit}
	if path != "" {
		args = append(args, "--", path)
	}
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return "", fmt.Errorf("git archive %s %s: %w", commit, path, err)
	}
	tr := tar.NewReader(bytes.NewReader(out))
	var files []plugind.File
	prefix := ""
	if path != "" {
		prefix = path + "/"
	}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		rel, ok := strings.CutPrefix(h.Name, prefix)
		if !ok {
			continue
		}
		sum := sha256.New()
		if _, err := io.Copy(sum, tr); err != nil {
			return "", err
		}
		files = append(files, plugind.File{Path: rel, SHA256: hex.EncodeToString(sum.Sum(nil)), Executable: h.Mode&0o111 != 0})
	}
	return plugind.DigestFiles(files), nil
}

// FromGit computes records from bare repositories, found by place.
func FromGit(dirs func(place string) (gitDir string, ok bool)) Digests {
	return func(place, path, commit string) (string, error) {
		dir, ok := dirs(place)
		if !ok {
			return "", fmt.Errorf("no repository %s: %w", place, errNotFound)
		}
		return GitDigest(dir, commit, path)
	}
}

// FromFakeGitHub computes records from the repositories of a fake GitHub
// (github.com/OWNER/REPO, kept at DIR/OWNER/REPO.git).
func FromFakeGitHub(gh *fakegithub.Server) Digests {
	return FromGit(func(place string) (string, bool) {
		repo, ok := strings.CutPrefix(place, "github.com/")
		if !ok {
			return "", false
		}
		dir := filepath.Join(gh.Dir(), filepath.FromSlash(repo)+".git")
		_, err := os.Stat(dir)
		return dir, err == nil
	})
}

var errNotFound = errors.New("not found")
