package tarball

import (
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"

	"reasonix.io/plugind"
)

// Links (SPEC §8). Symlinks and hardlinks are recorded as they arrive and
// materialized by Finish, once every file of the tree is known, so archive
// order does not matter: a link to a file becomes a copy of that file, a
// link to a folder a copy of the folder's files (each counted against the
// budget). Nothing on disk is ever a link, so no path component the tree
// created can be followed out of the destination.
//
// A target is resolved as a file system would: component by component, each
// link met on the way replaced by where it leads (so "a/../b" through a link
// "a" goes where the link says, not where the letters say), never above the
// tree's root. Links outside Options.Paths are recorded, for the name checks
// and for chains that pass through them, but never materialized themselves,
// so they refuse nothing.

// pendingLink is a symlink or hardlink of the tree.
type pendingLink struct {
	rel   string // where it is in the tree
	entry string // the name in the archive, for messages
	// target is a symlink's target as written, read from its folder; a
	// hardlink's target as a clean path from the tree root.
	target string
	bad    string // why a hardlink's target is unusable ("" when it is fine)
	hard   bool
	kept   bool // inside Options.Paths
}

func (l *pendingLink) kind() string {
	if l.hard {
		return "hardlink"
	}
	return "symlink"
}

// base is the folder the target is read from ("" for the root).
func (l *pendingLink) base() string {
	if l.hard {
		return ""
	}
	return parentOf(l.rel)
}

// targetProblem is what makes a symlink's target unusable on its face.
func (l *pendingLink) targetProblem() string {
	t := l.target
	switch {
	case l.hard:
		return l.bad
	case t == "":
		return "its target is empty"
	case strings.IndexByte(t, 0) >= 0 || strings.IndexByte(t, '\\') >= 0:
		return fmt.Sprintf("its target %q contains a NUL byte or a backslash", t)
	case t[0] == '/' || len(t) >= 2 && t[1] == ':':
		return fmt.Sprintf("its target is the absolute path %q, which escapes the tree", t)
	}
	return ""
}

// Symlink records a symbolic link to target.
func (x *Writer) Symlink(name, target string) error {
	rel, _, err := x.place(name, false)
	if err != nil {
		return err
	}
	l := pendingLink{rel: rel, entry: name, target: target}
	if x.git != nil {
		if err := x.git.symlink(rel, target); err != nil {
			return err
		}
	}
	if x.sel.keeps(rel) {
		if p := l.targetProblem(); p != "" {
			return refuseAt(rel, name, "symlink: %s", p)
		}
	}
	return x.addLink(l)
}

// Hardlink records a hard link; its target is an archive path like any
// entry name.
func (x *Writer) Hardlink(name, target string) error {
	rel, _, err := x.place(name, false)
	if err != nil {
		return err
	}
	l := pendingLink{rel: rel, entry: name, hard: true}
	t, err := plugind.CleanEntryName(target, false)
	switch {
	case err != nil:
		l.bad = fmt.Sprintf("its target %q: %v", target, err)
	case x.opts.StripRoot:
		root, rest, _ := strings.Cut(t, "/")
		if root != x.stripRoot || rest == "" {
			l.bad = fmt.Sprintf("its target %q escapes the tree", target)
		}
		t = rest
	}
	l.target = t
	if x.git != nil {
		x.git.hard = append(x.git.hard, hardlink{rel: rel, target: t})
	}
	if l.bad != "" && x.sel.keeps(rel) {
		return refuseAt(rel, name, "hardlink: %s", l.bad)
	}
	return x.addLink(l)
}

func (x *Writer) addLink(l pendingLink) error {
	n, err := x.paths.Add(l.rel, plugind.EntryLink)
	if err != nil {
		return refuseAt(l.rel, l.entry, "%v", err)
	}
	l.kept = x.sel.keeps(l.rel)
	n.Link = len(x.links)
	x.links = append(x.links, l)
	if !l.kept {
		return nil
	}
	// Counted now, so that a flood of links trips the budget while reading.
	return x.countFile(l.entry)
}

// rootNode is the tree's root where a link leads to it.
var rootNode = &plugind.PathNode{Name: "", Kind: plugind.EntryDir}

// missingError is a link target that is not in the tree.
type missingError struct{ path string }

func (e *missingError) Error() string { return fmt.Sprintf("%q is not in the tree", e.path) }

// linkResolver follows one link for messages that name it.
type linkResolver struct {
	x    *Writer
	top  *pendingLink
	hops int
}

// fail is a refusal of the link being resolved; through names the link of
// a chain where it went wrong when that is not the link itself.
func (r *linkResolver) fail(through *pendingLink, format string, args ...any) error {
	why := fmt.Sprintf(format, args...)
	if through != r.top {
		why = fmt.Sprintf("through %s %q (to %q): %s", through.kind(), through.rel, through.target, why)
	}
	return refuseAt(r.top.rel, r.top.entry, "%s to %q: %s", r.top.kind(), r.top.target, why)
}

// resolve returns the file or folder link li leads to. chain holds the
// links being followed, to name a cycle.
func (r *linkResolver) resolve(li int, chain []int) (*plugind.PathNode, error) {
	x := r.x
	l := &x.links[li]
	if i := slices.Index(chain, li); i >= 0 {
		names := make([]string, 0, len(chain)-i+1)
		for _, c := range chain[i:] {
			names = append(names, x.links[c].rel)
		}
		names = append(names, l.rel)
		return nil, r.fail(l, "the links form a cycle (%s)", strings.Join(names, " -> "))
	}
	chain = append(chain, li)
	if r.hops++; r.hops > maxLinkHops {
		return nil, r.fail(l, "a chain of more than %d links", maxLinkHops)
	}
	if p := l.targetProblem(); p != "" {
		return nil, r.fail(l, "%s", p)
	}
	comps := strings.Split(l.target, "/")
	last := len(comps) - 1
	for last >= 0 && (comps[last] == "" || comps[last] == ".") {
		last--
	}
	mustDir := last < len(comps)-1 // "dir/" or "dir/.": a folder or nothing
	cur := l.base()
	for i := 0; i <= last; i++ {
		c := comps[i]
		switch c {
		case "", ".":
			continue
		case "..":
			if cur == "" {
				return nil, r.fail(l, "it escapes the tree")
			}
			cur = parentOf(cur)
			continue
		}
		p := path.Join(cur, c)
		n := x.paths.Lookup(p)
		if n == nil {
			return nil, &missingError{path: p}
		}
		if n.Kind == plugind.EntryLink {
			var err error
			if n, err = r.resolve(n.Link, chain); err != nil {
				return nil, err
			}
		}
		if n.IsDir() {
			cur = n.Name
			continue
		}
		if i < last || mustDir {
			return nil, r.fail(l, "%q is a file, not a folder", n.Name)
		}
		return n, nil
	}
	if cur == "" {
		return rootNode, nil
	}
	return x.paths.Lookup(cur), nil
}

func parentOf(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}

// describeDir names a folder of the tree in messages.
func describeDir(p string) string {
	if p == "" {
		return "the root of the tree"
	}
	return fmt.Sprintf("%q", p)
}

// within reports whether p is dir or lies below it ("" is the root).
func within(p, dir string) bool {
	return dir == "" || p == dir || strings.HasPrefix(p, dir+"/")
}

// materializeLinks writes every kept link — and every link on the way to a
// kept folder — as copies of what it leads to. What a link needs outside
// Options.Paths is gathered over all of them and reported at once
// (*NeedsPathsError), so one more pass completes the tree.
func (x *Writer) materializeLinks() error {
	m := &linkCopier{x: x}
	for i := range x.links {
		l := &x.links[i]
		if !l.kept && !x.sel.leadsTo(l.rel) {
			continue
		}
		if err := m.link(i, l.rel, nil); err != nil {
			return err
		}
	}
	if len(m.needs) > 0 {
		return m.needsError()
	}
	return nil
}

// linkCopier materializes links, gathering what they need from outside
// the kept folders.
type linkCopier struct {
	x     *Writer
	needs []string
	// needer is the first link that needed something, for the message.
	needer, needed string
}

func (m *linkCopier) need(l *pendingLink, p string) {
	if m.needer == "" {
		m.needer, m.needed = l.entry, p
	}
	m.needs = append(m.needs, p)
}

// link materializes link li at dst (its own path, or its place inside a
// folder another link copies). chain holds the folder links being copied,
// outermost first: a folder that holds one of them is a cycle.
func (m *linkCopier) link(li int, dst string, chain []int) error {
	x := m.x
	if err := x.ctx.Err(); err != nil {
		return err
	}
	l := &x.links[li]
	r := &linkResolver{x: x, top: l}
	n, err := r.resolve(li, nil)
	if miss, ok := err.(*missingError); ok {
		if x.inSubmodule(miss.path) {
			// Inside a submodule this fetch did not bring (whole): keep it
			// too, and the next pass fetches it.
			m.need(l, miss.path)
			return nil
		}
		return refuseAt(l.rel, l.entry, "%s to %q: %s", l.kind(), l.target, miss)
	}
	if err != nil {
		return err
	}
	own := dst == l.rel && l.kept // counted when it was recorded
	if !n.IsDir() {
		switch {
		case !x.sel.keeps(dst):
			return nil
		case !x.sel.keeps(n.Name):
			m.need(l, n.Name)
			return nil
		}
		return x.copyLinked(n, dst, l, own)
	}
	if l.hard {
		return refuseAt(l.rel, l.entry, "hardlink to %q: it is a directory", l.target)
	}
	for _, c := range append(chain, li) {
		if cl := &x.links[c]; within(cl.rel, n.Name) {
			what := "the folder that holds it"
			if cl != l {
				what = fmt.Sprintf("a folder holding %q, which links back", cl.rel)
			}
			return refuseAt(l.rel, l.entry, "symlink to %q: it leads to %s (%s), a cycle", l.target, what, describeDir(n.Name))
		}
	}
	chain = append(chain, li)
	if own {
		x.files-- // a folder: its files count instead
	}
	if x.sel.keeps(dst) {
		if n.Name != "" && !x.sel.keeps(n.Name) {
			m.need(l, n.Name) // the whole folder
			return nil
		}
		if err := x.ensureDir(dst, l.entry); err != nil {
			return err
		}
	}
	for _, d := range x.paths.Below(n.Name) {
		rest, _ := strings.CutPrefix(d.Name, n.Name+"/") // under the root (""), all of d.Name
		to := dst + "/" + rest
		if !x.sel.wants(to) {
			continue
		}
		switch {
		case d.Kind == plugind.EntryLink:
			if err := m.link(d.Link, to, chain); err != nil {
				return err
			}
		case !x.sel.keeps(to):
			// On the way to a kept folder: what it holds is copied as met.
		case !x.sel.keeps(d.Name):
			m.need(l, d.Name)
		case d.IsDir():
			if err := x.ensureDir(to, l.entry); err != nil {
				return err
			}
		default:
			if err := x.copyLinked(d, to, l, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyLinked writes dst as a copy of the file src. counted: dst's file slot
// was counted when its link was recorded.
func (x *Writer) copyLinked(src *plugind.PathNode, dst string, l *pendingLink, counted bool) error {
	if err := x.ctx.Err(); err != nil {
		return err
	}
	if !counted {
		x.files++
	}
	if err := x.budget.Check(x.files, x.bytes+src.Size); err != nil {
		return fmt.Errorf("entry %q (link to %q): %w", l.entry, src.Name, err)
	}
	if err := x.ensureDir(path.Dir(dst), l.entry); err != nil {
		return err
	}
	if err := x.copyFile(src, dst); err != nil {
		return fmt.Errorf("entry %q: materialize link to %q as %q: %w", l.entry, src.Name, dst, err)
	}
	if x.sums != nil {
		// The copy holds the target's bytes: the target's sum is its sum.
		x.sums[dst] = x.sums[src.Name]
	}
	x.bytes += src.Size
	x.report(true)
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
	out, err := x.create(rel, src.Exec)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, src.Size)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func (m *linkCopier) needsError() error {
	sort.Strings(m.needs)
	var paths []string
	for _, p := range m.needs {
		if len(paths) > 0 && within(p, paths[len(paths)-1]) {
			continue
		}
		paths = append(paths, p)
	}
	return &NeedsPathsError{Entry: m.needer, Target: m.needed, Paths: paths}
}

// NeedsPathsError is a kept link that leads outside Options.Paths: that
// content was never written, so the tree cannot be completed from this
// pass. Extracting again with Paths added completes it.
type NeedsPathsError struct {
	Entry, Target string   // the first such link and what it needs
	Paths         []string // everything the kept links need, minimal
}

func (e *NeedsPathsError) Error() string {
	return fmt.Sprintf("entry %q links to %q, outside the paths being extracted", e.Entry, e.Target)
}

// Is makes errors.Is(err, ErrNeedsFull) hold.
func (e *NeedsPathsError) Is(target error) bool { return target == ErrNeedsFull }
