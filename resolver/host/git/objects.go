package git

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/go-git/go-git/v5/plumbing/format/packfile"

	"reasonix.io/plugind"
)

// Reading an indexed object's content: a small one whole in memory (cached,
// rebuilt along its base pointers when evicted), a large one as a stream
// over a random-access base. Every byte inflated or patched is charged to
// the pack's work bound.

// streamTo streams large object i's content to w, which must take all of
// it (a hasher).
func (px *packIndex) streamTo(ctx context.Context, i int32, w io.Writer) error {
	rc, err := px.stream(ctx, i)
	if err != nil {
		return err
	}
	defer rc.Close()
	n, err := io.Copy(w, rc)
	if err != nil {
		return corruptPack(err)
	}
	if o := &px.objects[i]; n != o.size() {
		return corruptPack(fmt.Errorf("object at offset %d produced %d bytes, its header says %d", o.offset, n, o.size()))
	}
	return nil
}

// small returns a small object's content (at most smallObject bytes): from
// the cache, or rebuilt. Rebuilding walks the base pointers up to the
// nearest object it can start from (one in the cache, a whole object, or a
// delta on a large base, which streams), then applies the deltas down
// again, caching each base on the way: a loop, however long the chain. ok
// is false when the object is large and must stream.
func (px *packIndex) small(ctx context.Context, i int32) (data []byte, ok bool, err error) {
	if px.objects[i].size() > smallObject {
		return nil, false, nil
	}
	if data, ok := px.smallCache.get(i); ok {
		return data, true, nil
	}
	chain := []int32{i}
	for j := i; px.objects[j].isDelta(); {
		b := px.objects[j].base
		if b == noBase || px.objects[b].state != resolved {
			return nil, false, corruptPack(fmt.Errorf("delta at offset %d has no usable base", px.objects[j].offset))
		}
		if px.objects[b].size() > smallObject {
			break // j streams over its large base
		}
		if d, ok := px.smallCache.get(b); ok {
			data = d
			break
		}
		if len(chain) > len(px.objects) {
			return nil, false, corruptPack(fmt.Errorf("delta at offset %d: its bases form a cycle", px.objects[i].offset))
		}
		chain = append(chain, b)
		j = b
	}
	for k := len(chain) - 1; k >= 0; k-- {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		j := chain[k]
		o := &px.objects[j]
		var out []byte
		switch {
		case !o.isDelta():
			out, err = px.readRaw(j)
		case data == nil:
			out, err = px.readStream(ctx, j)
		default:
			out, err = px.patch(j, data)
		}
		if err != nil {
			return nil, false, err
		}
		if int64(len(out)) != o.size() {
			return nil, false, corruptPack(fmt.Errorf("object at offset %d is %d bytes, its header says %d", o.offset, len(out), o.size()))
		}
		if o.isBase {
			px.smallCache.put(j, out)
		}
		data = out
	}
	return data, true, nil
}

// patch applies small delta i to its base's content.
func (px *packIndex) patch(i int32, base []byte) ([]byte, error) {
	ins, err := px.readRaw(i)
	if err != nil {
		return nil, err
	}
	if err := px.work.charge(px.objects[i].size()); err != nil {
		return nil, err
	}
	out, err := packfile.PatchDelta(base, ins)
	if err != nil {
		return nil, corruptPack(fmt.Errorf("delta at offset %d: %w", px.objects[i].offset, err))
	}
	if o := &px.objects[i]; int64(len(out)) != o.size() {
		return nil, corruptPack(fmt.Errorf("delta at offset %d made %d bytes, its header says %d", o.offset, len(out), o.size()))
	}
	return out, nil
}

// readStream reads a small delta on a large base whole.
func (px *packIndex) readStream(ctx context.Context, i int32) ([]byte, error) {
	rc, err := px.stream(ctx, i)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	buf := bytes.NewBuffer(make([]byte, 0, px.objects[i].size()))
	if _, err := io.Copy(buf, io.LimitReader(rc, px.objects[i].size()+1)); err != nil {
		return nil, corruptPack(err)
	}
	return buf.Bytes(), nil
}

// maxInstructions bounds the instructions of a delta that makes target
// bytes: two sizes of at most 10 bytes each, then instructions that each
// make at least one byte and take at most 8 (a copy) or one more than
// they make (an insert).
func maxInstructions(target int64) int64 { return 8*target + 20 }

// readRaw inflates the stored bytes of a small object (a delta's
// instructions for a delta) with the shared scanner.
func (px *packIndex) readRaw(i int32) ([]byte, error) {
	o := &px.objects[i]
	oh, err := px.sc.SeekObjectHeader(o.offset)
	if err != nil {
		return nil, corruptPack(err)
	}
	limit := o.size()
	if o.isDelta() {
		limit = maxInstructions(o.size())
	}
	if oh.Length > limit {
		return nil, corruptPack(fmt.Errorf("object at offset %d: %d bytes stored for a %d-byte object", o.offset, oh.Length, o.size()))
	}
	if err := px.work.charge(oh.Length); err != nil {
		return nil, err
	}
	buf := bytes.NewBuffer(make([]byte, 0, oh.Length))
	if _, _, err := px.sc.NextObject(buf); err != nil {
		return nil, corruptPack(err)
	}
	if int64(buf.Len()) != oh.Length {
		return nil, corruptPack(fmt.Errorf("object at offset %d inflates to %d bytes, its header says %d", o.offset, buf.Len(), oh.Length))
	}
	return buf.Bytes(), nil
}

// open streams a resolved object's content: a small one from memory (kept
// there for the deltas built on it), a large one from the pack.
func (px *packIndex) open(ctx context.Context, i int32) (io.ReadCloser, error) {
	if data, ok, err := px.small(ctx, i); err != nil {
		return nil, err
	} else if ok {
		return io.NopCloser(bytes.NewReader(data)), nil
	}
	return px.stream(ctx, i)
}

// stream reads object i from the pack, whatever its size: a whole object
// inflated, a delta applied over its base (random access: small from
// memory, large from the spill file).
func (px *packIndex) stream(ctx context.Context, i int32) (io.ReadCloser, error) {
	o := &px.objects[i]
	sc := packfile.NewScanner(io.NewSectionReader(px.f, 0, px.size))
	oh, err := sc.SeekObjectHeader(o.offset)
	if err != nil {
		return nil, corruptPack(err)
	}
	work := o.size()
	if o.isDelta() {
		work += oh.Length
	}
	if err := px.work.charge(work); err != nil {
		return nil, err
	}
	raw, err := sc.ReadObject()
	if err != nil {
		return nil, corruptPack(err)
	}
	if !o.isDelta() {
		return raw, nil
	}
	if o.base == noBase || px.objects[o.base].state != resolved {
		raw.Close()
		return nil, corruptPack(fmt.Errorf("delta at offset %d has no usable base", o.offset))
	}
	ra, err := px.readerAt(ctx, o.base)
	if err != nil {
		raw.Close()
		return nil, err
	}
	dr, err := newDeltaReader(ctx, ra, px.objects[o.base].size(), raw)
	if err != nil {
		raw.Close()
		return nil, corruptPack(fmt.Errorf("delta at offset %d: %w", o.offset, err))
	}
	return corruptReader{dr, raw}, nil
}

// readerAt gives random access to a resolved object's content, as a delta
// base needs: a small one from memory; a large one from the spill file,
// where it is written once, the first time a delta needs it. Resolution
// spills each large base before its first child, so a chain of large
// deltas recurses one level here, never along the chain.
func (px *packIndex) readerAt(ctx context.Context, i int32) (io.ReaderAt, error) {
	if data, ok, err := px.small(ctx, i); err != nil {
		return nil, err
	} else if ok {
		return bytes.NewReader(data), nil
	}
	if r, ok := px.spillAt[i]; ok {
		return io.NewSectionReader(px.spill, r.start, r.size), nil
	}
	o := &px.objects[i]
	if px.spillUsed+o.size() > px.spillMax {
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
	rc, err := px.stream(ctx, i)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	w := io.NewOffsetWriter(px.spill, px.spillUsed)
	n, err := io.Copy(w, io.LimitReader(rc, o.size()+1))
	if err != nil {
		return nil, err
	}
	if n != o.size() {
		return nil, corruptPack(fmt.Errorf("object at offset %d is %d bytes, its header says %d", o.offset, n, o.size()))
	}
	r := spillRegion{start: px.spillUsed, size: n}
	px.spillAt[i] = r
	px.spillUsed += n
	return io.NewSectionReader(px.spill, r.start, r.size), nil
}

// corruptReader reports a delta that does not apply as a corrupt pack (a
// cancelled context stays what it is); closing it closes the delta's
// instructions.
type corruptReader struct {
	r io.Reader
	io.Closer
}

func (c corruptReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil && err != io.EOF {
		err = corruptPack(err)
	}
	return n, err
}
