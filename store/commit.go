package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"reasonix.io/plugind"
)

// Commit turns a staged tree into a snapshot and returns its digest.
//
// The tree is scanned within the store's budget (an excess fails with
// plugind.CodeBudgetExceeded before any content is read), hashed, normalized
// to exactly what the digest covers (in-tree symlinks become regular files,
// .git and empty directories go), made durable, made read-only and renamed
// to snapshots/<hex>. If that snapshot already exists the staged copy is
// dropped and the existing one kept. Whatever happens, the staging area is
// gone when Commit returns, and on error nothing was added to snapshots/.
func (s *Store) Commit(ctx context.Context, st *Staging) (string, error) {
	if st == nil {
		return "", errors.New("commit snapshot: nil staging area")
	}
	return s.CommitDir(ctx, st, st.Dir)
}

// CommitDir is Commit for a directory anywhere inside st's staging area
// (st.Dir, a st.Path, or a folder below either), such as the one root
// folder an archive wraps its content in. The whole staging area goes
// afterwards, as with Commit.
func (s *Store) CommitDir(ctx context.Context, st *Staging, dir string) (string, error) {
	return s.committing(st, func() (string, error) {
		if err := st.contains(dir); err != nil {
			return "", err
		}
		return s.commit(ctx, dir)
	})
}

// committing runs commit, which makes a snapshot of what st holds, for
// Commit, CommitDir and CommitHashed: st must be this store's staging area,
// not committed or discarded yet, and goes afterwards whatever happened.
func (s *Store) committing(st *Staging, commit func() (string, error)) (digest string, err error) {
	if st == nil || st.s != s {
		return "", errors.New("commit snapshot: staging area does not belong to this store")
	}
	if st.done {
		return "", errors.New("commit snapshot: staging area already committed or discarded")
	}
	defer func() {
		if derr := st.Discard(); derr != nil && err == nil {
			err = derr
		}
	}()
	digest, err = commit()
	if err != nil {
		return "", fmt.Errorf("commit snapshot: %w", err)
	}
	return digest, nil
}

func (s *Store) commit(ctx context.Context, dir string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	// Dir itself must be a real directory: were it a symlink, the scan would
	// follow it and the rename below would pull a tree from elsewhere in.
	info, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", plugind.Errorf(plugind.CodeSourceUnreadable, "nothing was staged in %s", dir)
	case err != nil:
		return "", plugind.Errorf(plugind.CodeSourceUnreadable, "read %s: %w", dir, err)
	case !info.IsDir():
		return "", plugind.Errorf(plugind.CodeUnsafeArchive, "staged %s is a %s, not a directory", dir, info.Mode().Type())
	}
	tree, err := plugind.ScanTree(dir, s.budget)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	digest, err := tree.Hash()
	if err != nil {
		return "", err
	}
	hex := hexOf(digest)
	final := filepath.Join(s.snapshots, hex)
	if exists(final) {
		s.markUsed(final)
		return digest, nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := normalize(tree); err != nil {
		return "", fmt.Errorf("normalize %s: %w", digest, err)
	}
	if err := makeReadOnly(tree.Root); err != nil {
		return "", fmt.Errorf("make %s read-only: %w", digest, err)
	}
	if err := s.syncTree(tree.Root); err != nil {
		return "", fmt.Errorf("sync %s: %w", digest, err)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}

	return digest, s.publish(ctx, tree.Root, final, hex)
}

// publish renames a complete, synced, read-only tree to final under the
// digest's lock, keeping a snapshot someone else committed first.
func (s *Store) publish(ctx context.Context, root, final, hex string) error {
	lock, err := s.lockDigest(ctx, hex)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	// Someone may have committed the same content while we prepared ours.
	if exists(final) {
		s.markUsed(final)
		return nil
	}
	if err := os.Rename(root, final); err != nil {
		// A committer that did not take our lock (or a lock file removed
		// under us) can still win the rename; renaming onto a non-empty
		// directory fails, and identical content is already there.
		if exists(final) {
			return nil
		}
		return fmt.Errorf("publish %s: %w", filepath.Base(final), err)
	}
	now := time.Now()
	_ = os.Chtimes(final, now, now) // ModTime is the commit time; GC falls back to it
	if err := os.Chmod(final, 0o555); err != nil {
		return fmt.Errorf("publish %s: %w", filepath.Base(final), err)
	}
	SyncDir(final) // its mode
	SyncDir(s.snapshots)
	return nil
}

// markUsed bumps a snapshot's ModTime when a commit finds it already
// stored, so a GC running before the caller records the use does not take
// it for old.
func (s *Store) markUsed(final string) {
	now := time.Now()
	_ = os.Chtimes(final, now, now)
}

// normalize makes the staged tree hold exactly the files tree lists: in-tree
// symlinks (which tree lists with their target's bytes: a file's, or every
// file of a folder's) become regular copies, and .git entries and empty
// directories, which the digest ignores, are removed. Stored snapshots are
// then plain trees any reader can trust.
func normalize(tree *plugind.Tree) error {
	var dirs, gits, links []string
	err := filepath.WalkDir(tree.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == tree.Root {
			return nil
		}
		switch {
		case d.Name() == ".git":
			gits = append(gits, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
		case d.Type()&fs.ModeSymlink != 0:
			links = append(links, p)
		case d.IsDir():
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Every Source is a real path (ScanTree never lists a file through a
	// link), so the links can go first, and a folder link's files are then
	// copied into a real folder of its name: nothing is at a copy's path.
	for _, l := range links {
		if err := os.Remove(l); err != nil {
			return fmt.Errorf("remove symlink %s: %w", l, err)
		}
	}
	for _, f := range tree.Files {
		p := filepath.Join(tree.Root, filepath.FromSlash(f.Path))
		if f.Source == p {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("materialize symlink %s: %w", f.Path, err)
		}
		if err := CopyFile(f.Source, p, f.Executable, nil, nil, false); err != nil {
			return fmt.Errorf("materialize symlink %s: %w", f.Path, err)
		}
	}
	for _, g := range gits {
		if err := removeTree(g); err != nil {
			return fmt.Errorf("remove %s: %w", g, err)
		}
	}
	// Pre-order reversed visits children before parents, so nested empty
	// directories collapse in one pass.
	for i := len(dirs) - 1; i >= 0; i-- {
		entries, err := os.ReadDir(dirs[i])
		if err != nil {
			return err
		}
		if len(entries) == 0 {
			if err := os.Remove(dirs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Ingest copies a local directory into the store (symlinks to in-tree files
// materialized, .git left out) and commits it. The copy, not srcDir, is
// what gets hashed, so a source changing underneath cannot produce a
// snapshot whose name lies about its content.
func (s *Store) Ingest(ctx context.Context, srcDir string) (string, error) {
	tree, err := plugind.ScanTree(srcDir, s.budget)
	if err != nil {
		return "", fmt.Errorf("ingest %s: %w", srcDir, err)
	}
	st, err := s.Stage()
	if err != nil {
		return "", fmt.Errorf("ingest %s: %w", srcDir, err)
	}
	if _, err := CopyTree(ctx, tree, st.Dir, make([]byte, 256<<10), true); err != nil {
		_ = st.Discard()
		return "", plugind.WithCode(plugind.CodeSourceUnreadable, fmt.Errorf("ingest %s: %w", srcDir, err))
	}
	d, err := s.Commit(ctx, st)
	if err != nil {
		return "", fmt.Errorf("ingest %s: %w", srcDir, err)
	}
	return d, nil
}
