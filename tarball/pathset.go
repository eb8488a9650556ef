package tarball

import "fmt"

type kind uint8

const (
	kindImplicitDir kind = iota // a parent of some entry, never listed itself
	kindDir
	kindFile
	kindLink
)

// node is one path of the extracted tree.
type node struct {
	name string // exact relative slash path
	kind kind
	exec bool  // files: executable bit
	size int64 // files: bytes written
	link int   // links: index into extractor.links
}

// pathSet is every path of the tree keyed by its case-fold key, so that a
// duplicate, a case-fold collision or a file/directory conflict is caught
// the moment the second entry arrives, whatever the archive order.
type pathSet map[string]*node

// add registers p (clean, relative, not ".") with kind k and every parent
// of p as a directory. The error describes the conflict; the caller names
// the entry.
func (s pathSet) add(p string, k kind) (*node, error) {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		if err := s.addDir(p[:i], p); err != nil {
			return nil, err
		}
	}
	key := foldKey(p)
	if n, ok := s[key]; ok {
		switch {
		case n.name != p:
			return nil, fmt.Errorf("%q and %q differ only by letter case", p, n.name)
		case n.kind == kindImplicitDir && k == kindDir:
			n.kind = kindDir
			return n, nil
		case isDir(n.kind) != isDir(k):
			return nil, fmt.Errorf("%q is both a file and a directory", p)
		default:
			return nil, fmt.Errorf("%q appears twice in the archive", p)
		}
	}
	n := &node{name: p, kind: k}
	s[key] = n
	return n, nil
}

func (s pathSet) addDir(dir, child string) error {
	key := foldKey(dir)
	n, ok := s[key]
	switch {
	case !ok:
		s[key] = &node{name: dir, kind: kindImplicitDir}
		return nil
	case n.name != dir:
		return fmt.Errorf("%q and %q differ only by letter case", dir, n.name)
	case !isDir(n.kind):
		return fmt.Errorf("%q is both a file and a directory (it holds %q)", dir, child)
	}
	return nil
}

// lookup finds the node at exactly p.
func (s pathSet) lookup(p string) *node {
	n := s[foldKey(p)]
	if n == nil || n.name != p {
		return nil
	}
	return n
}

func isDir(k kind) bool { return k == kindDir || k == kindImplicitDir }
