//go:build linux

package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFS flushes the filesystem holding root with one syncfs(2).
func syncFS(root string) error {
	f, err := os.Open(root)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
