package fakegithub

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
)

// PackObject is one entry of a pack that BuildPack writes exactly as given:
// a whole object, or a REF delta on the object whose id is Base (which need
// not be in the pack, nor come before it, nor exist at all).
type PackObject struct {
	Type string // "commit", "tree", "blob" or "tag"; "" for a REF delta
	Data []byte // the object's content, or the delta's instructions
	Base string // a REF delta's base, 40 hex
}

var packTypes = map[string]byte{"commit": 1, "tree": 2, "blob": 3, "tag": 4}

const refDeltaType = 7

// BuildPack writes objects as a version 2 pack, in the order given, with
// none of the checks git makes: deltas may precede their bases, name bases
// that are absent or that name them back.
func BuildPack(objects []PackObject) ([]byte, error) {
	var out bytes.Buffer
	out.WriteString("PACK")
	binary.Write(&out, binary.BigEndian, uint32(2))
	binary.Write(&out, binary.BigEndian, uint32(len(objects)))
	// One deflater, reset per object: a new one costs about 1 MiB, and
	// resetting one at BestSpeed costs nothing (the default level clears
	// 640 KiB of tables each time).
	zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	for i, o := range objects {
		typ := packTypes[o.Type]
		switch {
		case o.Type == "" && isHex40(o.Base):
			typ = refDeltaType
		case typ == 0 || o.Base != "":
			return nil, fmt.Errorf("pack object %d: type %q with base %q: want a whole object's type, or a delta's 40-hex base", i, o.Type, o.Base)
		}
		writePackObjectHeader(&out, typ, len(o.Data))
		if typ == refDeltaType {
			base, _ := hex.DecodeString(o.Base)
			out.Write(base)
		}
		zw.Reset(&out)
		zw.Write(o.Data)
		if err := zw.Close(); err != nil {
			return nil, err
		}
	}
	sum := sha1.Sum(out.Bytes())
	out.Write(sum[:])
	return out.Bytes(), nil
}

// writePackObjectHeader writes the type and the inflated size: 3 bits of
// type and 4 of size, then 7 bits of size a byte.
func writePackObjectHeader(out *bytes.Buffer, typ byte, size int) {
	b := typ<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		out.WriteByte(b | 0x80)
		b = byte(size & 0x7f)
		size >>= 7
	}
	out.WriteByte(b)
}

// ObjectID is git's id of an object of typ ("blob", "tree", …) holding
// data.
func ObjectID(typ string, data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", typ, len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// Delta builds git delta instructions: the base's size and the target's,
// then copies from the base and inserts of new bytes. Nothing checks that
// they add up: a hostile delta is as easy to make as an honest one.
type Delta struct{ buf []byte }

// NewDelta starts a delta from a baseSize-byte base to a targetSize-byte
// result.
func NewDelta(baseSize, targetSize int) *Delta {
	d := &Delta{}
	d.buf = binary.AppendUvarint(d.buf, uint64(baseSize))
	d.buf = binary.AppendUvarint(d.buf, uint64(targetSize))
	return d
}

// Copy copies size bytes (at most 16 MiB - 1) of the base from offset.
func (d *Delta) Copy(offset, size int) *Delta {
	at := len(d.buf)
	d.buf = append(d.buf, 0x80)
	for i := range 4 {
		if b := byte(offset >> (8 * i)); b != 0 {
			d.buf[at] |= 1 << i
			d.buf = append(d.buf, b)
		}
	}
	if size != 0x10000 { // 0x10000 is written as no size at all
		for i := range 3 {
			if b := byte(size >> (8 * i)); b != 0 {
				d.buf[at] |= 0x10 << i
				d.buf = append(d.buf, b)
			}
		}
	}
	return d
}

// Insert inserts data, 127 bytes an instruction.
func (d *Delta) Insert(data []byte) *Delta {
	for len(data) > 0 {
		n := min(len(data), 127)
		d.buf = append(append(d.buf, byte(n)), data[:n]...)
		data = data[n:]
	}
	return d
}

// Bytes returns the instructions.
func (d *Delta) Bytes() []byte { return d.buf }

// chainBlobSize is the size of every object of a ReversedDeltaChain.
const chainBlobSize = 64

// ReversedDeltaChainContent is object i of ReversedDeltaChain: the blob at
// 0, the result of delta i after.
func ReversedDeltaChainContent(i int) []byte {
	b := fmt.Appendf(nil, "%-*s", chainBlobSize-8, "fakegithub reversed delta chain")
	return fmt.Appendf(b, "%08d", i)
}

// ReversedDeltaChain returns a blob and n REF deltas over it, delta i on
// the result of delta i-1, listed last first with the blob at the very end:
// the order no git writes, in which an indexer that resolves deltas pass
// after pass resolves one delta a pass. Each delta keeps the blob's size
// (copy 56 bytes, insert 8), so the pack costs about 42 bytes a delta and
// resolving it, done right, is linear.
func ReversedDeltaChain(n int) []PackObject {
	out := make([]PackObject, 0, n+1)
	prev := ObjectID("blob", ReversedDeltaChainContent(0))
	ids := make([]string, n+1)
	ids[0] = prev
	for i := 1; i <= n; i++ {
		ids[i] = ObjectID("blob", ReversedDeltaChainContent(i))
	}
	for i := n; i >= 1; i-- {
		target := ReversedDeltaChainContent(i)
		delta := NewDelta(chainBlobSize, chainBlobSize).Copy(0, chainBlobSize-8).Insert(target[chainBlobSize-8:])
		out = append(out, PackObject{Base: ids[i-1], Data: delta.Bytes()})
	}
	return append(out, PackObject{Type: "blob", Data: ReversedDeltaChainContent(0)})
}

// TinyBlobs returns n distinct blobs of a few bytes each (the decimal
// numbers from 0): the most objects a pack can hold for its size.
func TinyBlobs(n int) []PackObject {
	out := make([]PackObject, n)
	for i := range out {
		out[i] = PackObject{Type: "blob", Data: strconv.AppendInt(nil, int64(i), 10)}
	}
	return out
}
