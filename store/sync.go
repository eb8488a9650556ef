package store

import (
	"io/fs"
	"os"
	"path/filepath"
)

// syncEach fsyncs every file and directory below root, directories best
// effort as SyncDir does (some filesystems refuse them).
func syncEach(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			SyncDir(p)
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

// syncTree makes everything under root, a folder inside the store, durable
// before it is published: one syncfs(2) of the store's filesystem, shared
// with concurrent commits (see syncGroup), or, where the kernel has no
// syncfs, an fsync per entry of root.
func (s *Store) syncTree(root string) error {
	if err := s.syncs.sync(root); err == nil {
		return nil
	}
	return syncEach(root)
}

// SyncTrees makes everything under each root durable: one syncfs(2) of
// their filesystem where the kernel has it, else an fsync per entry of
// each. Callers that copy many files (the installer's staging) sync once
// here instead of once per file. The roots must share one filesystem.
func SyncTrees(roots []string) error {
	if len(roots) == 0 {
		return nil
	}
	if err := syncFS(roots[0]); err == nil {
		return nil
	}
	for _, r := range roots {
		if err := syncEach(r); err != nil {
			return err
		}
	}
	return nil
}
