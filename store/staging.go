package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"reasonix.io/plugind"
)

// Staging is a private place to build one snapshot before Commit.
//
// Dir does NOT exist when Stage returns: it is a not-yet-created child of a
// fresh, randomly named directory under staging/. Writers that create their
// destination themselves (the tarball extractor, CopyTree, a git
// checkout) are handed Dir as is and the result is committed with Commit.
// Path names further not-yet-created places in the same area, and
// CommitDir commits any directory inside it (say, the single root folder
// of an archive). A Staging is used by one goroutine at a time.
type Staging struct {
	Dir  string
	root string // staging/st-*, removed by Commit or Discard
	s    *Store
	done bool
}

// Stage reserves a fresh staging area.
func (s *Store) Stage() (*Staging, error) {
	root, err := os.MkdirTemp(s.staging, "st-")
	if err != nil {
		// Nothing can be fetched without a place to put it: say where and
		// what to check, not just the system call that failed.
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "the snapshot store cannot take new content: creating a staging folder in %s failed (%w); check its permissions and free space", s.staging, err)
	}
	return &Staging{Dir: filepath.Join(root, "tree"), root: root, s: s}, nil
}

// Path returns the path of name inside the staging area; it does not exist
// yet. name is one path element; anything else (empty, ".", "..", a
// separator) gives "", which no writer can create and CommitDir refuses.
func (st *Staging) Path(name string) string {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || !fs.ValidPath(name) {
		return ""
	}
	return filepath.Join(st.root, name)
}

// Discard removes the staging area and everything in it. It is safe to call
// more than once, and after Commit.
func (st *Staging) Discard() error {
	if st.done {
		return nil
	}
	st.done = true
	if err := removeTree(st.root); err != nil {
		return fmt.Errorf("discard staging %s: %w", st.root, err)
	}
	return nil
}

// contains checks that dir is strictly inside the staging area, lexically
// and with symlinks resolved, so a commit can only ever move staged content.
func (st *Staging) contains(dir string) error {
	if dir == "" {
		return errors.New("no directory to commit")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(st.root, abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%s is not inside the staging area %s", dir, st.root)
	}
	// Resolve the parent only: dir itself may not exist (nothing staged),
	// which the commit reports on its own, and a symlink as its last
	// element is refused there.
	realRoot, err := filepath.EvalSymlinks(st.root)
	if err != nil {
		return fmt.Errorf("staging area %s: %w", st.root, err)
	}
	realParent, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if want := filepath.Join(realRoot, filepath.Dir(rel)); realParent != want {
		return fmt.Errorf("%s leaves the staging area through a symlink", dir)
	}
	return nil
}
