package git

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"

	"reasonix.io/plugind"
)

// Why not go-git's own pack indexer: packfile.Parser reads every object
// whole into memory while it resolves deltas, so one 300 MiB blob — a
// 300 KiB download when it is zeros — costs 300 MiB of RSS before any
// budget can refuse it. This indexer keeps memory flat whatever the object
// sizes: objects are hashed as they inflate, deltas are applied as streams
// over re-readable bases (go-git's ReaderFromDelta), and objects larger
// than maxObject are read past without being hashed (no budget could take
// them). Only small resolved objects are kept, in a bounded cache, so delta
// chains are not re-inflated from their root every time.

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
}

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
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
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
	px := &packIndex{f: f, size: info.Size(), byOffset: map[int64]*packObject{}, byHash: map[plumbing.Hash]*packObject{}, smallCache: newContentCache(smallCacheBytes)}
	if err := px.scan(ctx, maxObject); err != nil {
		f.Close()
		return nil, err
	}
	if err := px.resolveDeltas(ctx, maxObject); err != nil {
		f.Close()
		return nil, err
	}
	return px, nil
}

func (px *packIndex) Close() error { return px.f.Close() }

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
				rc, err := px.open(o)
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

// open streams a resolved object's content, re-reading the pack.
func (px *packIndex) open(o *packObject) (io.ReadCloser, error) {
	if data, ok := px.smallCache.get(o.offset); ok {
		return io.NopCloser(newBytesReader(data)), nil
	}
	rc, err := px.openUncached(o)
	if err != nil || o.size > smallObject {
		return rc, err
	}
	// Small: read whole, keep for the deltas built on it.
	data, err := io.ReadAll(io.LimitReader(rc, o.size+1))
	rc.Close()
	if err != nil {
		return nil, corruptPack(err)
	}
	px.smallCache.put(o.offset, data)
	return io.NopCloser(newBytesReader(data)), nil
}

func (px *packIndex) openUncached(o *packObject) (io.ReadCloser, error) {
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
	rc, err := packfile.ReaderFromDelta(&lazyObject{px: px, o: base}, bufio.NewReader(raw))
	if err != nil {
		raw.Close()
		return nil, corruptPack(err)
	}
	return closeBoth{rc, raw}, nil
}

// writeIndex publishes the pack and its index into gitDir's objects/pack,
// where go-git's filesystem storage reads them (large objects lazily).
func (px *packIndex) writeIndex(packPath, gitDir string) error {
	w := new(idxfile.Writer)
	if err := w.OnHeader(uint32(len(px.byHash))); err != nil {
		return err
	}
	for _, o := range px.objects {
		if o.resolved {
			if err := w.OnInflatedObjectContent(o.hash, o.offset, o.crc, nil); err != nil {
				return err
			}
		}
	}
	if err := w.OnFooter(px.checksum); err != nil {
		return err
	}
	idx, err := w.Index()
	if err != nil {
		return err
	}
	dir := filepath.Join(gitDir, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, "pack-"+px.checksum.String())
	out, err := os.OpenFile(base+".idx", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(out)
	if _, err := idxfile.NewEncoder(bw).Encode(idx); err != nil {
		out.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(packPath, base+".pack")
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

// lazyObject is a resolved pack object as go-git's delta reader wants its
// base: re-readable from the start as often as a backward copy needs.
type lazyObject struct {
	px *packIndex
	o  *packObject
}

func (l *lazyObject) Hash() plumbing.Hash             { return l.o.hash }
func (l *lazyObject) Type() plumbing.ObjectType       { return l.o.typ }
func (l *lazyObject) SetType(plumbing.ObjectType)     {}
func (l *lazyObject) Size() int64                     { return l.o.size }
func (l *lazyObject) SetSize(int64)                   {}
func (l *lazyObject) Reader() (io.ReadCloser, error)  { return l.px.open(l.o) }
func (l *lazyObject) Writer() (io.WriteCloser, error) { return nil, errors.New("read-only object") }

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
