package store

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"reasonix.io/plugind"
)

// CommitHashed is Commit for a tree whose writer hashed every file as it
// wrote it into st.Dir (tarball.Options.Hash; files as tarball.Result.Tree
// lists them, dirs as Result.Dirs): the staging area is private to this
// process, so the list is trusted and the tree is neither walked nor read
// back (issue 13: a tree is hashed once). Files should already be
// read-only (tarball.Options.ReadOnly); directories are made read-only
// here. A list naming a .git entry, or a file outside st.Dir, falls back to
// Commit, which scans the tree from disk.
func (s *Store) CommitHashed(ctx context.Context, st *Staging, files []plugind.File, dirs []string) (string, error) {
	if st != nil && !trustedList(st.Dir, files, dirs) {
		return s.Commit(ctx, st)
	}
	return s.committing(st, func() (string, error) { return s.commitHashed(ctx, st.Dir, files, dirs) })
}

// trustedList reports whether files and dirs describe a tree below root
// that CommitHashed can take as it is: every file hashed and below root,
// nothing a snapshot leaves out (.git).
func trustedList(root string, files []plugind.File, dirs []string) bool {
	return !slices.ContainsFunc(files, func(f plugind.File) bool {
		return f.SHA256 == "" || hasGitSegment(f.Path) || f.Source != filepath.Join(root, filepath.FromSlash(f.Path))
	}) && !slices.ContainsFunc(dirs, hasGitSegment)
}

func hasGitSegment(p string) bool { return slices.Contains(strings.Split(p, "/"), ".git") }

func (s *Store) commitHashed(ctx context.Context, root string, files []plugind.File, dirs []string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var bytes int64
	for _, f := range files {
		bytes += f.Size
	}
	if err := s.budget.Check(len(files), bytes); err != nil {
		return "", err
	}
	if len(files) == 0 {
		// The same refusal as a scan of an empty staged tree gives.
		if _, err := os.Lstat(root); err != nil {
			return "", plugind.Errorf(plugind.CodeSourceUnreadable, "nothing was staged in %s", root)
		}
	}
	digest := plugind.DigestFiles(files)
	hex := hexOf(digest)
	final := filepath.Join(s.snapshots, hex)
	if exists(final) {
		s.markUsed(final)
		return digest, nil
	}
	// Empty directories go (the digest does not see them); the others
	// lose their write bits, deepest first so a parent is still writable
	// while its children change.
	needed := map[string]bool{}
	for _, f := range files {
		for d := path.Dir(f.Path); d != "." && !needed[d]; d = path.Dir(d) {
			needed[d] = true
		}
	}
	sorted := append([]string(nil), dirs...)
	sort.Slice(sorted, func(i, j int) bool { return strings.Count(sorted[i], "/") > strings.Count(sorted[j], "/") })
	for _, d := range sorted {
		p := filepath.Join(root, filepath.FromSlash(d))
		if !needed[d] {
			if err := os.Remove(p); err != nil {
				return "", fmt.Errorf("normalize %s: remove empty %s: %w", digest, d, err)
			}
			continue
		}
		if err := os.Chmod(p, 0o555); err != nil {
			return "", fmt.Errorf("make %s read-only: %w", digest, err)
		}
	}
	if err := s.syncTree(root); err != nil {
		return "", fmt.Errorf("sync %s: %w", digest, err)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return digest, s.publish(ctx, root, final, hex)
}
