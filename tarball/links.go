package tarball

import (
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"reasonix.io/plugind"
)

// Symlink records a symbolic link. Its target is resolved lexically against
// the link's directory: every directory in the tree is a real directory
// (links to directories are refused), so no component of the path can be a
// link, and lexical resolution is the resolution.
func (x *Writer) Symlink(name, target string) error {
	rel, _, err := x.place(name, false)
	if err != nil {
		return err
	}
	switch {
	case target == "":
		return unsafeEntry(name, "symlink with an empty target")
	case strings.IndexByte(target, 0) >= 0 || strings.IndexByte(target, '\\') >= 0:
		return unsafeEntry(name, "symlink target %q contains a NUL byte or a backslash", target)
	case target[0] == '/' || len(target) >= 2 && target[1] == ':':
		return unsafeEntry(name, "symlink to the absolute path %q escapes the tree", target)
	}
	resolved := path.Join(path.Dir(rel), target)
	switch {
	case resolved == ".." || strings.HasPrefix(resolved, "../"):
		return unsafeEntry(name, "symlink to %q escapes the tree", target)
	case resolved == "." || strings.HasSuffix(target, "/"):
		return unsafeEntry(name, "symlink to %q points to a directory; only links to regular files are materialized", target)
	}
	return x.addLink(rel, name, resolved, false)
}

// Hardlink records a hard link; its target is an archive path like any
// entry name.
func (x *Writer) Hardlink(name, target string) error {
	rel, _, err := x.place(name, false)
	if err != nil {
		return err
	}
	t, err := plugind.CleanEntryName(target, false)
	if err != nil {
		return unsafeEntry(name, "hardlink target %q: %v", target, err)
	}
	if x.opts.StripRoot {
		root, rest := splitRoot(t)
		if root != x.stripRoot || rest == "" {
			return unsafeEntry(name, "hardlink to %q escapes the tree", target)
		}
		t = rest
	}
	if t == "." {
		return unsafeEntry(name, "hardlink to %q points to a directory", target)
	}
	return x.addLink(rel, name, t, true)
}

func (x *Writer) addLink(rel, name, target string, hard bool) error {
	n, err := x.paths.Add(rel, plugind.EntryLink)
	if err != nil {
		return unsafeEntry(name, "%v", err)
	}
	if !x.include(rel) {
		return nil
	}
	n.Link = len(x.links)
	x.links = append(x.links, pendingLink{rel: rel, entry: name, target: target, hard: hard})
	// Counted now, so that a flood of links trips the budget while reading.
	return x.countFile(name)
}

// resolve follows l (through chains of links) to the regular file it ends
// at.
func (x *Writer) resolve(l pendingLink) (*plugind.PathNode, error) {
	what := "symlink"
	if l.hard {
		what = "hardlink"
	}
	target := l.target
	for hops := 0; hops < maxLinkHops; hops++ {
		n := x.paths.Lookup(target)
		switch {
		case n == nil:
			return nil, unsafeEntry(l.entry, "%s target %q is not in the tree", what, target)
		case n.IsDir():
			return nil, unsafeEntry(l.entry, "%s target %q is a directory; only links to regular files are materialized", what, target)
		case n.Kind == plugind.EntryFile:
			if !x.include(n.Name) {
				return nil, &excludedTargetError{entry: l.entry, target: n.Name}
			}
			return n, nil
		}
		if !x.include(n.Name) {
			return nil, &excludedTargetError{entry: l.entry, target: n.Name}
		}
		target = x.links[n.Link].target
	}
	return nil, unsafeEntry(l.entry, "%s chain longer than %d links (a loop?)", what, maxLinkHops)
}

// materializeLinks writes every link as a copy of the file it resolves to.
// Runs after all regular files exist, so archive order does not matter.
func (x *Writer) materializeLinks() error {
	for _, l := range x.links {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		src, err := x.resolve(l)
		if err != nil {
			return err
		}
		if err := x.budget.Check(x.files, x.bytes+src.Size); err != nil {
			return fmt.Errorf("entry %q (link to %q): %w", l.entry, src.Name, err)
		}
		if err := x.ensureDir(path.Dir(l.rel), l.entry); err != nil {
			return err
		}
		if err := x.copyFile(src, l.rel); err != nil {
			return fmt.Errorf("entry %q: materialize link to %q: %w", l.entry, src.Name, err)
		}
		if x.sums != nil {
			// The copy holds the target's bytes: the target's sum is its sum.
			x.sums[l.rel] = x.sums[src.Name]
		}
		x.bytes += src.Size
		x.report(true)
	}
	return nil
}

// copyFile copies an extracted file within dest; io.Copy between two
// *os.File lets the kernel do it (copy_file_range) without our buffer.
func (x *Writer) copyFile(src *plugind.PathNode, rel string) error {
	in, err := x.root.Open(src.Name)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := x.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, x.fileMode(src.Exec))
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, src.Size)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// excludedTargetError is a kept link whose target Options.Include left out:
// its content was never written, so the tree cannot be completed from this
// pass. Callers that filter fall back to a full extraction (ErrNeedsFull).
type excludedTargetError struct{ entry, target string }

func (e *excludedTargetError) Error() string {
	return fmt.Sprintf("entry %q links to %q, outside the paths being extracted", e.entry, e.target)
}

func (e *excludedTargetError) Is(target error) bool { return target == ErrNeedsFull }
