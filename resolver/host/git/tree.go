package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/tarball"
)

const (
	// maxTreeObject bounds a commit or tree object, which is decoded whole
	// (a tree this size lists some hundred thousand entries).
	maxTreeObject = 8 << 20
	// maxLinkTarget bounds a symlink blob: a target is a path.
	maxLinkTarget = 4096
)

// writeCommitTree writes the tree of commit into dest through a
// tarball.Writer: the same name checks, link materialization, os.Root
// confinement and budgets as an archive of the same commit, so the verdict
// and the digest do not depend on the transport. Every object comes from
// the pack index that hashed it (no second reader, no second delta
// resolution): blob sizes are known before content is read, so an
// oversized file is refused before a byte of it is written.
func writeCommitTree(ctx context.Context, px *packIndex, commit plumbing.Hash, dest string, opts host.FetchOptions, budget plugind.Budget) (*tarball.Result, error) {
	tw := &treeWalker{ctx: ctx, px: px, include: tarball.Keeps(opts.Paths), kept: keptFolders(opts.Paths), trees: map[string]string{}}
	var c object.Commit
	if err := tw.decode(commit, plumbing.CommitObject, &c); err != nil {
		return nil, unreadable(err, "read commit %s", commit)
	}
	tree, err := tw.tree(c.TreeHash)
	if err != nil {
		return nil, unreadable(err, "read the tree of %s", commit)
	}
	release, err := opts.Writing(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	w, err := tarball.NewWriter(ctx, dest, tarball.Options{Budget: budget, Paths: opts.Paths, Submodules: opts.Submodules, Progress: opts.Progress, Hash: opts.Hash, ReadOnly: opts.Hash})
	if err != nil {
		return nil, err
	}
	tw.w = w
	if err := tw.walk(tree, ""); err != nil {
		return nil, w.Abort(err)
	}
	res, err := w.Finish()
	if err != nil {
		return nil, w.Abort(err)
	}
	res.GitTrees = tw.trees
	res.GitTrees[""] = c.TreeHash.String()
	return res, nil
}

// keptFolders are the folders of paths whose tree ids Result.GitTrees
// reports; nil, every folder's, when paths keep the whole tree.
func keptFolders(paths []string) map[string]bool {
	if tarball.Keeps(paths) == nil {
		return nil
	}
	out := map[string]bool{}
	for _, p := range paths {
		if p != "" && p != "." {
			out[p] = true
		}
	}
	return out
}

type treeWalker struct {
	ctx     context.Context
	px      *packIndex
	w       *tarball.Writer
	include func(string) bool // nil: everything
	// kept are the folders whose ids trees records, as the walk meets
	// them (nil: every folder): git names every tree, so the ids are the
	// commit's by construction.
	kept  map[string]bool
	trees map[string]string
}

// object finds a resolved object of the pack; plumbing.ErrObjectNotFound
// when the pack does not hold it (or left it unread for its size).
func (tw *treeWalker) object(h plumbing.Hash) (int32, *packObject, error) {
	i, ok := tw.px.find(h)
	if !ok {
		return 0, nil, plumbing.ErrObjectNotFound
	}
	return i, &tw.px.objects[i], nil
}

// decode reads object h, which must be of type typ, into into (a commit or
// a tree).
func (tw *treeWalker) decode(h plumbing.Hash, typ plumbing.ObjectType, into object.Object) error {
	i, o, err := tw.object(h)
	if err != nil {
		return err
	}
	if o.typ != typ {
		return fmt.Errorf("object %s is a %s, not a %s", h, o.typ, typ)
	}
	if o.size() > maxTreeObject {
		return plugind.Errorf(plugind.CodeBudgetExceeded, "%s %s is %s, more than the %s a %s may take", typ, h, plugind.HumanBytes(o.size()), plugind.HumanBytes(maxTreeObject), typ)
	}
	rc, err := tw.px.open(tw.ctx, i)
	if err != nil {
		return err
	}
	defer rc.Close()
	mo := &plumbing.MemoryObject{}
	mo.SetType(typ)
	if _, err := io.Copy(mo, io.LimitReader(rc, o.size())); err != nil {
		return err
	}
	return into.Decode(mo)
}

func (tw *treeWalker) tree(h plumbing.Hash) (*object.Tree, error) {
	var t object.Tree
	if err := tw.decode(h, plumbing.TreeObject, &t); err != nil {
		return nil, err
	}
	return &t, nil
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
			// Its commit is not in this pack: the Writer fetches it.
			err = tw.w.Gitlink(name, e.Hash.String())
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
	if tw.kept == nil || tw.kept[name] {
		tw.trees[name] = h.String()
	}
	sub, err := tw.tree(h)
	if err != nil {
		return tw.missing(name, err)
	}
	return tw.walk(sub, name)
}

func (tw *treeWalker) file(name string, exec bool, h plumbing.Hash) error {
	if tw.include != nil && !tw.include(name) && name != ".gitmodules" {
		// Name-checked by the Writer, never read: its blob may well be one
		// the pack index left out for its size. (.gitmodules is read
		// wherever it is: it says where submodules come from.)
		return tw.w.File(name, exec, -1, strings.NewReader(""))
	}
	i, o, err := tw.object(h)
	if err != nil {
		return tw.missing(name, err)
	}
	lb := &lazyBlob{tw: tw, i: i}
	defer lb.close()
	return tw.w.File(name, exec, o.size(), lb)
}

func (tw *treeWalker) symlink(name string, h plumbing.Hash) error {
	i, o, err := tw.object(h)
	if err != nil {
		return tw.missing(name, err)
	}
	if o.size() > maxLinkTarget {
		return plugind.Errorf(plugind.CodeUnsafeArchive, "refusing entry %q: a symlink whose target is %d bytes long", name, o.size())
	}
	rc, err := tw.px.open(tw.ctx, i)
	if err != nil {
		return unreadable(err, "read link %q", name)
	}
	defer rc.Close()
	target, err := io.ReadAll(io.LimitReader(rc, maxLinkTarget))
	if err != nil {
		return unreadable(err, "read link %q", name)
	}
	return tw.w.Symlink(name, string(target))
}

// missing explains an object the pack did not give us: left unread for its
// size, or absent.
func (tw *treeWalker) missing(name string, err error) error {
	if errors.Is(err, plumbing.ErrObjectNotFound) && tw.px.TooBig > 0 {
		return plugind.Errorf(plugind.CodeBudgetExceeded, "entry %q: its content is larger than the size budget (%d objects in the pack were too large to read)", name, tw.px.TooBig)
	}
	return unreadable(err, "entry %q (%s)", name, path.Base(name))
}

// unreadable says what could not be read, as unreadable source, unless the
// error already says why with a code of its own (a budget, a corrupt pack).
func unreadable(err error, format string, args ...any) error {
	if plugind.CodeOf(err) != "" {
		return fmt.Errorf(format+": %w", append(args, err)...)
	}
	return plugind.Errorf(plugind.CodeSourceUnreadable, format+": %w", append(args, err)...)
}

// lazyBlob opens the blob on first read, so a blob the Writer leaves out
// (outside the kept paths) is never read at all.
type lazyBlob struct {
	tw *treeWalker
	i  int32
	rc io.ReadCloser
}

func (l *lazyBlob) Read(p []byte) (int, error) {
	if l.rc == nil {
		rc, err := l.tw.px.open(l.tw.ctx, l.i)
		if err != nil {
			return 0, fmt.Errorf("open blob %s: %w", l.tw.px.objects[l.i].hash, err)
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
