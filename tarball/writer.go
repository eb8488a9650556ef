package tarball

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/dirhandle"
)

// Writer materializes a tree into a fresh directory one entry at a time, with
// every refusal and budget of SPEC §8. The archive readers feed it archive
// members; the git host feeds it tree entries, so a commit gets the same
// verdict and the same files whichever transport brought it.
//
// Every write goes through an os.Root opened on the destination, and the
// Writer never creates a symlink: links are recorded and materialized as
// regular files by Finish, after every regular file exists. So no path
// component the tree itself created can ever be followed out of the
// destination, and an entry named through a "symlink" that shares its name
// with a directory is refused as a file/directory conflict by the PathSet.
type Writer struct {
	ctx     context.Context
	dest    string
	root    *os.Root
	handles *dirhandle.Handles // open folders below root, to create entries through
	opts    Options
	budget  plugind.Budget
	expect  string // lower-case ExpectCommit, or ""

	sel   selection // Options.Paths
	paths plugind.PathSet
	made  map[string]bool // directories created below dest
	links []pendingLink

	// Submodules: the gitlinks recorded, .gitmodules as read (even when
	// it is not kept: it says where they come from), and what was written.
	gitlinks   []gitlink
	gitmodules *gitmodulesCopy
	subs       []plugind.Submodule
	// subFolders are the submodule folders whose content this pass did not
	// fetch whole (false) or at all (absent from a fetched list): a link
	// into one needs that content (submodules.go).
	subFolders map[string]bool

	stripRoot string // the top-level directory being stripped
	rootSeen  bool
	commit    string

	files    int
	dirs     int
	bytes    int64
	reported int64

	buf []byte

	// With Options.Hash: the sha256 of each written file, by rel path,
	// and the directories made, in creation order (parents first).
	sums    map[string]writtenFile
	dirList []string

	// git hashes the tree as git does, with Options.GitTree (gittree.go).
	git *gitTree
}

// writtenFile is a file as Options.Hash reports it.
type writtenFile struct {
	sum  string
	size int64
	exec bool
}

// NewWriter validates opts and creates dest, which must not exist (its
// parent must).
func NewWriter(ctx context.Context, dest string, opts Options) (*Writer, error) {
	expect, err := opts.expectedCommit()
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(dest, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("extract into %s: the destination already exists", dest)
		}
		return nil, fmt.Errorf("extract into %s: %w", dest, err)
	}
	root, err := os.OpenRoot(dest)
	if err != nil {
		_ = os.Remove(dest)
		return nil, fmt.Errorf("extract into %s: %w", dest, err)
	}
	x := &Writer{
		ctx:        ctx,
		dest:       dest,
		root:       root,
		handles:    dirhandle.New(root),
		opts:       opts,
		budget:     opts.Budget.OrDefault(),
		expect:     expect,
		sel:        newSelection(opts.Paths),
		made:       map[string]bool{".": true},
		subFolders: map[string]bool{},
		buf:        make([]byte, bufSize),
	}
	if opts.Hash {
		x.sums = map[string]writtenFile{}
	}
	if opts.GitTree {
		x.git = newGitTree()
	}
	return x, nil
}

// Abort removes everything the Writer wrote and returns err.
func (x *Writer) Abort(err error) error {
	x.handles.Close()
	_ = x.root.Close()
	if rmErr := os.RemoveAll(x.dest); rmErr != nil {
		return fmt.Errorf("%w (and removing the partial extraction failed: %v)", err, rmErr)
	}
	return err
}

func unsafeEntry(name, format string, args ...any) error {
	return plugind.Errorf(plugind.CodeUnsafeArchive, "refusing entry %q: %s", name, fmt.Sprintf(format, args...))
}

// refuseAt is unsafeEntry for an entry whose place in the tree, rel, is
// known: the refusal says which folder it spoils (EntryError).
func refuseAt(rel, name, format string, args ...any) error {
	return &EntryError{Path: rel, Err: unsafeEntry(name, format, args...)}
}

// EntryError is a refusal of one entry of the tree, at Path: a caller that
// fetched several folders at once can tell which one it spoils and keep
// the others.
type EntryError struct {
	Path string
	Err  error
}

func (e *EntryError) Error() string { return e.Err.Error() }
func (e *EntryError) Unwrap() error { return e.Err }

// PathOf returns the path of the tree err is about, when it is about one
// entry (a refused entry, a submodule that could not be fetched).
func PathOf(err error) (string, bool) {
	if ee, ok := errors.AsType[*EntryError](err); ok {
		return ee.Path, true
	}
	if se, ok := errors.AsType[*SubmoduleError](err); ok {
		return se.Path, true
	}
	return "", false
}

// corrupt reports damaged input: "archive truncated or corrupt: <where>:
// <cause>"; a cause with a code of its own keeps it. A read that failed
// because the extraction's context ended is that, not damage.
func (x *Writer) corrupt(cause error, format string, args ...any) error {
	if err := x.ctx.Err(); err != nil {
		return err
	}
	where := ""
	if format != "" {
		where = fmt.Sprintf(format, args...) + ": "
	}
	if plugind.CodeOf(cause) != "" {
		// The reader already said what went wrong (a git pack over its
		// budget): that is the verdict.
		return fmt.Errorf("%s%w", where, cause)
	}
	return plugind.Errorf(plugind.CodeSourceUnreadable, "archive truncated or corrupt: %s%w", where, cause)
}

// place turns an entry name into its path below dest, applying StripRoot.
// skip reports an entry that is the tree root or the stripped top-level
// directory itself.
func (x *Writer) place(name string, isDir bool) (rel string, skip bool, err error) {
	p, err := plugind.CleanEntryName(name, isDir)
	if err != nil {
		return "", false, unsafeEntry(name, "%v", err)
	}
	if p == "." {
		return "", true, nil
	}
	if !x.opts.StripRoot {
		return p, false, nil
	}
	root, rest, _ := strings.Cut(p, "/")
	if rest == "" && !isDir {
		return "", false, unsafeEntry(name, "a file at the top level of an archive that must hold a single top-level directory")
	}
	if err := x.setRoot(root, name); err != nil {
		return "", false, err
	}
	return rest, rest == "", nil
}

func (x *Writer) setRoot(root, name string) error {
	if x.rootSeen {
		if root != x.stripRoot {
			return unsafeEntry(name, "a second top-level directory %q (the archive must hold only %q)", root, x.stripRoot)
		}
		return nil
	}
	if x.expect != "" && !hasSuffixFold(root, "-"+x.expect[:7]) {
		return unsafeEntry(name, "the archive root %q does not match commit %s (expected a name ending in %q)", root, x.expect, "-"+x.expect[:7])
	}
	x.stripRoot, x.rootSeen = root, true
	return nil
}

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && plugind.FoldKey(s[len(s)-len(suffix):]) == plugind.FoldKey(suffix)
}

// Comment checks a commit comment (pax global header or zip comment).
func (x *Writer) Comment(name, c string) error {
	if x.expect != "" && plugind.FoldKey(c) != plugind.FoldKey(x.expect) {
		return unsafeEntry(name, "the archive says it is commit %q, expected %s", c, x.expect)
	}
	if c = strings.ToLower(c); !plugind.IsCommitID(c) {
		return nil
	}
	if x.commit != "" && x.commit != c {
		return unsafeEntry(name, "the archive names two commits, %s and %s", x.commit, c)
	}
	x.commit = c
	return nil
}

// Dir records a directory entry.
func (x *Writer) Dir(name string) error {
	rel, skip, err := x.place(name, true)
	if err != nil || skip {
		return err
	}
	if _, err := x.paths.Add(rel, plugind.EntryDir); err != nil {
		return refuseAt(rel, name, "%v", err)
	}
	if x.git != nil {
		x.git.b.Dir(rel)
	}
	if !x.sel.keeps(rel) {
		return nil
	}
	return x.ensureDir(rel, name)
}

// ensureDir creates rel and its missing parents, one mkdir per new
// directory: the made set spares the stat calls MkdirAll would repeat for
// every file.
func (x *Writer) ensureDir(rel, name string) error {
	if x.made[rel] {
		return nil
	}
	if err := x.ensureDir(path.Dir(rel), name); err != nil {
		return err
	}
	x.dirs++
	if x.dirs > x.budget.MaxFiles {
		return plugind.Errorf(plugind.CodeBudgetExceeded, "entry %q: directory budget exceeded: %d directories, limit %d (over by %d)", name, x.dirs, x.budget.MaxFiles, x.dirs-x.budget.MaxFiles)
	}
	parent, base, err := x.handles.In(rel)
	if err == nil {
		err = parent.Mkdir(base, 0o755)
	}
	if err != nil {
		return confined(name, "create directory "+rel, err)
	}
	x.made[rel] = true
	if x.sums != nil {
		x.dirList = append(x.dirList, rel)
	}
	return nil
}

// confined reports a failed write; one that os.Root refused because it
// would leave the destination is an unsafe tree, not an I/O error.
func confined(name, what string, err error) error {
	if pe, ok := errors.AsType[*os.PathError](err); ok && pe.Err != nil && pe.Err.Error() == "path escapes from parent" {
		return unsafeEntry(name, "%s would leave the destination", what)
	}
	return fmt.Errorf("entry %q: %s: %w", name, what, err)
}

// countFile admits one more file against the file-count budget.
func (x *Writer) countFile(name string) error {
	x.files++
	if err := x.budget.Check(x.files, x.bytes); err != nil {
		return fmt.Errorf("entry %q: %w", name, err)
	}
	return nil
}

// File writes a regular file from r. declared is the size the source
// claims (-1 when unknown); the tar, zip and git readers all fail rather
// than deliver more or fewer bytes, so an entry that cannot fit is refused
// before anything is written, and the running count of bytes actually
// written is checked before every write as well. An entry Options.Paths
// leaves out is name-checked and dropped unread — but for .gitmodules,
// which says where submodules come from, and with Options.GitTree, which
// hashes every blob of the tree.
func (x *Writer) File(name string, exec bool, declared int64, r io.Reader) error {
	rel, _, err := x.place(name, false)
	if err != nil {
		return err
	}
	n, err := x.paths.Add(rel, plugind.EntryFile)
	if err != nil {
		return refuseAt(rel, name, "%v", err)
	}
	n.Exec = exec
	if rel == gitmodulesFile {
		r = x.keepGitmodules(r)
	}
	if !x.sel.keeps(rel) {
		switch {
		case x.git != nil:
			return x.skipBlob(rel, name, exec, declared, r)
		case rel == gitmodulesFile:
			_, err := io.Copy(io.Discard, r)
			return err
		}
		return nil
	}
	if err := x.countFile(name); err != nil {
		return err
	}
	if declared > 0 {
		if err := x.budget.Check(x.files, x.bytes+declared); err != nil {
			return fmt.Errorf("entry %q: %w", name, err)
		}
	}
	var sums []io.Writer
	var h hash.Hash
	if x.sums != nil {
		h = sha256.New()
		sums = append(sums, h)
	}
	if x.git != nil {
		var blob io.Writer
		if blob, r, err = x.git.startBlob(rel, name, declared, r); err != nil {
			return err
		}
		sums = append(sums, blob)
	}
	if err := x.ensureDir(path.Dir(rel), name); err != nil {
		return err
	}
	out, err := x.create(rel, exec)
	if err != nil {
		return confined(name, "create "+rel, err)
	}
	written, err := x.copy(out, r, name, sums)
	n.Size = written
	if h != nil {
		x.sums[rel] = writtenFile{sum: hex.EncodeToString(h.Sum(nil)), size: n.Size, exec: exec}
	}
	if cerr := out.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("entry %q: write %s: %w", name, rel, cerr)
	}
	if err == nil && x.git != nil {
		err = x.git.endBlob(rel, name, exec, declared, written)
	}
	if err != nil {
		return err
	}
	x.report(true)
	return nil
}

// create creates the new regular file rel (which must not exist),
// through the handle on its folder, read-only with Options.ReadOnly.
func (x *Writer) create(rel string, exec bool) (*os.File, error) {
	d, base, err := x.handles.In(rel)
	if err != nil {
		return nil, err
	}
	mode := plugind.FileMode(exec)
	if x.opts.ReadOnly {
		mode &^= 0o222
	}
	return d.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
}

// copy writes r to out, feeding each of sums the same bytes.
func (x *Writer) copy(out *os.File, r io.Reader, name string, sums []io.Writer) (int64, error) {
	var written int64
	for {
		if err := x.ctx.Err(); err != nil {
			return written, err
		}
		n, rerr := r.Read(x.buf)
		if n > 0 {
			if err := x.budget.Check(x.files, x.bytes+int64(n)); err != nil {
				return written, fmt.Errorf("entry %q: %w", name, err)
			}
			if _, err := out.Write(x.buf[:n]); err != nil {
				return written, fmt.Errorf("entry %q: write: %w", name, err)
			}
			for _, h := range sums {
				_, _ = h.Write(x.buf[:n])
			}
			written += int64(n)
			x.bytes += int64(n)
			x.report(false)
		}
		if rerr == io.EOF {
			return written, nil
		}
		if rerr != nil {
			return written, x.corrupt(rerr, "reading entry %q", name)
		}
	}
}

// report calls Progress at the end of a file or every progressStep bytes.
func (x *Writer) report(force bool) {
	if x.opts.Progress == nil {
		return
	}
	if force || x.bytes-x.reported >= progressStep {
		x.reported = x.bytes
		x.opts.Progress(x.bytes)
	}
}

// tree lists the written files for Result.Tree, in path order.
func (x *Writer) tree() []plugind.File {
	if x.sums == nil {
		return nil
	}
	out := make([]plugind.File, 0, len(x.sums))
	for rel, w := range x.sums {
		out = append(out, plugind.File{Path: rel, Source: filepath.Join(x.dest, filepath.FromSlash(rel)), Size: w.size, Executable: w.exec, SHA256: w.sum})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Finish materializes the links and checks what can only be checked once
// the whole tree has been read. On error the caller calls Abort.
func (x *Writer) Finish() (*Result, error) {
	if x.opts.StripRoot && !x.rootSeen {
		return nil, plugind.Errorf(plugind.CodeUnsafeArchive, "refusing archive: it has no top-level directory to strip (is it empty?)")
	}
	if err := x.materializeSubmodules(); err != nil {
		return nil, err
	}
	if err := x.materializeLinks(); err != nil {
		return nil, err
	}
	if x.opts.Progress != nil {
		x.opts.Progress(x.bytes)
	}
	x.handles.Close()
	if err := x.root.Close(); err != nil {
		return nil, fmt.Errorf("close %s: %w", x.dest, err)
	}
	res := &Result{Root: x.stripRoot, Commit: x.commit, Files: x.files, Bytes: x.bytes, Tree: x.tree(), Dirs: x.dirList, Submodules: x.subs}
	if x.git != nil {
		res.GitTrees, res.GitAttributes, res.GitEntries = x.git.finish(x.sel), x.git.attrs, x.git.b.Entries
	}
	return res, nil
}
