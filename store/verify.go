package store

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"reasonix.io/plugind"
)

// VerifyReport is the result of re-hashing the store.
type VerifyReport struct {
	Checked int           // snapshots re-hashed
	Bad     []BadSnapshot // problems found, in name order
}

// BadSnapshot names one problem. Digest is the snapshot's digest, or for a
// stray entry that is no snapshot, its path relative to the store.
type BadSnapshot struct {
	Digest  string
	Problem string
}

// Verify re-hashes every snapshot and reports each whose content no longer
// matches its name, that is no longer a plain read-only tree (symlinks,
// special files, write bits) or cannot be read, plus stray entries in the
// store that no snapshot explains. It changes nothing.
func (s *Store) Verify(ctx context.Context) (*VerifyReport, error) {
	rep := &VerifyReport{}
	top, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("verify store: %w", err)
	}
	for _, e := range top {
		switch e.Name() {
		case "snapshots", "staging", "locks", "trash", "quarantine":
		default:
			rep.Bad = append(rep.Bad, BadSnapshot{Digest: e.Name(), Problem: "stray entry in the store directory"})
		}
	}
	entries, err := os.ReadDir(s.snapshots)
	if err != nil {
		return nil, fmt.Errorf("verify store: %w", err)
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		digest := digestPrefix + e.Name()
		if ValidateDigest(digest) != nil {
			rep.Bad = append(rep.Bad, BadSnapshot{Digest: filepath.ToSlash(filepath.Join("snapshots", e.Name())), Problem: "stray entry: not named by a tree digest"})
			continue
		}
		if !e.IsDir() {
			rep.Bad = append(rep.Bad, BadSnapshot{Digest: digest, Problem: "not a directory"})
			continue
		}
		rep.Checked++
		if problems := s.check(digest); len(problems) > 0 {
			rep.Bad = append(rep.Bad, BadSnapshot{Digest: digest, Problem: strings.Join(problems, "; ")})
		}
	}
	return rep, nil
}

func (s *Store) check(digest string) []string {
	root := filepath.Join(s.snapshots, hexOf(digest))
	var problems []string
	got, _, err := plugind.TreeDigest(root, s.budget)
	switch {
	case err != nil:
		problems = append(problems, fmt.Sprintf("cannot be re-hashed: %v", err))
	case got != digest:
		problems = append(problems, fmt.Sprintf("content hashes to %s", got))
	}
	// The digest ignores symlinks' nature and modes; a committed snapshot
	// has neither links nor write bits, so any is a sign of tampering.
	const maxShapeProblems = 5
	var shape []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(shape) >= maxShapeProblems {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			shape = append(shape, rel+" is a symlink")
		case !d.IsDir() && !d.Type().IsRegular():
			shape = append(shape, rel+" is not a regular file")
		case d.Name() == ".git":
			shape = append(shape, rel+" is a .git entry")
		case info.Mode().Perm()&0o222 != 0:
			shape = append(shape, rel+" is writable")
		}
		return nil
	})
	return append(problems, shape...)
}
