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
// object's children right after the object itself. A chain stored last
// first costs what it costs stored in order (resolving pass after pass took
// one pass per delta of it: quadratic). The walk keeps an explicit stack,
// never recursion, and pops a frame before resolving its last child, so a
// chain takes one frame however long it is. A delta whose base never
// resolves (absent from the pack, or a cycle of REF deltas) is never
// reached and stays unresolved.

// The sizes of the records an index keeps, for cacheBytes.
const (
	packObjectSize = int(unsafe.Sizeof(packObject{}))
	ofsChildSize   = int(unsafe.Sizeof(ofsChild{}))
	refChildSize   = int(unsafe.Sizeof(refChild{}))
)

// ofsChild lists an OFS delta under its base's index.
type ofsChild struct{ base, child int32 }

// refChild lists a REF delta under its base's hash.
type refChild struct {
	base  plumbing.Hash
	child int32
}

// frame is a resolved object whose children are being resolved: what is
// left of its ranges of ofsKids and refKids.
type frame struct {
	parent      int32
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

// resolveDeltas hashes every delta that has a base in the pack, bases
// first. Small objects are patched in memory from small cached bases; only
// a delta on a large base streams.
func (px *packIndex) resolveDeltas(ctx context.Context) error {
	px.sc = packfile.NewScanner(io.NewSectionReader(px.f, 0, px.size))
	// The scan appended children in pack order: sorted by base, each base's
	// children stay in that order.
	slices.SortStableFunc(px.ofsKids, func(a, b ofsChild) int { return cmp.Compare(a.base, b.base) })
	slices.SortFunc(px.refKids, func(a, b refChild) int {
		if c := bytes.Compare(a.base[:], b.base[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.child, b.child)
	})
	px.smallCache = newContentCache(px.cacheBytes())
	var stack []frame
	for i := range px.objects {
		if px.objects[i].isDelta() {
			continue
		}
		stack = px.pushChildren(stack, int32(i))
		for len(stack) > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			top := &stack[len(stack)-1]
			parent, child := top.parent, px.next(top)
			if top.empty() {
				stack = stack[:len(stack)-1]
			}
			if px.objects[child].state != unresolved {
				continue // listed under two copies of its base
			}
			if err := px.resolve(ctx, child, parent); err != nil {
				return err
			}
			stack = px.pushChildren(stack, child)
		}
	}
	px.ofsKids, px.refKids = nil, nil
	px.indexHashes()
	return nil
}

// pushChildren pushes a frame for object i when it has children to
// resolve: its OFS children whatever its state, its REF children once it
// has a hash.
func (px *packIndex) pushChildren(stack []frame, i int32) []frame {
	f := frame{parent: i}
	f.ofs = int32(sort.Search(len(px.ofsKids), func(k int) bool { return px.ofsKids[k].base >= i }))
	f.ofsEnd = int32(sort.Search(len(px.ofsKids), func(k int) bool { return px.ofsKids[k].base > i }))
	if o := &px.objects[i]; o.state == resolved {
		h := o.hash
		f.ref = int32(sort.Search(len(px.refKids), func(k int) bool { return bytes.Compare(px.refKids[k].base[:], h[:]) >= 0 }))
		f.refEnd = int32(sort.Search(len(px.refKids), func(k int) bool { return bytes.Compare(px.refKids[k].base[:], h[:]) > 0 }))
	}
	if f.empty() {
		return stack
	}
	stack = append(stack, f)
	px.peakFrames = max(px.peakFrames, len(stack))
	return stack
}

// resolve hashes delta c over its base b; a delta over maxObject, or on a
// base left unread, is left unread too.
func (px *packIndex) resolve(ctx context.Context, c, b int32) error {
	o, base := &px.objects[c], &px.objects[b]
	o.base = b
	if base.state == tooBig || o.size > px.limits.maxObject {
		o.state = tooBig
		return nil
	}
	o.typ = base.typ
	h := plumbing.NewHasher(o.typ, o.size)
	if err := px.writeTo(ctx, c, h); err != nil {
		return err
	}
	o.hash, o.state = h.Sum(), resolved
	return nil
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
	k := sort.Search(len(px.byHash), func(k int) bool {
		return bytes.Compare(px.objects[px.byHash[k]].hash[:], h[:]) >= 0
	})
	if k < len(px.byHash) && px.objects[px.byHash[k]].hash == h {
		return px.byHash[k], true
	}
	return 0, false
}

// cacheBytes is what indexMemory leaves the small-object cache once the
// records and child lists are counted.
func (px *packIndex) cacheBytes() int {
	held := cap(px.objects)*packObjectSize + cap(px.ofsKids)*ofsChildSize + cap(px.refKids)*refChildSize
	return min(max(indexMemory-held, minCacheBytes), smallCacheBytes)
}
