package manifest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"reasonix.io/plugind"
)

// errMissing marks a declared path that is safe but absent. It matches
// fs.ErrNotExist, so callers of ReadFile need to know no other sentinel.
var errMissing error = missingError{}

type missingError struct{}

func (missingError) Error() string        { return "does not exist" }
func (missingError) Is(target error) bool { return target == fs.ErrNotExist }

// coded wraps like fmt.Errorf and attaches code. (plugind.Errorf with %w
// would repeat the cause's text in Error().)
func coded(code plugind.Code, format string, args ...any) error {
	return plugind.WithCode(code, fmt.Errorf(format, args...))
}

// pathError is a declared path that is not local; it matches ErrOutside.
type pathError struct{ msg string }

func (e *pathError) Error() string        { return e.msg }
func (e *pathError) Is(target error) bool { return target == ErrOutside }

// ErrOutside marks a path that is not local or whose symlinks resolve
// outside the package root: nothing there is read.
var ErrOutside = errors.New("leaves the package root")

// ErrTooLarge marks a file over the size its kind may have: it is not
// read past that size.
var ErrTooLarge = errors.New("too large")

// tree is a package root with its symlinks resolved once, so every declared
// path can be checked against the real location.
type tree struct {
	root string // as given
	real string // absolute, symlinks resolved

	// What one load has asked the filesystem already, by absolute path:
	// each declared path is checked from the root down, so without these
	// "skills" is looked up again for every skill below it (a tree lives
	// for one load, whose package does not change under it).
	mu     sync.Mutex
	lstats map[string]statResult
	stats  map[string]statResult
}

type statResult struct {
	info fs.FileInfo
	err  error
}

// lstat is os.Lstat, asked once per path and tree.
func (t *tree) lstat(p string) (fs.FileInfo, error) { return t.once(t.lstats, p, os.Lstat) }

// stat is os.Stat, asked once per path and tree; a path lstat found not to
// be a link needs no second question.
func (t *tree) stat(p string) (fs.FileInfo, error) {
	t.mu.Lock()
	r, ok := t.lstats[p]
	t.mu.Unlock()
	if ok && (r.err != nil || r.info.Mode()&fs.ModeSymlink == 0) {
		return r.info, r.err
	}
	return t.once(t.stats, p, os.Stat)
}

// once answers p from results, asking ask the first time.
func (t *tree) once(results map[string]statResult, p string, ask func(string) (fs.FileInfo, error)) (fs.FileInfo, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r, ok := results[p]; ok {
		return r.info, r.err
	}
	info, err := ask(p)
	results[p] = statResult{info, err}
	return info, err
}

func openTree(root string) (*tree, error) {
	real, err := filepath.Abs(root)
	if err == nil {
		real, err = filepath.EvalSymlinks(real)
	}
	var info fs.FileInfo
	if err == nil {
		info, err = os.Stat(real)
	}
	if err != nil {
		return nil, coded(plugind.CodeSourceUnreadable, "read %s: %w", root, err)
	}
	if !info.IsDir() {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s is not a directory", root)
	}
	return &tree{root: root, real: real, lstats: map[string]statResult{}, stats: map[string]statResult{}}, nil
}

// resolve checks a manifest-declared path and returns its clean slash form
// and its real absolute location. The error wraps ErrOutside for absolute,
// "..", or outward-symlinked paths and errMissing for absent ones; the
// caller decides whether either is fatal.
func (t *tree) resolve(p string) (string, string, error) {
	rel, err := plugind.LocalPath(p)
	if err != nil {
		return "", "", &pathError{msg: err.Error()}
	}
	real, err := t.realBelow(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// A dangling link may still point outward; report that first so
			// a later-created target cannot smuggle content in.
			if t.danglingEscape(rel) {
				return rel, "", ErrOutside
			}
			return rel, "", errMissing
		}
		return rel, "", err
	}
	if !plugind.Within(t.real, real) {
		return rel, "", ErrOutside
	}
	return rel, real, nil
}

// realBelow is filepath.EvalSymlinks of rel joined to the root, without
// looking up the root's own components again for every declared path
// (t.real is resolved already): rel's components are checked from the root
// down, and only a path through a symlink is handed to EvalSymlinks. A
// bulk plan reads thousands of declared paths (issue 13: under 30
// filesystem metadata calls per installed file).
func (t *tree) realBelow(rel string) (string, error) {
	cur := t.real
	for _, seg := range splitSlash(rel) {
		cur = filepath.Join(cur, seg)
		info, err := t.lstat(cur)
		if err != nil {
			return "", err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return filepath.EvalSymlinks(filepath.Join(t.real, filepath.FromSlash(rel)))
		}
	}
	return cur, nil
}

// danglingEscape walks rel's components looking for a symlink whose target
// is absolute or climbs out of the root.
func (t *tree) danglingEscape(rel string) bool {
	cur := t.real
	for _, seg := range splitSlash(rel) {
		cur = filepath.Join(cur, seg)
		info, err := t.lstat(cur)
		if err != nil {
			return false
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, err := os.Readlink(cur)
		if err != nil {
			return false
		}
		if filepath.IsAbs(target) {
			return !plugind.Within(t.real, filepath.Clean(target))
		}
		return !plugind.Within(t.real, filepath.Join(filepath.Dir(cur), target))
	}
	return false
}

// splitSlash is the segments of rel, a clean slash path (plugind.LocalPath).
func splitSlash(rel string) []string {
	if rel == "." || rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

// ReadFile reads the file rel (a slash path) of the folder root the way
// install reads every file of a package, and validate every file it
// checks: confined to root (a path that is not local, or a symbolic link
// leading out of root, is ErrOutside and is never opened), a regular file
// only (a named pipe or a device is plugind.ErrNotRegular: never read, and
// opening it never blocks), at most limit bytes (ErrTooLarge past that). A
// missing file matches fs.ErrNotExist. This is the one reader of package
// files: anything that reads a file of a folder it was handed reads it
// here.
func ReadFile(root, rel string, limit int64) ([]byte, error) {
	t, err := openTree(root)
	if err != nil {
		return nil, err
	}
	return t.readFile(rel, limit)
}

// Unreadable says, for a finding, why ReadFile did not read a file: a link
// out of the folder, something that is not a regular file, a file over
// its size limit, or whatever else went wrong. Nothing it names was read.
func Unreadable(err error) string {
	switch {
	case errors.Is(err, ErrOutside):
		return "leaves the folder (a symbolic link out of it, or a path that is not local): not read"
	case errors.Is(err, plugind.ErrNotRegular), errors.Is(err, ErrTooLarge):
		return err.Error() + ": not read"
	}
	return "cannot read: " + err.Error()
}

// readFile reads a regular file inside the tree, at most limit bytes.
func (t *tree) readFile(rel string, limit int64) ([]byte, error) {
	_, real, err := t.resolve(rel)
	if err != nil {
		return nil, err
	}
	return readConfined(t.real, real, limit)
}

// readConfined reads real, a path already resolved inside realRoot,
// through an os.Root of realRoot: should a component be swapped for a
// link out between the check and the open, the open fails instead of
// following it. The open does not block (a named pipe would wait for a
// writer forever); what it opened must be a regular file, checked on the
// open file itself, and no more than limit bytes are read.
func readConfined(realRoot, real string, limit int64) ([]byte, error) {
	rel, err := filepath.Rel(realRoot, real)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(realRoot)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := plugind.OpenRegular(r, rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errMissing
		}
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: the file is larger than the %s limit", ErrTooLarge, plugind.HumanBytes(limit))
	}
	return data, nil
}
