package tarball

import (
	"os"
	"path"
)

// maxDirHandles bounds the folder handles a Writer keeps open. Archives
// and git trees list a folder's entries together, so the handles of the
// folder being written and its parents are nearly all a tree needs.
const maxDirHandles = 64

// dirHandles are open handles on folders below a Writer's root, so that
// creating an entry costs one openat/mkdirat on its folder instead of
// os.Root resolving every component of its path from the root again
// (one open and close per level, per entry). Each handle is opened from
// its parent's, one name at a time, with os.Root's rules: a name that is
// a symlink is never followed, so nothing reached through a handle is
// outside the root.
type dirHandles struct {
	root *os.Root
	open map[string]*os.Root // by slash path below root
}

func newDirHandles(root *os.Root) *dirHandles {
	return &dirHandles{root: root, open: map[string]*os.Root{}}
}

// dir returns a handle on folder rel ("." for the root).
func (h *dirHandles) dir(rel string) (*os.Root, error) {
	if rel == "." {
		return h.root, nil
	}
	if d, ok := h.open[rel]; ok {
		return d, nil
	}
	parent, err := h.dir(path.Dir(rel))
	if err != nil {
		return nil, err
	}
	d, err := parent.OpenRoot(path.Base(rel))
	if err != nil {
		return nil, err
	}
	if len(h.open) >= maxDirHandles {
		// parent stays usable only until here; d does not depend on it.
		h.closeAll()
	}
	h.open[rel] = d
	return d, nil
}

// in returns the handle on rel's folder and rel's last name, to create or
// remove rel through.
func (h *dirHandles) in(rel string) (*os.Root, string, error) {
	d, err := h.dir(path.Dir(rel))
	return d, path.Base(rel), err
}

// forget closes the handle on rel, if one is open: rel is being removed.
func (h *dirHandles) forget(rel string) {
	if d, ok := h.open[rel]; ok {
		_ = d.Close()
		delete(h.open, rel)
	}
}

// closeAll closes every handle but the root's.
func (h *dirHandles) closeAll() {
	for rel, d := range h.open {
		_ = d.Close()
		delete(h.open, rel)
	}
}
