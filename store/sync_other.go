//go:build !linux

package store

import "errors"

// syncTree makes everything under root durable, one fsync per entry (no
// syncfs(2) outside Linux).
func syncTree(root string) error {
	return syncEach(root)
}

// syncFS is unavailable outside Linux: callers fsync each entry instead.
func syncFS(string) error { return errors.ErrUnsupported }
