package git

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"slices"
	"sort"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// Deltas are resolved as git index-pack resolves them: the scan lists each
// delta under its base (an OFS delta under its base's index, a REF delta
// under its base's hash), and one walk from the whole objects resolves every
// object's children right after the object itself, patching them from its
// content, which the walk holds while they are resolved. A chain stored
// last first costs what it costs stored in order (resolving pass after pass
// took one pass per delta of it: quadratic). The walk keeps an explicit
// stack, never recursion, and pops a frame before resolving its last child,
// so a chain takes one frame however long it is. The content frames hold
// is bounded (maxFrameBytes): past it, the oldest frames let theirs go, and
// it is rebuilt along the base pointers if a later child needs it (small).
// A delta whose base never resolves (absent from the pack, or a cycle of
// REF deltas) is never reached and stays unresolved.

// The sizes of the records an index keeps, for cacheBytes.
const (
	packObjectSize = int(unsafe.Sizeof(packObject{}))
	ofsChildSize   = int(unsafe.Sizeof(ofsChild{}))
	refChildSize   = int(unsafe.Sizeof(refChild{}))
)

// maxFrameBytes bounds the content the walk's frames hold.
const maxFrameBytes = 4 << 20

// ofsChild lists an OFS delta under its base's index.
type ofsChild struct{ base, child int32 }

// refChild lists a REF delta under its base's hash.
type refChild struct {
	base  plumbing.Hash
	child int32
}

// frame is a resolved object whose children are being resolved: its
// content when small and still held, and what is left of its ranges of
// ofsKids and refKids.
type frame struct {
	parent      int32
	data        []byte
	ofs, ofsEnd int32
	ref, refEnd int32
}

func (px *packIndex) next(f *frame) int32 {
	if f.ofs < f.ofsEnd {
		f.ofs++
		return px.ofsKids[f.ofs-1].child
	}
	f.ref++
	return px.refKids[f.ref-1].child
}

func (f *frame) empty() bool { return f.ofs == f.ofsEnd && f.ref == f.refEnd }

// walk is the resolution's stack and the content its frames hold.
type walk struct {
	stack []frame
	bytes int // content held by frames
	bare  int // frames below this index hold none
}

// resolveDeltas hashes every delta that has a base in the pack, bases
// first. A small delta is patched in memory from its base's content; only
// a delta on a large base streams.
func (px *packIndex) resolveDeltas(ctx context.Context) error {
	px.sc = packfile.NewScanner(io.NewSectionReader(newBlockReader(px.f, px.size), 0, px.size))
	px.listChildren()
	px.smallCache = newContentCache(px.cacheBytes())
	var w walk
	for i := range px.objects {
		o := &px.objects[i]
		if o.isDelta() {
			continue
		}
		f, ok := px.children(int32(i))
		if !ok {
			continue
		}
		if o.state == resolved && o.size() <= smallObject {
			data, err := px.readRaw(int32(i))
			if err != nil {
				return err
			}
			f.data = data
		}
		px.push(&w, f)
		for len(w.stack) > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			top := &w.stack[len(w.stack)-1]
			parent, data, child := top.parent, top.data, px.next(top)
			if top.empty() {
				px.pop(&w)
			}
			if px.objects[child].state != unresolved {
				continue // listed under two copies of its base
			}
			childData, err := px.resolve(ctx, child, parent, data)
			if err != nil {
				return err
			}
			if f, ok := px.children(child); ok {
				f.data = childData
				px.push(&w, f)
			}
		}
	}
	px.ofsKids, px.refKids = nil, nil
	px.indexHashes()
	return nil
}

// listChildren lists every delta under its base, from what the scan left
// in the records (an OFS delta's base index, a REF delta's base hash in
// place of its own), each list allocated once at its size.
func (px *packIndex) listChildren() {
	var ofs, ref int
	for i := range px.objects {
		switch o := &px.objects[i]; {
		case o.stored == plumbing.REFDeltaObject:
			ref++
		case o.stored == plumbing.OFSDeltaObject && o.base != noBase:
			ofs++
		}
	}
	px.ofsKids, px.refKids = make([]ofsChild, 0, ofs), make([]refChild, 0, ref)
	for i := range px.objects {
		switch o := &px.objects[i]; {
		case o.stored == plumbing.REFDeltaObject:
			px.refKids = append(px.refKids, refChild{base: o.hash, child: int32(i)})
			o.hash = plumbing.ZeroHash
		case o.stored == plumbing.OFSDeltaObject && o.base != noBase:
			px.ofsKids = append(px.ofsKids, ofsChild{base: o.base, child: int32(i)})
		}
	}
	// By base, and each base's children in pack order.
	slices.SortFunc(px.ofsKids, func(a, b ofsChild) int {
		return cmp.Or(cmp.Compare(a.base, b.base), cmp.Compare(a.child, b.child))
	})
	slices.SortFunc(px.refKids, func(a, b refChild) int {
		return cmp.Or(bytes.Compare(a.base[:], b.base[:]), cmp.Compare(a.child, b.child))
	})
}

// children returns a frame for object i when it has children to resolve:
// its OFS children whatever its state, its REF children once it has a hash.
func (px *packIndex) children(i int32) (frame, bool) {
	f := frame{parent: i}
	f.ofs = int32(sort.Search(len(px.ofsKids), func(k int) bool { return px.ofsKids[k].base >= i }))
	f.ofsEnd = f.ofs
	for int(f.ofsEnd) < len(px.ofsKids) && px.ofsKids[f.ofsEnd].base == i {
		f.ofsEnd++
	}
	if o := &px.objects[i]; o.state == resolved && len(px.refKids) > 0 {
		h := o.hash
		f.ref = int32(sort.Search(len(px.refKids), func(k int) bool { return bytes.Compare(px.refKids[k].base[:], h[:]) >= 0 }))
		f.refEnd = f.ref
		for int(f.refEnd) < len(px.refKids) && px.refKids[f.refEnd].base == h {
			f.refEnd++
		}
	}
	return f, !f.empty()
}

// push pushes f, letting the oldest frames' content go past maxFrameBytes
// (never the new top's: its children come next).
func (px *packIndex) push(w *walk, f frame) {
	px.objects[f.parent].isBase = true
	w.stack = append(w.stack, f)
	w.bytes += len(f.data)
	for w.bytes > maxFrameBytes && w.bare < len(w.stack)-1 {
		w.bytes -= len(w.stack[w.bare].data)
		w.stack[w.bare].data = nil
		w.bare++
	}
	px.peakFrames = max(px.peakFrames, len(w.stack))
}

func (px *packIndex) pop(w *walk) {
	w.bytes -= len(w.stack[len(w.stack)-1].data)
	w.stack = w.stack[:len(w.stack)-1]
	w.bare = min(w.bare, len(w.stack))
}

// resolve hashes delta c over its base b, whose content is baseData when
// the walk still holds it, and returns c's content when small (for c's own
// children). A delta over maxObject, or on a base left unread, is left
// unread too.
func (px *packIndex) resolve(ctx context.Context, c, b int32, baseData []byte) ([]byte, error) {
	o, base := &px.objects[c], &px.objects[b]
	o.base = b
	if base.state == tooBig || o.size() > px.limits.maxObject {
		o.state = tooBig
		return nil, nil
	}
	o.typ = base.typ
	var data []byte
	var err error
	switch {
	case o.size() > smallObject:
	case baseData != nil:
		data, err = px.patch(c, baseData)
	default:
		data, _, err = px.small(ctx, c) // rebuilt along the base pointers
	}
	if err != nil {
		return nil, err
	}
	h := px.hasher.start(o.typ, o.size())
	if data != nil {
		h.Write(data)
	} else if err := px.streamTo(ctx, c, h); err != nil {
		return nil, err
	}
	o.hash, o.state = px.hasher.sum(), resolved
	return data, nil
}

// indexHashes counts the objects left unread for their size and sorts the
// resolved ones by hash.
func (px *packIndex) indexHashes() {
	n := 0
	for i := range px.objects {
		switch px.objects[i].state {
		case resolved:
			n++
		case tooBig:
			px.TooBig++
		}
	}
	px.byHash = make([]int32, 0, n)
	for i := range px.objects {
		if px.objects[i].state == resolved {
			px.byHash = append(px.byHash, int32(i))
		}
	}
	slices.SortFunc(px.byHash, func(a, b int32) int {
		return bytes.Compare(px.objects[a].hash[:], px.objects[b].hash[:])
	})
}

// find returns the index of the resolved object h.
func (px *packIndex) find(h plumbing.Hash) (int32, bool) {
	k, ok := slices.BinarySearchFunc(px.byHash, h, func(i int32, h plumbing.Hash) int { return bytes.Compare(px.objects[i].hash[:], h[:]) })
	if !ok {
		return 0, false
	}
	return px.byHash[k], true
}

// cacheBytes is what indexMemory leaves the small-object cache once the
// records, child lists and frames are counted.
func (px *packIndex) cacheBytes() int {
	held := cap(px.objects)*packObjectSize + cap(px.ofsKids)*ofsChildSize + cap(px.refKids)*refChildSize + maxFrameBytes
	return min(max(indexMemory-held, minCacheBytes), smallCacheBytes)
}
