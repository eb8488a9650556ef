package tarball

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// symlink records a symbolic link. Its target is resolved lexically against
// the link's directory: every directory in the tree is a real directory
// (links to directories are refused), so no component of the path can be a
// link, and lexical resolution is the resolution.
func (x *extractor) symlink(name, target string) error {
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

// hardlink records a hard link; its target is an archive path like any
// entry name.
func (x *extractor) hardlink(name, target string) error {
	rel, _, err := x.place(name, false)
	if err != nil {
		return err
	}
	t, err := cleanName(target, false)
	if err != nil {
		return unsafeEntry(name, "hardlink target %q: %v", target, err)
	}
	if x.opts.StripRoot {
		root, rest := splitRoot(t)
		if root != x.root || rest == "" {
			return unsafeEntry(name, "hardlink to %q escapes the tree", target)
		}
		t = rest
	}
	if t == "." {
		return unsafeEntry(name, "hardlink to %q points to a directory", target)
	}
	return x.addLink(rel, name, t, true)
}

func (x *extractor) addLink(rel, name, target string, hard bool) error {
	n, err := x.paths.add(rel, kindLink)
	if err != nil {
		return unsafeEntry(name, "%v", err)
	}
	n.link = len(x.links)
	x.links = append(x.links, pendingLink{rel: rel, entry: name, target: target, hard: hard})
	// Counted now, so that a flood of links trips the budget while reading.
	return x.countFile(name)
}

// resolve follows l (through chains of links) to the regular file it ends
// at.
func (x *extractor) resolve(l pendingLink) (*node, error) {
	what := "symlink"
	if l.hard {
		what = "hardlink"
	}
	target := l.target
	for hops := 0; hops < maxLinkHops; hops++ {
		n := x.paths.lookup(target)
		switch {
		case n == nil:
			return nil, unsafeEntry(l.entry, "%s target %q is not in the archive", what, target)
		case isDir(n.kind):
			return nil, unsafeEntry(l.entry, "%s target %q is a directory; only links to regular files are materialized", what, target)
		case n.kind == kindFile:
			return n, nil
		}
		target = x.links[n.link].target
	}
	return nil, unsafeEntry(l.entry, "%s chain longer than %d links (a loop?)", what, maxLinkHops)
}

// materializeLinks writes every link as a copy of the file it resolves to.
// Runs after all regular files exist, so archive order does not matter.
func (x *extractor) materializeLinks() error {
	for _, l := range x.links {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		src, err := x.resolve(l)
		if err != nil {
			return err
		}
		if err := x.budget.Check(x.files, x.bytes+src.size); err != nil {
			return fmt.Errorf("entry %q (link to %q): %w", l.entry, src.name, err)
		}
		if err := x.ensureDir(path.Dir(l.rel), l.entry); err != nil {
			return err
		}
		if err := x.copyFile(src, l.rel); err != nil {
			return fmt.Errorf("entry %q: materialize link to %q: %w", l.entry, src.name, err)
		}
		x.bytes += src.size
		x.report(true)
	}
	return nil
}

// copyFile copies an extracted file within dest; io.Copy between two
// *os.File lets the kernel do it (copy_file_range) without our buffer.
func (x *extractor) copyFile(src *node, rel string) error {
	in, err := os.Open(filepath.Join(x.dest, filepath.FromSlash(src.name)))
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(filepath.Join(x.dest, filepath.FromSlash(rel)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode(src.exec))
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, src.size)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
