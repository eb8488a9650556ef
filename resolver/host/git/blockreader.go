package git

import (
	"io"
)

// blockReader is the pack file as the shared scanner reads small objects:
// one after another, mostly near each other (a chain stored last first is
// read backwards, a delta usually lies close to its base), each a seek that
// refills the scanner's 4 KiB buffer. Keeping the last few 64 KiB blocks
// spares a system call per object.
type blockReader struct {
	r      io.ReaderAt
	size   int64
	blocks [blockCount]block
	next   int // the block to reuse next, round robin
}

const (
	blockSize  = 64 << 10
	blockCount = 4
)

type block struct {
	start int64
	n     int // bytes held; 0: empty
	data  []byte
}

func newBlockReader(r io.ReaderAt, size int64) *blockReader {
	return &blockReader{r: r, size: size}
}

func (b *blockReader) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		if off >= b.size {
			return n, io.EOF
		}
		blk, err := b.blockAt(off)
		if err != nil {
			return n, err
		}
		k := copy(p[n:], blk.data[off-blk.start:blk.n])
		n += k
		off += int64(k)
	}
	return n, nil
}

// blockAt returns the block holding off, reading it when none does.
func (b *blockReader) blockAt(off int64) (*block, error) {
	start := off - off%blockSize
	for i := range b.blocks {
		if blk := &b.blocks[i]; blk.n > 0 && blk.start == start {
			return blk, nil
		}
	}
	blk := &b.blocks[b.next]
	b.next = (b.next + 1) % blockCount
	if blk.data == nil {
		blk.data = make([]byte, blockSize)
	}
	n, err := b.r.ReadAt(blk.data[:min(blockSize, b.size-start)], start)
	if err != nil && !(err == io.EOF && int64(n) == min(blockSize, b.size-start)) {
		blk.n = 0
		return nil, err
	}
	blk.start, blk.n = start, n
	return blk, nil
}
