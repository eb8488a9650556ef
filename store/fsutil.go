package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// removeTree deletes a tree that may contain read-only directories (a
// snapshot, or a staging tree after makeReadOnly). Files need no write bit
// to be unlinked; their directories do.
func removeTree(root string) error {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			// An unreadable directory: make it writable and readable, then
			// let RemoveAll below try.
			_ = os.Chmod(p, 0o755)
			return nil
		}
		if d.IsDir() {
			// Before WalkDir reads it, so a 0555 (or worse) dir is opened.
			return os.Chmod(p, 0o755)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.RemoveAll(root)
}

// makeReadOnly strips every write bit below root (not root itself: moving
// a directory to a new parent needs write permission on it, for its ".."),
// keeping the executable bit of files.
func makeReadOnly(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if d.IsDir() {
			return os.Chmod(p, 0o555)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o444)
		if info.Mode()&0o111 != 0 {
			mode = 0o555
		}
		return os.Chmod(p, mode)
	})
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
