package plugind

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"reasonix.io/plugind/internal/jsondoc"
)

// This file is the one name-safety check every way a tree reaches the disk
// goes through: git trees, tar and zip archives, and local folders (ScanTree).
// The same commit must get the same verdict whichever transport brought it,
// so none of them has rules of its own.

// CleanEntryName checks a tree entry name (an archive member, a git tree
// path, a hardlink target) and returns it as a clean slash path relative to
// the tree root; "." is the root itself. The specific checks come before
// LocalPath so a refusal says exactly what was wrong.
func CleanEntryName(name string, isDir bool) (string, error) {
	switch {
	case name == "":
		return "", errors.New("the name is empty")
	case strings.IndexByte(name, 0) >= 0:
		return "", errors.New("the name contains a NUL byte")
	case strings.IndexByte(name, '\\') >= 0:
		return "", errors.New("the name contains a backslash")
	case name[0] == '/':
		return "", errors.New("the name is an absolute path")
	case len(name) >= 2 && name[1] == ':':
		return "", errors.New("the name starts with a drive letter")
	case !utf8.ValidString(name):
		return "", errors.New("the name is not valid UTF-8")
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return "", fmt.Errorf("the name contains the control character %U", r)
		}
	}
	if slices.Contains(strings.Split(name, "/"), "..") {
		return "", errors.New("the name contains a \"..\" segment")
	}
	trimmed := name
	if isDir {
		trimmed = strings.TrimRight(name, "/")
		if trimmed == "" || trimmed == "." {
			return ".", nil
		}
	} else if strings.HasSuffix(name, "/") {
		return "", errors.New("a non-directory entry name ends in \"/\"")
	}
	clean, err := LocalPath(trimmed)
	if err != nil {
		return "", err
	}
	if clean == "." && !isDir {
		return "", errors.New("the name is not a local path to a file")
	}
	return clean, nil
}

// FoldKey maps s to a key that is equal for two names exactly when a
// case-insensitive, normalization-insensitive file system (macOS, Windows)
// would store them as the same name: the name is brought to Unicode NFC
// (so "é" precomposed and "e"+U+0301 meet) and every rune becomes the
// smallest member of its simple case-folding orbit (plain ToLower misses
// pairs such as "ſ"/"s" or "K" KELVIN SIGN/"k").
func FoldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		// The smallest member of an ASCII letter's orbit is its upper case.
		return strings.ToUpper(s)
	}
	return strings.Map(jsondoc.FoldRune, norm.NFC.String(s))
}

// EntryKind is what a path of a tree is.
type EntryKind uint8

const (
	EntryImplicitDir EntryKind = iota // a parent of some entry, never listed itself
	EntryDir
	EntryFile
	EntryLink
)

func (k EntryKind) isDir() bool { return k == EntryDir || k == EntryImplicitDir }

// PathNode is one path of a tree being materialized.
type PathNode struct {
	Name string // exact relative slash path
	Kind EntryKind
	Exec bool  // files: executable bit
	Size int64 // files: bytes written
	Link int   // links: an index the caller keeps
}

// PathSet is every path of a tree keyed by its fold key, so that a
// duplicate, a case-fold or Unicode-normalization collision, or a
// file/directory conflict (a symlink "a" beside a folder "a/") is caught
// the moment the second entry arrives, whatever the order.
type PathSet struct {
	m map[string]*PathNode
	// sorted lists the nodes in name order for Below; rebuilt when nodes
	// were added since.
	sorted []*PathNode
}

// Add registers p (clean, relative, not ".") with kind k and every parent
// of p as a directory. The error describes the conflict; the caller names
// the entry.
func (s *PathSet) Add(p string, k EntryKind) (*PathNode, error) {
	if s.m == nil {
		s.m = map[string]*PathNode{}
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		if err := s.addDir(p[:i], p); err != nil {
			return nil, err
		}
	}
	key := FoldKey(p)
	if n, ok := s.m[key]; ok {
		switch {
		case n.Name != p:
			return nil, fmt.Errorf("%q and %q differ only by letter case or Unicode normalization", p, n.Name)
		case n.Kind == EntryImplicitDir && k == EntryDir:
			n.Kind = EntryDir
			return n, nil
		case n.Kind.isDir() != k.isDir():
			return nil, fmt.Errorf("%q is both a file and a directory", p)
		default:
			return nil, fmt.Errorf("%q appears twice in the tree", p)
		}
	}
	n := &PathNode{Name: p, Kind: k}
	s.m[key] = n
	return n, nil
}

func (s *PathSet) addDir(dir, child string) error {
	key := FoldKey(dir)
	n, ok := s.m[key]
	switch {
	case !ok:
		s.m[key] = &PathNode{Name: dir, Kind: EntryImplicitDir}
		return nil
	case n.Name != dir:
		return fmt.Errorf("%q and %q differ only by letter case or Unicode normalization", dir, n.Name)
	case !n.Kind.isDir():
		return fmt.Errorf("%q is both a file and a directory (it holds %q)", dir, child)
	}
	return nil
}

// Lookup finds the node at exactly p.
func (s *PathSet) Lookup(p string) *PathNode {
	n := s.m[FoldKey(p)]
	if n == nil || n.Name != p {
		return nil
	}
	return n
}

// Below lists every node under directory dir ("" for the root), in name
// order: a folder's whole subtree, for copying it. All names with the prefix
// dir+"/" sort together, so it is one range of the sorted list.
func (s *PathSet) Below(dir string) []*PathNode {
	if len(s.sorted) != len(s.m) {
		s.sorted = slices.SortedFunc(maps.Values(s.m), func(a, b *PathNode) int { return strings.Compare(a.Name, b.Name) })
	}
	if dir == "" {
		return s.sorted
	}
	prefix := dir + "/"
	lo := sort.Search(len(s.sorted), func(i int) bool { return s.sorted[i].Name >= prefix })
	hi := lo + sort.Search(len(s.sorted)-lo, func(i int) bool { return !strings.HasPrefix(s.sorted[lo+i].Name, prefix) })
	return s.sorted[lo:hi]
}

// IsDir reports whether n is a directory (listed or implied).
func (n *PathNode) IsDir() bool { return n.Kind.isDir() }
