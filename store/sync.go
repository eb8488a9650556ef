package store

import (
	"io/fs"
	"os"
	"path/filepath"

	"reasonix.io/plugind"
)

// syncEach fsyncs every file and directory below root, directories best
// effort as plugind.SyncDir does (some filesystems refuse them).
func syncEach(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			plugind.SyncDir(p)
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
