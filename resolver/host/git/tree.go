package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/tarball"
)

const (
	// largeObject: blobs above this are streamed from the pack, never held.
	largeObject = 1 << 20
	// objectCacheBytes bounds go-git's decoded-object cache (trees mostly).
	objectCacheBytes = 8 << 20
	// maxLinkTarget bounds a symlink blob: a target is a path.
	maxLinkTarget = 4096
)

// writeCommitTree writes the tree of commit into dest through a
// tarball.Writer: the same name checks, link materialization, os.Root
// confinement and budgets as an archive of the same commit, so the verdict
// and the digest do not depend on the transport. Blob sizes are known from
// the pack before content is read, so an oversized file is refused before a
// byte of it is written.
func writeCommitTree(ctx context.Context, gitDir string, commit plumbing.Hash, dest string, opts host.FetchOptions, budget plugind.Budget, tooBig int) (*tarball.Result, error) {
	st := filesystem.NewStorageWithOptions(osfs.New(gitDir), cache.NewObjectLRU(objectCacheBytes),
		filesystem.Options{LargeObjectThreshold: largeObject})
	defer st.Close()
	c, err := object.GetCommit(st, commit)
	if err != nil {
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "read commit %s: %w", commit, err)
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "read the tree of %s: %w", commit, err)
	}
	w, err := tarball.NewWriter(ctx, dest, tarball.Options{Budget: budget, Include: host.IncludeFunc(opts.Paths), Progress: opts.Progress, Hash: opts.Hash, ReadOnly: opts.Hash})
	if err != nil {
		return nil, err
	}
	tw := &treeWalker{ctx: ctx, st: st, w: w, tooBig: tooBig, include: host.IncludeFunc(opts.Paths)}
	if err := tw.walk(tree, ""); err != nil {
		return nil, w.Abort(err)
	}
	res, err := w.Finish()
	if err != nil {
		return nil, w.Abort(err)
	}
	return res, nil
}

type treeWalker struct {
	ctx     context.Context
	st      *filesystem.Storage
	w       *tarball.Writer
	tooBig  int
	include func(string) bool // nil: everything
}

func (tw *treeWalker) walk(t *object.Tree, prefix string) error {
	for _, e := range t.Entries {
		if err := tw.ctx.Err(); err != nil {
			return err
		}
		// Names are joined verbatim: a hostile entry such as "..", "a/b"
		// or "" reaches the Writer's checks as the path it would make.
		name := e.Name
		if prefix != "" {
			name = prefix + "/" + e.Name
		}
		var err error
		switch e.Mode {
		case filemode.Dir:
			err = tw.dir(name, e.Hash)
		case filemode.Submodule:
			// Not part of a snapshot; recorded as the empty folder an
			// archive of the same commit holds, so names still collide.
			err = tw.w.Dir(name + "/")
		case filemode.Symlink:
			err = tw.symlink(name, e.Hash)
		case filemode.Regular, filemode.Executable, filemode.Deprecated:
			err = tw.file(name, e.Mode == filemode.Executable, e.Hash)
		default:
			err = plugind.Errorf(plugind.CodeUnsafeArchive, "refusing entry %q: git mode %s is not a file, folder, link or submodule", name, e.Mode)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (tw *treeWalker) dir(name string, h plumbing.Hash) error {
	if err := tw.w.Dir(name + "/"); err != nil {
		return err
	}
	sub, err := object.GetTree(tw.st, h)
	if err != nil {
		return tw.missing(name, err)
	}
	return tw.walk(sub, name)
}

func (tw *treeWalker) file(name string, exec bool, h plumbing.Hash) error {
	if tw.include != nil && !tw.include(name) {
		// Name-checked by the Writer, never read: its blob may well be one
		// the pack index left out for its size.
		return tw.w.File(name, exec, -1, eofReader{})
	}
	blob, err := object.GetBlob(tw.st, h)
	if err != nil {
		return tw.missing(name, err)
	}
	lb := &lazyBlob{blob: blob}
	defer lb.close()
	return tw.w.File(name, exec, blob.Size, lb)
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

func (tw *treeWalker) symlink(name string, h plumbing.Hash) error {
	blob, err := object.GetBlob(tw.st, h)
	if err != nil {
		return tw.missing(name, err)
	}
	if blob.Size > maxLinkTarget {
		return plugind.Errorf(plugind.CodeUnsafeArchive, "refusing entry %q: a symlink whose target is %d bytes long", name, blob.Size)
	}
	rc, err := blob.Reader()
	if err != nil {
		return plugind.Errorf(plugind.CodeSourceUnreadable, "read link %q: %w", name, err)
	}
	defer rc.Close()
	target, err := io.ReadAll(io.LimitReader(rc, maxLinkTarget))
	if err != nil {
		return plugind.Errorf(plugind.CodeSourceUnreadable, "read link %q: %w", name, err)
	}
	return tw.w.Symlink(name, string(target))
}

// missing explains an object the pack did not give us: left unread for its
// size, or absent.
func (tw *treeWalker) missing(name string, err error) error {
	if errors.Is(err, plumbing.ErrObjectNotFound) && tw.tooBig > 0 {
		return plugind.Errorf(plugind.CodeBudgetExceeded, "entry %q: its content is larger than the size budget (%d objects in the pack were too large to read)", name, tw.tooBig)
	}
	return plugind.Errorf(plugind.CodeSourceUnreadable, "entry %q (%s): %w", name, path.Base(name), err)
}

// lazyBlob opens the blob on first read, so a blob the Writer leaves out
// (outside the kept paths) is never read at all.
type lazyBlob struct {
	blob *object.Blob
	rc   io.ReadCloser
}

func (l *lazyBlob) Read(p []byte) (int, error) {
	if l.rc == nil {
		rc, err := l.blob.Reader()
		if err != nil {
			return 0, fmt.Errorf("open blob %s: %w", l.blob.Hash, err)
		}
		l.rc = rc
	}
	return l.rc.Read(p)
}

func (l *lazyBlob) close() {
	if l.rc != nil {
		l.rc.Close()
	}
}
