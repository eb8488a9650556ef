package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

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

// packObject is one object of the pack.
type packObject struct {
	offset   int64
	diskType plumbing.ObjectType // as stored: a delta type or a base type
	typ      plumbing.ObjectType // the object's real type, once resolved
	size     int64               // inflated size (a delta's target size)
	baseOff  int64               // OFS delta base
	baseRef  plumbing.Hash       // REF delta base
	deltaLen int64               // a delta's instructions, inflated
	crc      uint32
	hash     plumbing.Hash
	resolved bool
	// tooBig marks an object over maxObject (or built on one): never read.
	tooBig bool
}

func (o *packObject) isDelta() bool {
	return o.diskType == plumbing.OFSDeltaObject || o.diskType == plumbing.REFDeltaObject
}

// packIndex is an indexed pack file on disk.
type packIndex struct {
	f    *os.File
	size int64
	// sc reads small objects while deltas are resolved, from one goroutine:
	// one scanner for all of them rather than one (and its buffers) each.
	sc         *packfile.Scanner
	objects    []*packObject
	byOffset   map[int64]*packObject
	byHash     map[plumbing.Hash]*packObject
	checksum   plumbing.Hash
	smallCache *contentCache
	// TooBig counts objects left unread for their size.
	TooBig int

	// Large delta bases, resolved once into one unlinked scratch file
	// (nothing is left behind whatever happens), bounded by spillMax.
	dir       string
	spill     *os.File
	spillAt   map[int64]spillRegion
	spillUsed int64
	spillMax  int64
}

// spillRegion is where a large base's content lies in the spill file.
type spillRegion struct{ start, size int64 }

const (
	// smallObject is the largest object kept whole in memory while deltas
	// are resolved.
	smallObject = 256 << 10
	// smallCacheBytes bounds those kept objects together.
	smallCacheBytes = 16 << 20
)

// receivePack copies the pack stream into path, failing once more than
// limit bytes arrive.
func receivePack(ctx context.Context, r io.Reader, path string, limit int64) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, plugind.PrivateFileMode)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, io.LimitReader(ctxReader{ctx, r}, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, err
	}
	if n > limit {
		return n, plugind.Errorf(plugind.CodeBudgetExceeded, "the repository's pack is larger than %s; a snapshot this size could never fit the budget", plugind.HumanBytes(limit))
	}
	return n, nil
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

// indexPack reads the pack at path and indexes every object it can.
func indexPack(ctx context.Context, path string, maxObject int64) (*packIndex, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	px := &packIndex{f: f, size: info.Size(), byOffset: map[int64]*packObject{}, byHash: map[plumbing.Hash]*packObject{}, smallCache: newContentCache(smallCacheBytes),
		dir: filepath.Dir(path), spillAt: map[int64]spillRegion{}, spillMax: maxObject}
	if err := px.scan(ctx, maxObject); err != nil {
		px.Close()
		return nil, err
	}
	if err := px.resolveDeltas(ctx, maxObject); err != nil {
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
// instructions.
func (px *packIndex) scan(ctx context.Context, maxObject int64) error {
	sc := packfile.NewScanner(io.NewSectionReader(px.f, 0, px.size))
	_, count, err := sc.Header()
	if err != nil {
		return corruptPack(err)
	}
	for i := uint32(0); i < count; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		oh, err := sc.NextObjectHeader()
		if err != nil {
			return corruptPack(err)
		}
		o := &packObject{offset: oh.Offset, diskType: oh.Type, size: oh.Length, baseOff: oh.OffsetReference, baseRef: oh.Reference}
		switch {
		case o.isDelta():
			o.deltaLen = oh.Length
			var hd deltaHeader
			_, o.crc, err = sc.NextObject(&hd)
			if err != nil {
				return corruptPack(err)
			}
			if !hd.ok() {
				return corruptPack(errors.New("delta without a size header"))
			}
			o.size = int64(hd.target)
		case oh.Length > maxObject:
			_, o.crc, err = sc.NextObject(io.Discard)
			o.tooBig, o.typ = true, oh.Type
		default:
			h := plumbing.NewHasher(oh.Type, oh.Length)
			_, o.crc, err = sc.NextObject(h)
			o.hash, o.typ, o.resolved = h.Sum(), oh.Type, true
			px.byHash[o.hash] = o
		}
		if err != nil {
			return corruptPack(err)
		}
		px.objects = append(px.objects, o)
		px.byOffset[o.offset] = o
	}
	px.checksum, err = sc.Checksum()
	if err != nil {
		return corruptPack(err)
	}
	return nil
}

// resolveDeltas hashes every delta object, bases first. A REF delta may name
// a base that comes later in the pack, so passes repeat until nothing
// changes. Small objects are patched in memory from small cached bases;
// only a delta on a large base streams.
func (px *packIndex) resolveDeltas(ctx context.Context, maxObject int64) error {
	px.sc = packfile.NewScanner(io.NewSectionReader(px.f, 0, px.size))
	for {
		progress, pending := false, 0
		for _, o := range px.objects {
			if o.resolved || o.tooBig || !o.isDelta() {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			base := px.base(o)
			switch {
			case base == nil:
				pending++
				continue
			case base.tooBig || o.size > maxObject:
				o.tooBig, progress = true, true
				continue
			case !base.resolved:
				pending++
				continue
			}
			o.typ = base.typ
			h := plumbing.NewHasher(o.typ, o.size)
			var n int64
			if data, ok, err := px.small(o); err != nil {
				return err
			} else if ok {
				w, _ := h.Write(data)
				n = int64(w)
			} else {
				rc, err := px.open(ctx, o)
				if err != nil {
					return err
				}
				n, err = io.Copy(h, rc)
				rc.Close()
				if err != nil {
					return corruptPack(err)
				}
			}
			if n != o.size {
				return corruptPack(fmt.Errorf("delta at offset %d produced %d bytes, its header says %d", o.offset, n, o.size))
			}
			o.hash, o.resolved, progress = h.Sum(), true, true
			px.byHash[o.hash] = o
		}
		if pending == 0 {
			break
		}
		if !progress {
			// Bases absent from the pack (a thin pack, which we never ask
			// for) or a cycle: those objects stay unindexed.
			break
		}
	}
	for _, o := range px.objects {
		if o.tooBig {
			px.TooBig++
		}
	}
	return nil
}

// small returns a small object's content, patched in memory when it is a
// delta on a small base; ok is false when the object (or its base) is too
// large to hold and must stream.
func (px *packIndex) small(o *packObject) (data []byte, ok bool, err error) {
	if o.size > smallObject {
		return nil, false, nil
	}
	if data, ok := px.smallCache.get(o.offset); ok {
		return data, true, nil
	}
	raw, err := px.readRaw(o)
	if err != nil {
		return nil, false, err
	}
	if o.isDelta() {
		base := px.base(o)
		if base == nil || !base.resolved {
			return nil, false, corruptPack(fmt.Errorf("delta at offset %d has no usable base", o.offset))
		}
		baseData, ok, err := px.small(base)
		if err != nil || !ok {
			return nil, false, err
		}
		if raw, err = packfile.PatchDelta(baseData, raw); err != nil {
			return nil, false, corruptPack(err)
		}
	}
	if int64(len(raw)) != o.size {
		return nil, false, corruptPack(fmt.Errorf("object at offset %d is %d bytes, its header says %d", o.offset, len(raw), o.size))
	}
	px.smallCache.put(o.offset, raw)
	return raw, true, nil
}

// readRaw inflates the stored bytes of a small object (a delta's
// instructions for a delta) with the shared scanner.
func (px *packIndex) readRaw(o *packObject) ([]byte, error) {
	n := o.size
	if o.isDelta() {
		n = o.deltaLen
	}
	if n > smallObject*4 {
		return nil, corruptPack(fmt.Errorf("object at offset %d: %d bytes of delta instructions for a small object", o.offset, n))
	}
	if _, err := px.sc.SeekObjectHeader(o.offset); err != nil {
		return nil, corruptPack(err)
	}
	buf := bytes.NewBuffer(make([]byte, 0, n))
	if _, _, err := px.sc.NextObject(buf); err != nil {
		return nil, corruptPack(err)
	}
	return buf.Bytes(), nil
}

func (px *packIndex) base(o *packObject) *packObject {
	if o.diskType == plumbing.OFSDeltaObject {
		return px.byOffset[o.baseOff]
	}
	return px.byHash[o.baseRef]
}

// open streams a resolved object's content, re-reading the pack: a small
// one from the cache (kept there for the deltas built on it), a large one
// inflated from the pack, a large delta applied over its base.
func (px *packIndex) open(ctx context.Context, o *packObject) (io.ReadCloser, error) {
	if o.size <= smallObject {
		data, ok, err := px.small(o)
		if err != nil {
			return nil, err
		}
		if ok {
			return io.NopCloser(bytes.NewReader(data)), nil
		}
	}
	sc := packfile.NewScanner(io.NewSectionReader(px.f, 0, px.size))
	if _, err := sc.SeekObjectHeader(o.offset); err != nil {
		return nil, corruptPack(err)
	}
	raw, err := sc.ReadObject()
	if err != nil {
		return nil, corruptPack(err)
	}
	if !o.isDelta() {
		return raw, nil
	}
	base := px.base(o)
	if base == nil || !base.resolved {
		raw.Close()
		return nil, corruptPack(fmt.Errorf("delta at offset %d has no usable base", o.offset))
	}
	ra, err := px.readerAt(ctx, base)
	if err != nil {
		raw.Close()
		return nil, err
	}
	dr, err := newDeltaReader(ctx, ra, base.size, raw)
	if err != nil {
		raw.Close()
		return nil, corruptPack(fmt.Errorf("delta at offset %d: %w", o.offset, err))
	}
	return closeBoth{io.NopCloser(corruptReader{dr}), raw}, nil
}

// readerAt gives random access to a resolved object's content, as a delta
// base needs: a small one from memory; a large one from the spill file,
// where it is written once, the first time a delta needs it.
func (px *packIndex) readerAt(ctx context.Context, o *packObject) (io.ReaderAt, error) {
	if data, ok, err := px.small(o); err != nil {
		return nil, err
	} else if ok {
		return bytes.NewReader(data), nil
	}
	if r, ok := px.spillAt[o.offset]; ok {
		return io.NewSectionReader(px.spill, r.start, r.size), nil
	}
	if px.spillUsed+o.size > px.spillMax {
		return nil, plugind.Errorf(plugind.CodeBudgetExceeded, "the pack's large delta-compressed objects add up to more than %s", plugind.HumanBytes(px.spillMax))
	}
	if px.spill == nil {
		f, err := os.CreateTemp(px.dir, "bases-*.spill")
		if err != nil {
			return nil, err
		}
		// Unlinked at once: the open file is all there is, so nothing
		// outlives the fetch, even a killed one.
		os.Remove(f.Name())
		px.spill = f
	}
	rc, err := px.open(ctx, o)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	w := io.NewOffsetWriter(px.spill, px.spillUsed)
	n, err := io.Copy(w, io.LimitReader(rc, o.size+1))
	if err != nil {
		return nil, err
	}
	if n != o.size {
		return nil, corruptPack(fmt.Errorf("object at offset %d is %d bytes, its header says %d", o.offset, n, o.size))
	}
	r := spillRegion{start: px.spillUsed, size: n}
	px.spillAt[o.offset] = r
	px.spillUsed += n
	return io.NewSectionReader(px.spill, r.start, r.size), nil
}

// corruptReader reports a delta that does not apply as a corrupt pack (a
// cancelled context stays what it is).
type corruptReader struct{ r io.Reader }

func (c corruptReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil && err != io.EOF {
		err = corruptPack(err)
	}
	return n, err
}

func corruptPack(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return plugind.Errorf(plugind.CodeSourceUnreadable, "the git pack received is corrupt: %w", err)
}

// deltaHeader captures the two sizes a delta's instructions start with.
type deltaHeader struct {
	buf    [20]byte
	n      int
	source uint64
	target uint64
}

func (d *deltaHeader) Write(p []byte) (int, error) {
	d.n += copy(d.buf[min(d.n, len(d.buf)):], p)
	return len(p), nil
}

func (d *deltaHeader) ok() bool {
	b := d.buf[:min(d.n, len(d.buf))]
	var ok1, ok2 bool
	d.source, b, ok1 = leb128(b)
	d.target, _, ok2 = leb128(b)
	return ok1 && ok2
}

func leb128(b []byte) (uint64, []byte, bool) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, b[i+1:], true
		}
	}
	return 0, nil, false
}

type closeBoth struct {
	io.ReadCloser
	second io.Closer
}

func (c closeBoth) Close() error {
	err := c.ReadCloser.Close()
	if err2 := c.second.Close(); err == nil {
		err = err2
	}
	return err
}
