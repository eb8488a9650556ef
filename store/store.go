// Package store is the content-addressed snapshot store of SPEC §8: every
// fetched tree is materialized once, read-only, under
// snapshots/<64 hex of its tree digest>/, so identical content is stored
// once however many sources lead to it.
//
// Layout of the store directory:
//
//	snapshots/<hex>/   committed snapshots (read-only)
//	staging/st-*/      trees being written; Staging.Dir lives inside one
//	locks/<hex>.lock   per-digest inter-process locks
//	trash/             snapshots being deleted
//	quarantine/<hex>-<UTC time>/  snapshots that failed verification (see Quarantine)
//
// A snapshot appears in snapshots/ only by one rename of a complete, synced
// tree, and leaves it by one rename into trash/, so readers never see a
// partial snapshot.
package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"reasonix.io/plugind"
)

// DefaultCapBytes is the default total size cap of the store (SPEC §8).
const DefaultCapBytes int64 = 2 << 30

const digestPrefix = "sha256:"

// Options configure a Store. Zero values take the defaults.
type Options struct {
	CapBytes int64          // total cap used by GC; default DefaultCapBytes
	Budget   plugind.Budget // per snapshot; default plugind.DefaultBudget
}

// Store is a snapshot store rooted at one directory. It is safe for
// concurrent use by goroutines and by several processes sharing the
// directory.
type Store struct {
	dir        string
	snapshots  string
	staging    string
	locks      string
	trash      string
	quarantine string
	capBytes   int64
	budget     plugind.Budget
	syncs      *syncGroup // every snapshot's flush before its rename
}

// Open opens the store in dir, creating its layout if needed.
func Open(dir string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	s := &Store{
		dir:        abs,
		snapshots:  filepath.Join(abs, "snapshots"),
		staging:    filepath.Join(abs, "staging"),
		locks:      filepath.Join(abs, "locks"),
		trash:      filepath.Join(abs, "trash"),
		quarantine: filepath.Join(abs, "quarantine"),
		capBytes:   plugind.PositiveOr(opts.CapBytes, DefaultCapBytes),
		budget:     opts.Budget.OrDefault(),
		syncs:      newSyncGroup(syncFS),
	}
	for _, d := range []string{s.snapshots, s.staging, s.locks, s.trash, s.quarantine} {
		if err := plugind.MkdirPrivate(d); err != nil {
			return nil, fmt.Errorf("open store %s: %w", abs, err)
		}
	}
	return s, nil
}

// Dir returns the store's absolute root directory.
func (s *Store) Dir() string { return s.dir }

// ValidateDigest checks that d is a tree digest as SPEC §9 writes it:
// "sha256:" and 64 lowercase hex digits. It runs before any path is built
// from a digest, so a digest can never name anything outside snapshots/.
func ValidateDigest(d string) error {
	if len(d) != len(digestPrefix)+64 || d[:len(digestPrefix)] != digestPrefix || strings.Trim(d[len(digestPrefix):], "0123456789abcdef") != "" {
		return plugind.Errorf(plugind.CodeInvalidSource, "invalid snapshot digest %q: want \"sha256:\" followed by 64 lowercase hex digits", d)
	}
	return nil
}

// hexOf returns the 64-hex part of a validated digest.
func hexOf(d string) string { return d[len(digestPrefix):] }

// Path returns the absolute path of snapshot digest. A digest that is well
// formed but not stored gives a plugind.CodeNotFound error naming it.
func (s *Store) Path(digest string) (string, error) {
	if err := ValidateDigest(digest); err != nil {
		return "", err
	}
	p := filepath.Join(s.snapshots, hexOf(digest))
	info, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", plugind.Errorf(plugind.CodeNotFound, "snapshot %s is not in the store", digest)
	case err != nil:
		return "", plugind.Errorf(plugind.CodeSourceUnreadable, "snapshot %s: %w", digest, err)
	case !info.IsDir():
		return "", plugind.Errorf(plugind.CodeSourceUnreadable, "snapshot %s: %s is not a directory", digest, p)
	}
	return p, nil
}

// SnapshotOf says which snapshot holds path: the digest of the snapshot
// directory that path is (or is inside), judged lexically. ok is false for
// any path outside snapshots/.
func (s *Store) SnapshotOf(path string) (digest string, ok bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(s.snapshots, abs)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return "", false
	}
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	d := digestPrefix + first
	if ValidateDigest(d) != nil {
		return "", false
	}
	return d, true
}

// Has reports whether snapshot digest is stored.
func (s *Store) Has(digest string) bool {
	_, err := s.Path(digest)
	return err == nil
}

// lockDigest takes the inter-process lock of one digest. flock(2) locks
// belong to an open file description, so two goroutines of one process
// exclude each other as two processes do.
func (s *Store) lockDigest(ctx context.Context, hex string) (*flock.Flock, error) {
	l := flock.New(filepath.Join(s.locks, hex+".lock"))
	ok, err := l.TryLockContext(ctx, 10*time.Millisecond)
	if err != nil {
		return nil, fmt.Errorf("lock snapshot %s: %w", hex, err)
	}
	if !ok {
		return nil, fmt.Errorf("lock snapshot %s: not acquired", hex)
	}
	return l, nil
}
