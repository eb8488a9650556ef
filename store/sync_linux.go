//go:build linux

package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncTree makes everything under root durable. One syncfs(2) flushes the
// whole filesystem, far cheaper than an fsync per file of a large tree; if
// the kernel refuses it, fall back to fsyncing each entry.
func syncTree(root string) error {
	if err := syncFS(root); err == nil {
		return nil
	}
	return syncEach(root)
}

// syncFS flushes the filesystem holding root with one syncfs(2).
func syncFS(root string) error {
	f, err := os.Open(root)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
