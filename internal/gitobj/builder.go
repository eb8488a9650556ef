package gitobj

import (
	"fmt"
	"slices"
	"strings"
)

// Builder computes the tree ids of a tree whose entries arrive one path at
// a time, in any order (an archive's order is the archive's to choose): it
// keeps each folder's entries — a name, a mode and an id each, never
// content — and hashes the trees bottom-up in Finish. A folder with no
// entries hashes as git's empty tree, unless a gitlink takes its place (an
// archive shows a submodule as an empty folder).
type Builder struct {
	h     *Hasher
	dirs  map[string]*dirNode // by slash path, "" the root
	trees map[string]ID       // after Finish
}

type dirNode struct {
	entries []Entry // blobs and gitlinks; folders are added by Finish
	subdirs int
}

// NewBuilder returns an empty Builder hashing with h.
func NewBuilder(h *Hasher) *Builder {
	return &Builder{h: h, dirs: map[string]*dirNode{"": {}}}
}

// Dir records the folder p (and its parents).
func (b *Builder) Dir(p string) { b.dir(p) }

func (b *Builder) dir(p string) *dirNode {
	if d, ok := b.dirs[p]; ok {
		return d
	}
	d := &dirNode{}
	b.dirs[p] = d
	if p != "" {
		b.dir(parent(p)).subdirs++
	}
	return d
}

// Add records the blob or gitlink at p with mode and id. A gitlink
// replaces an empty folder recorded at p.
func (b *Builder) Add(p string, mode uint32, id ID) error {
	if mode == ModeTree {
		return fmt.Errorf("gitobj: %q: folders are recorded with Dir", p)
	}
	if d, ok := b.dirs[p]; ok && mode == ModeGitlink {
		if len(d.entries) > 0 || d.subdirs > 0 {
			return fmt.Errorf("gitobj: %q is a submodule and a folder with entries", p)
		}
		delete(b.dirs, p)
		b.dirs[parent(p)].subdirs--
	}
	d := b.dir(parent(p))
	d.entries = append(d.entries, Entry{Name: base(p), Mode: mode, ID: id})
	return nil
}

// Lookup returns the blob or gitlink recorded at p.
func (b *Builder) Lookup(p string) (Entry, bool) {
	d, ok := b.dirs[parent(p)]
	if !ok {
		return Entry{}, false
	}
	name := base(p)
	i := slices.IndexFunc(d.entries, func(e Entry) bool { return e.Name == name })
	if i < 0 {
		return Entry{}, false
	}
	return d.entries[i], true
}

// Finish hashes every folder, deepest first, and returns the root's id.
func (b *Builder) Finish() ID {
	paths := make([]string, 0, len(b.dirs))
	for p := range b.dirs {
		paths = append(paths, p)
	}
	// Deepest first: a folder's subfolders are hashed before it.
	slices.SortFunc(paths, func(x, y string) int {
		return strings.Count(y, "/") - strings.Count(x, "/") + boolCmp(x == "", y == "")
	})
	b.trees = make(map[string]ID, len(paths))
	for _, p := range paths {
		d := b.dirs[p]
		id := b.h.Tree(d.entries)
		b.trees[p] = id
		if p != "" {
			pd := b.dirs[parent(p)]
			pd.entries = append(pd.entries, Entry{Name: base(p), Mode: ModeTree, ID: id})
		}
	}
	return b.trees[""]
}

// boolCmp puts the root, whose depth Count cannot tell from a top-level
// folder's, last.
func boolCmp(x, y bool) int {
	switch {
	case x && !y:
		return 1
	case y && !x:
		return -1
	}
	return 0
}

// TreeID is the id Finish gave folder p ("" the root).
func (b *Builder) TreeID(p string) (ID, bool) {
	id, ok := b.trees[p]
	return id, ok
}

// TreeIDs are the ids Finish gave every folder, by path ("" the root);
// the map is the Builder's, not to be changed.
func (b *Builder) TreeIDs() map[string]ID { return b.trees }

// Entries lists folder p's entries, sorted as git sorts them, after
// Finish.
func (b *Builder) Entries(p string) ([]Entry, bool) {
	d, ok := b.dirs[p]
	if !ok {
		return nil, false
	}
	return d.entries, true
}

func parent(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

func base(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
