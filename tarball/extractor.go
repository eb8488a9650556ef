package tarball

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"reasonix.io/plugind"
)

// extractor holds the state of one extraction. The format readers feed it
// entries in archive order; finish resolves the links.
type extractor struct {
	ctx    context.Context
	dest   string
	opts   Options
	budget plugind.Budget
	expect string // lower-case ExpectCommit, or ""

	paths pathSet
	made  map[string]bool // directories created below dest
	links []pendingLink

	root     string // the top-level directory being stripped
	rootSeen bool
	commit   string

	files    int
	dirs     int
	bytes    int64
	reported int64

	buf []byte
}

// pendingLink is a symlink or hardlink waiting to be materialized.
type pendingLink struct {
	rel    string // where it goes
	entry  string // the name in the archive, for messages
	target string // clean relative path it resolves to
	hard   bool
}

// newExtractor validates opts and creates dest, which must not exist.
func newExtractor(ctx context.Context, dest string, opts Options) (*extractor, error) {
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
	return &extractor{
		ctx:    ctx,
		dest:   dest,
		opts:   opts,
		budget: opts.budget(),
		expect: expect,
		paths:  pathSet{},
		made:   map[string]bool{".": true},
		buf:    make([]byte, bufSize),
	}, nil
}

// abort removes everything the extraction wrote and returns err.
func (x *extractor) abort(err error) error {
	if rmErr := os.RemoveAll(x.dest); rmErr != nil {
		return fmt.Errorf("%w (and removing the partial extraction failed: %v)", err, rmErr)
	}
	return err
}

func unsafeEntry(name, format string, args ...any) error {
	return plugind.Errorf(plugind.CodeUnsafeArchive, "refusing archive entry %q: %s", name, fmt.Sprintf(format, args...))
}

// corrupt reports damaged input: "archive truncated or corrupt: <where>:
// <cause>".
func corrupt(cause error, format string, args ...any) error {
	where := ""
	if format != "" {
		where = fmt.Sprintf(format, args...) + ": "
	}
	return plugind.Errorf(plugind.CodeSourceUnreadable, "archive truncated or corrupt: %s%w", where, cause)
}

// place turns an entry name into its path below dest, applying StripRoot.
// skip reports an entry that is the archive root or the stripped
// top-level directory itself.
func (x *extractor) place(name string, isDir bool) (rel string, skip bool, err error) {
	p, err := cleanName(name, isDir)
	if err != nil {
		return "", false, unsafeEntry(name, "%v", err)
	}
	if p == "." {
		return "", true, nil
	}
	if !x.opts.StripRoot {
		return p, false, nil
	}
	root, rest := splitRoot(p)
	if rest == "" && !isDir {
		return "", false, unsafeEntry(name, "a file at the top level of an archive that must hold a single top-level directory")
	}
	if err := x.setRoot(root, name); err != nil {
		return "", false, err
	}
	return rest, rest == "", nil
}

func (x *extractor) setRoot(root, name string) error {
	if x.rootSeen {
		if root != x.root {
			return unsafeEntry(name, "a second top-level directory %q (the archive must hold only %q)", root, x.root)
		}
		return nil
	}
	if x.expect != "" && !strings.HasSuffix(strings.ToLower(root), "-"+x.expect[:7]) {
		return unsafeEntry(name, "the archive root %q does not match commit %s (expected a name ending in %q)", root, x.expect, "-"+x.expect[:7])
	}
	x.root, x.rootSeen = root, true
	return nil
}

// comment checks a commit comment (pax global header or zip comment).
func (x *extractor) comment(name, c string) error {
	if x.expect != "" && !strings.EqualFold(c, x.expect) {
		return unsafeEntry(name, "the archive says it is commit %q, expected %s", c, x.expect)
	}
	if !isCommitID(c) {
		return nil
	}
	c = strings.ToLower(c)
	if x.commit != "" && x.commit != c {
		return unsafeEntry(name, "the archive names two commits, %s and %s", x.commit, c)
	}
	x.commit = c
	return nil
}

func (x *extractor) dir(name string) error {
	rel, skip, err := x.place(name, true)
	if err != nil || skip {
		return err
	}
	if _, err := x.paths.add(rel, kindDir); err != nil {
		return unsafeEntry(name, "%v", err)
	}
	return x.ensureDir(rel, name)
}

// ensureDir creates rel and its missing parents, one mkdir per new
// directory: the made set spares the stat calls MkdirAll would repeat for
// every file.
func (x *extractor) ensureDir(rel, name string) error {
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
	if err := os.Mkdir(filepath.Join(x.dest, filepath.FromSlash(rel)), 0o755); err != nil {
		return fmt.Errorf("entry %q: create directory %s: %w", name, rel, err)
	}
	x.made[rel] = true
	return nil
}

// countFile admits one more file against the file-count budget.
func (x *extractor) countFile(name string) error {
	x.files++
	if err := x.budget.Check(x.files, x.bytes); err != nil {
		return fmt.Errorf("entry %q: %w", name, err)
	}
	return nil
}

// file writes a regular file from r. declared is the size the archive
// claims; the tar and zip readers both fail rather than deliver more or
// fewer bytes, so an entry that cannot fit is refused before anything is
// written, and the running count of bytes actually written is checked
// before every write as well.
func (x *extractor) file(name string, exec bool, declared int64, r io.Reader) error {
	rel, _, err := x.place(name, false)
	if err != nil {
		return err
	}
	n, err := x.paths.add(rel, kindFile)
	if err != nil {
		return unsafeEntry(name, "%v", err)
	}
	n.exec = exec
	if err := x.countFile(name); err != nil {
		return err
	}
	if declared > 0 {
		if err := x.budget.Check(x.files, x.bytes+declared); err != nil {
			return fmt.Errorf("entry %q: %w", name, err)
		}
	}
	if err := x.ensureDir(path.Dir(rel), name); err != nil {
		return err
	}
	out, err := os.OpenFile(filepath.Join(x.dest, filepath.FromSlash(rel)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode(exec))
	if err != nil {
		return fmt.Errorf("entry %q: create %s: %w", name, rel, err)
	}
	written, err := x.copy(out, r, name)
	n.size = written
	if cerr := out.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("entry %q: write %s: %w", name, rel, cerr)
	}
	if err != nil {
		return err
	}
	x.report(true)
	return nil
}

func (x *extractor) copy(out *os.File, r io.Reader, name string) (int64, error) {
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
			written += int64(n)
			x.bytes += int64(n)
			x.report(false)
		}
		if rerr == io.EOF {
			return written, nil
		}
		if rerr != nil {
			if err := x.ctx.Err(); err != nil {
				return written, err
			}
			return written, corrupt(rerr, "reading entry %q", name)
		}
	}
}

// report calls Progress at the end of a file or every progressStep bytes.
func (x *extractor) report(force bool) {
	if x.opts.Progress == nil {
		return
	}
	if force || x.bytes-x.reported >= progressStep {
		x.reported = x.bytes
		x.opts.Progress(x.bytes)
	}
}

func fileMode(exec bool) os.FileMode {
	if exec {
		return 0o755
	}
	return 0o644
}

// finish materializes the links and checks what can only be checked once
// the whole archive has been read.
func (x *extractor) finish() (*Result, error) {
	if x.opts.StripRoot && !x.rootSeen {
		return nil, plugind.Errorf(plugind.CodeUnsafeArchive, "refusing archive: it has no top-level directory to strip (is it empty?)")
	}
	if err := x.materializeLinks(); err != nil {
		return nil, err
	}
	if x.opts.Progress != nil {
		x.opts.Progress(x.bytes)
	}
	return &Result{Root: x.root, Commit: x.commit, Files: x.files, Bytes: x.bytes}, nil
}
