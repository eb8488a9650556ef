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

	"reasonix.io/plugind"
)

// A snapshot whose content no longer matches its digest (edited by hand, a
// disk error, tampering) must never be installed from again, yet what it
// became is evidence worth keeping for a while. Quarantine moves it out of
// snapshots/ into quarantine/<hex>-<UTC time>, in one rename under the
// snapshot's lock, so readers see it either whole in place or gone, and the
// next plan that needs it finds it missing and fetches it afresh.
//
// Quarantined entries are evidence, not content: nothing reads them. GC
// deletes them once they are older than quarantineKeep, and all of them when
// it runs with All.

// quarantineKeep is how long GC keeps a quarantined snapshot for inspection.
const quarantineKeep = 7 * 24 * time.Hour

// quarantineStamp is the UTC time format of quarantine entry names.
const quarantineStamp = "20060102T150405Z"

// Quarantine moves snapshot digest into quarantine/. A digest that is not
// stored gives a plugind.CodeNotFound error.
func (s *Store) Quarantine(digest string) error {
	err := s.takeOut(digest, "quarantine", func(hex string) (string, error) {
		stamp := time.Now().UTC().Format(quarantineStamp)
		dest := filepath.Join(s.quarantine, hex+"-"+stamp)
		for i := 2; exists(dest); i++ {
			dest = filepath.Join(s.quarantine, fmt.Sprintf("%s-%s-%d", hex, stamp, i))
		}
		return dest, os.MkdirAll(s.quarantine, 0o755)
	})
	if err == nil {
		SyncDir(s.quarantine)
	}
	return err
}

// takeOut moves snapshot digest, under its lock, out of snapshots/ to the
// path to gives for its hex: one rename, so readers see it whole in place
// or gone. verb names the operation in an error; a digest that is not
// stored gives a plugind.CodeNotFound error.
func (s *Store) takeOut(digest, verb string, to func(hex string) (string, error)) error {
	if err := ValidateDigest(digest); err != nil {
		return err
	}
	hex := hexOf(digest)
	lock, err := s.lockDigest(context.Background(), hex)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	final := filepath.Join(s.snapshots, hex)
	info, err := os.Lstat(final)
	if errors.Is(err, fs.ErrNotExist) {
		return plugind.Errorf(plugind.CodeNotFound, "snapshot %s is not in the store", digest)
	}
	dest := ""
	if err == nil {
		dest, err = to(hex)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", verb, digest, err)
	}
	// Moving a directory to a new parent rewrites its "..": it must be
	// writable for that (snapshots are 0555).
	if info.IsDir() {
		_ = os.Chmod(final, 0o755)
	}
	if err = os.Rename(final, dest); err != nil {
		dest = final
	}
	if info.IsDir() {
		_ = os.Chmod(dest, 0o555) // read-only again, moved or not
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", verb, digest, err)
	}
	SyncDir(s.snapshots)
	return nil
}

// Quarantined reports whether a snapshot of digest is held in quarantine/,
// so a caller that finds it missing can say it was damaged rather than
// never fetched.
func (s *Store) Quarantined(digest string) bool {
	if ValidateDigest(digest) != nil {
		return false
	}
	matches, err := filepath.Glob(filepath.Join(s.quarantine, hexOf(digest)+"-*"))
	return err == nil && len(matches) > 0
}

// CheckSnapshot re-hashes one stored snapshot and checks its shape, as
// Verify does for all of them. It returns nil when the snapshot is intact,
// a plugind.CodeNotFound error when it is not stored, and otherwise an error
// naming every problem found.
func (s *Store) CheckSnapshot(digest string) error {
	if _, err := s.Path(digest); err != nil {
		return err
	}
	if problems := s.check(digest); len(problems) > 0 {
		return fmt.Errorf("stored snapshot %s failed verification: %s", digest, strings.Join(problems, "; "))
	}
	return nil
}

// removeQuarantined deletes quarantine entries quarantined before cutoff,
// or every entry when all is set.
func (s *Store) removeQuarantined(cutoff time.Time, all bool) (int, error) {
	entries, err := os.ReadDir(s.quarantine)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var n int
	var errs []error
	for _, e := range entries {
		p := filepath.Join(s.quarantine, e.Name())
		if !all {
			// The name carries the quarantine time; a rename keeps the
			// entry's own ModTime, which is when it was committed.
			at, ok := quarantinedAt(e.Name())
			if !ok {
				info, err := e.Info()
				if err != nil {
					continue
				}
				at = info.ModTime()
			}
			if at.After(cutoff) {
				continue
			}
		}
		if err := removeTree(p); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// quarantinedAt reads the time out of a quarantine entry name,
// <64 hex>-<stamp>[-N].
func quarantinedAt(name string) (time.Time, bool) {
	if len(name) < 65+len(quarantineStamp) || name[64] != '-' {
		return time.Time{}, false
	}
	t, err := time.Parse(quarantineStamp, name[65:65+len(quarantineStamp)])
	return t, err == nil
}
