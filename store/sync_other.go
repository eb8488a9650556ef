//go:build !linux

package store

// syncTree makes everything under root durable, one fsync per entry (no
// syncfs(2) outside Linux).
func syncTree(root string) error {
	return syncEach(root)
}
