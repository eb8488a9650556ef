package git

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
)

// deltaReader applies one git delta as a stream: the instructions are read
// in order, and each copy reads its range of the base at its offset. Why not
// go-git's ReaderFromDelta: it reads its base as a stream, so a copy from
// an earlier offset re-opens the base and discards up to it. When the base
// is itself a delta that cost compounds along the chain, and a pack of
// binaries stored as deltas of one another (megabytes each, thousands of
// backward copies) took minutes of CPU where git takes a second. Here every
// base is random-access (a small one in memory, a large one spilled to disk
// once), so a delta costs its own size, and the context is checked at every
// instruction, so a cancelled fetch stops at once.
type deltaReader struct {
	ctx      context.Context
	base     io.ReaderAt
	baseSize int64
	ins      *bufio.Reader
	target   int64 // the size the delta's header declares
	done     int64 // bytes produced so far
	// The instruction being carried out: a copy from the base, or an
	// insert of literal bytes that follow it in ins.
	copyOff, copyLeft int64
	insertLeft        int64
}

func newDeltaReader(ctx context.Context, base io.ReaderAt, baseSize int64, instructions io.Reader) (*deltaReader, error) {
	ins := bufio.NewReaderSize(instructions, 32<<10)
	src, err := readDeltaSize(ins)
	if err != nil {
		return nil, err
	}
	target, err := readDeltaSize(ins)
	if err != nil {
		return nil, err
	}
	if int64(src) != baseSize {
		return nil, fmt.Errorf("delta expects a %d-byte base, its base is %d bytes", src, baseSize)
	}
	return &deltaReader{ctx: ctx, base: base, baseSize: baseSize, ins: ins, target: int64(target)}, nil
}

// readDeltaSize reads one of the two sizes a delta starts with (base,
// then target): little-endian base-128.
func readDeltaSize(r io.ByteReader) (uint64, error) {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		b, err := r.ReadByte()
		if err != nil {
			return 0, fmt.Errorf("delta header: %w", noEOF(err))
		}
		v |= uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("delta header: size does not fit 64 bits")
}

func (d *deltaReader) Read(p []byte) (int, error) {
	for d.copyLeft == 0 && d.insertLeft == 0 {
		if err := d.next(); err != nil {
			return 0, err
		}
	}
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var err error
	if d.copyLeft > 0 {
		p = p[:min(int64(len(p)), d.copyLeft)]
		n, err = d.base.ReadAt(p, d.copyOff)
		if n == len(p) {
			err = nil // ReadAt may say io.EOF with the last byte of the base
		}
		d.copyOff += int64(n)
		d.copyLeft -= int64(n)
	} else {
		p = p[:min(int64(len(p)), d.insertLeft)]
		n, err = io.ReadFull(d.ins, p)
		d.insertLeft -= int64(n)
	}
	d.done += int64(n)
	if err != nil {
		return n, fmt.Errorf("apply delta: %w", noEOF(err))
	}
	return n, nil
}

// next decodes the next instruction; io.EOF once the instructions end with
// the declared target size produced.
func (d *deltaReader) next() error {
	if err := d.ctx.Err(); err != nil {
		return err
	}
	cmd, err := d.ins.ReadByte()
	if err == io.EOF {
		if d.done != d.target {
			return fmt.Errorf("delta produced %d bytes, its header says %d", d.done, d.target)
		}
		return io.EOF
	}
	if err != nil {
		return err
	}
	left := d.target - d.done
	switch {
	case cmd&0x80 != 0: // copy: offset in up to 4 bytes, size in up to 3
		var off, size int64
		for i := range 7 {
			if cmd&(1<<i) == 0 {
				continue
			}
			b, err := d.ins.ReadByte()
			if err != nil {
				return fmt.Errorf("delta copy instruction: %w", noEOF(err))
			}
			if i < 4 {
				off |= int64(b) << (8 * i)
			} else {
				size |= int64(b) << (8 * (i - 4))
			}
		}
		size = cmp.Or(size, 0x10000) // a copy of size 0 copies 64 KiB (git's pack format)
		if off+size > d.baseSize || size > left {
			return fmt.Errorf("delta copies %d bytes at %d from a %d-byte base with %d bytes left to produce", size, off, d.baseSize, left)
		}
		d.copyOff, d.copyLeft = off, size
	case cmd != 0: // insert the next cmd bytes
		if int64(cmd) > left {
			return fmt.Errorf("delta inserts %d bytes with %d left to produce", cmd, left)
		}
		d.insertLeft = int64(cmd)
	default:
		return fmt.Errorf("delta instruction 0 is reserved")
	}
	return nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
