package store

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Snapshot describes one stored snapshot. ModTime is when it was committed
// (or last found already stored by a commit).
type Snapshot struct {
	Digest  string
	Bytes   int64
	Files   int
	ModTime time.Time
}

// Stats sums the store.
type Stats struct {
	Snapshots int
	Bytes     int64
	Files     int
	CapBytes  int64
}

// List returns every stored snapshot, by digest. Entries of snapshots/ that
// are not named by a digest are left out (Verify reports them).
func (s *Store) List(ctx context.Context) ([]Snapshot, error) {
	entries, err := os.ReadDir(s.snapshots)
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var out []Snapshot
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		digest := digestPrefix + e.Name()
		if !e.IsDir() || ValidateDigest(digest) != nil {
			continue
		}
		snap, err := s.measure(digest)
		if err != nil {
			if os.IsNotExist(err) {
				continue // removed while we listed
			}
			return nil, fmt.Errorf("list snapshots: %w", err)
		}
		out = append(out, snap)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Digest < out[j].Digest })
	return out, nil
}

func (s *Store) measure(digest string) (Snapshot, error) {
	root := filepath.Join(s.snapshots, hexOf(digest))
	info, err := os.Lstat(root)
	if err != nil {
		return Snapshot{}, err
	}
	snap := Snapshot{Digest: digest, ModTime: info.ModTime()}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		snap.Files++
		snap.Bytes += fi.Size()
		return nil
	})
	return snap, err
}

// Stats returns the store's totals and its configured cap.
func (s *Store) Stats(ctx context.Context) (*Stats, error) {
	snaps, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	st := &Stats{Snapshots: len(snaps), CapBytes: s.capBytes}
	for _, sn := range snaps {
		st.Bytes += sn.Bytes
		st.Files += sn.Files
	}
	return st, nil
}
