// Package dirhandle keeps open handles on the folders a writer creates
// entries in, so that creating an entry costs one openat or mkdirat on
// its folder instead of os.Root resolving every component of its path
// from the root again (one open and close per level, per entry).
package dirhandle

import (
	"os"
	"path"
)

// Max bounds the handles kept open. Archives, git trees and tree walks
// list a folder's entries together, so the handles of the folder being
// written and its parents are nearly all a tree needs.
const Max = 64

// Handles are open handles on folders below a root. Each is opened from
// its parent's, one name at a time, with os.Root's rules: a name that is
// a symlink is never followed, so nothing reached through a handle is
// outside the root. Not safe for concurrent use.
type Handles struct {
	root *os.Root
	open map[string]*os.Root // by slash path below root
}

// New keeps handles below root; root itself stays the caller's to close.
func New(root *os.Root) *Handles {
	return &Handles{root: root, open: map[string]*os.Root{}}
}

// Dir returns a handle on folder rel ("." for the root).
func (h *Handles) Dir(rel string) (*os.Root, error) {
	if rel == "." {
		return h.root, nil
	}
	if d, ok := h.open[rel]; ok {
		return d, nil
	}
	parent, err := h.Dir(path.Dir(rel))
	if err != nil {
		return nil, err
	}
	d, err := parent.OpenRoot(path.Base(rel))
	if err != nil {
		return nil, err
	}
	if len(h.open) >= Max {
		// parent stays usable only until here; d does not depend on it.
		h.Close()
	}
	h.open[rel] = d
	return d, nil
}

// In returns the handle on rel's folder and rel's last name, to create or
// remove rel through.
func (h *Handles) In(rel string) (*os.Root, string, error) {
	d, err := h.Dir(path.Dir(rel))
	return d, path.Base(rel), err
}

// Forget closes the handle on rel, if one is open: rel is being removed.
func (h *Handles) Forget(rel string) {
	if d, ok := h.open[rel]; ok {
		_ = d.Close()
		delete(h.open, rel)
	}
}

// Close closes every handle but the root's.
func (h *Handles) Close() {
	for rel, d := range h.open {
		_ = d.Close()
		delete(h.open, rel)
	}
}
