package git

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"

	"reasonix.io/plugind"
)

// Why not go-git's own pack indexer: packfile.Parser reads every object
// whole into memory while it resolves deltas, so one 300 MiB blob — a
// 300 KiB download when it is zeros — costs 300 MiB of RSS before any
// budget can refuse it. This indexer keeps memory flat whatever the object
// sizes: objects are hashed as they inflate, deltas are applied as streams
// (deltaReader) over random-access bases — a small base from a bounded
// in-memory cache, a large one spilled to a disk file once — and objects
// larger than maxObject are read past without being hashed (no budget could
// take them). The tree is then written from this index too (tree.go), so
// no object is ever resolved by a slower path.
//
// A pack is also the input a hostile host controls: its cost is bounded
// whatever it holds (packlimits.go). The object count is refused from the
// header, each object costs one compact record, deltas are resolved in one
// walk from their bases as git index-pack does (resolve.go), and every byte
// inflated or patched is charged to a work bound.

// packObject is one object of the pack: a value in one slice, no pointer
// and no map entry of its own, so an index of a pack at its object bound
// stays a few megabytes (see TestPackObjectRecordSize).
type packObject struct {
	offset int64
	// hash is the object's once resolved (a REF delta's base during the
	// scan, until the child lists are made).
	hash plumbing.Hash
	// length is the inflated size (a delta's target size), clamped to
	// maxLength: larger objects are over any maxObject, never read.
	length uint32
	// base is a delta's base, an index into packIndex.objects: an OFS
	// delta's from the scan, a REF delta's once resolved; noBase otherwise.
	base   int32
	stored plumbing.ObjectType // as stored: a delta type or a base type
	typ    plumbing.ObjectType // the object's real type, once resolved
	state  objectState
	// isBase: some delta resolved on it, so its content is worth keeping
	// in the cache; a leaf's is read once, by the tree walk.
	isBase bool
}

// maxLength is the largest size a record holds; packLimits.maxObject is
// below it.
const maxLength = math.MaxUint32

func (o *packObject) size() int64 { return int64(o.length) }

func clampLength(n int64) uint32 { return uint32(min(n, maxLength)) }

// objectState is what the index knows of an object.
type objectState uint8

const (
	unresolved objectState = iota // a delta whose base never resolved (absent, a cycle)
	resolved                      // hashed: typ, size and hash are known
	tooBig                        // over maxObject, or a delta on one: never read
)

const noBase = -1

func (o *packObject) isDelta() bool {
	return o.stored == plumbing.OFSDeltaObject || o.stored == plumbing.REFDeltaObject
}

// packIndex is an indexed pack file on disk.
type packIndex struct {
	f      *os.File
	size   int64
	limits packLimits
	work   workMeter
	// sc reads small objects while deltas are resolved, from one goroutine:
	// one scanner for all of them rather than one (and its buffers) each.
	sc *packfile.Scanner
	// objects, in pack order (so by offset).
	objects []packObject
	// byHash lists the resolved objects by hash, for binary search.
	byHash []int32
	// Delta children by base, for the resolution only (resolve.go).
	ofsKids []ofsChild
	refKids []refChild
	// peakFrames is the deepest the resolution's stack went.
	peakFrames int

	checksum   plumbing.Hash
	hasher     objectHasher
	smallCache *contentCache
	// TooBig counts objects left unread for their size.
	TooBig int

	// Large delta bases, resolved once into one unlinked scratch file
	// (nothing is left behind whatever happens), bounded by spillMax.
	dir       string
	spill     *os.File
	spillAt   map[int32]spillRegion
	spillUsed int64
	spillMax  int64
}

// spillRegion is where a large base's content lies in the spill file.
type spillRegion struct{ start, size int64 }

const (
	// smallObject is the largest object kept whole in memory while deltas
	// are resolved.
	smallObject = 256 << 10
	// indexMemory bounds what an index holds in memory: its records, child
	// lists and frames (maxFrameBytes) first, the cache of small bases'
	// content in the rest, within [minCacheBytes, smallCacheBytes].
	indexMemory     = 24 << 20
	smallCacheBytes = 16 << 20
	minCacheBytes   = 4 << 20
)

// receivePack copies the pack stream into path, failing once more than
// limits.bytes arrive, or at once when the pack's header declares more
// objects than limits allow (nothing more is downloaded).
func receivePack(ctx context.Context, r io.Reader, path string, limits packLimits) (int64, error) {
	r = ctxReader{ctx, r}
	var header [packHeaderSize]byte
	n, err := io.ReadFull(r, header[:])
	switch {
	case err == nil:
		count, err := parsePackHeader(header[:])
		if err != nil {
			return int64(n), err
		}
		if err := limits.checkCount(count); err != nil {
			return int64(n), err
		}
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		// Short: stored as it is, for the indexer to call corrupt.
	default:
		return int64(n), err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, plugind.PrivateFileMode)
	if err != nil {
		return 0, err
	}
	body, err := io.Copy(f, io.LimitReader(io.MultiReader(bytes.NewReader(header[:n]), r), limits.bytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return body, err
	}
	if body > limits.bytes {
		return body, plugind.Errorf(plugind.CodeBudgetExceeded, "the repository's pack is larger than %s; a snapshot this size could never fit the budget", plugind.HumanBytes(limits.bytes))
	}
	return body, nil
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// indexPack reads the pack at path and indexes every object it can, within
// limits.
func indexPack(ctx context.Context, path string, limits packLimits) (*packIndex, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	px := &packIndex{f: f, size: info.Size(), limits: limits, work: limits.meter(), hasher: newObjectHasher(),
		dir: filepath.Dir(path), spillAt: map[int32]spillRegion{}, spillMax: limits.maxObject}
	if err := px.scan(ctx); err != nil {
		px.Close()
		return nil, err
	}
	if err := px.resolveDeltas(ctx); err != nil {
		px.Close()
		return nil, err
	}
	return px, nil
}

func (px *packIndex) Close() error {
	if px.spill != nil {
		px.spill.Close()
	}
	return px.f.Close()
}

// scan is the first pass: every header, every base object hashed as it
// streams, every delta's target size read from the first bytes of its
// instructions, and its base noted for resolveDeltas. Each object's
// declared size is charged to the work bound before it is inflated.
func (px *packIndex) scan(ctx context.Context) error {
	var header [packHeaderSize]byte
	if _, err := px.f.ReadAt(header[:], 0); err != nil {
		return corruptPack(fmt.Errorf("pack header: %w", noEOF(err)))
	}
	count, err := parsePackHeader(header[:])
	if err != nil {
		return err
	}
	if err := px.limits.checkCount(count); err != nil {
		return err
	}
	sc := packfile.NewScanner(io.NewSectionReader(px.f, 0, px.size))
	if _, _, err := sc.Header(); err != nil {
		return corruptPack(err)
	}
	px.objects = make([]packObject, 0, count)
	var hd deltaHeader // one for every delta: a new one each is garbage
	for i := int32(0); i < int32(count); i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		oh, err := sc.NextObjectHeader()
		if err != nil {
			return corruptPack(err)
		}
		if err := px.work.charge(oh.Length); err != nil {
			return err
		}
		o := packObject{offset: oh.Offset, stored: oh.Type, length: clampLength(oh.Length), base: noBase}
		switch {
		case o.isDelta():
			hd.reset()
			if _, _, err = sc.NextObject(&hd); err != nil {
				return corruptPack(err)
			}
			target, ok := hd.target()
			if !ok {
				return corruptPack(errors.New("delta without a size header"))
			}
			o.length = clampLength(int64(min(target, math.MaxInt64)))
			if o.stored == plumbing.REFDeltaObject {
				o.hash = oh.Reference
			} else if b, ok := px.atOffset(oh.OffsetReference, i); ok {
				o.base = b
			}
		case oh.Length > px.limits.maxObject:
			_, _, err = sc.NextObject(io.Discard)
			o.state, o.typ = tooBig, oh.Type
		default:
			_, _, err = sc.NextObject(px.hasher.start(oh.Type, oh.Length))
			o.hash, o.typ, o.state = px.hasher.sum(), oh.Type, resolved
		}
		if err != nil {
			return corruptPack(err)
		}
		px.objects = append(px.objects, o)
	}
	px.checksum, err = sc.Checksum()
	if err != nil {
		return corruptPack(err)
	}
	return nil
}

// atOffset finds the object at offset among the first n, which lie in
// offset order.
func (px *packIndex) atOffset(offset int64, n int32) (int32, bool) {
	i, ok := slices.BinarySearchFunc(px.objects[:n], offset, func(o packObject, offset int64) int { return cmp.Compare(o.offset, offset) })
	return int32(i), ok
}

func corruptPack(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || plugind.CodeOf(err) != "" {
		return err // cancelled, or already said (a budget, a corruption)
	}
	return plugind.Errorf(plugind.CodeSourceUnreadable, "the git pack received is corrupt: %w", err)
}

// deltaHeader captures the two sizes a delta's instructions start with.
type deltaHeader struct {
	buf [20]byte
	n   int
	r   bytes.Reader // reads buf, reused for every delta
}

func (d *deltaHeader) reset() { d.n = 0 }

func (d *deltaHeader) Write(p []byte) (int, error) {
	d.n += copy(d.buf[min(d.n, len(d.buf)):], p)
	return len(p), nil
}

// target reads the delta's target size, the second of its two sizes.
func (d *deltaHeader) target() (uint64, bool) {
	d.r.Reset(d.buf[:min(d.n, len(d.buf))])
	_, err := readDeltaSize(&d.r)
	target, err2 := readDeltaSize(&d.r)
	return target, err == nil && err2 == nil
}
