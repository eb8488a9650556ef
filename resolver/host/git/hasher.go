package git

import (
	"crypto"
	"io"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/hash"
)

// objectHasher computes git object ids one object after another with one
// hash state (go-git's SHA-1, with collision detection): a new hasher for
// each of a few hundred thousand objects is garbage the collector pays for.
type objectHasher struct {
	h   hash.Hash
	buf []byte
}

func newObjectHasher() objectHasher { return objectHasher{h: hash.New(crypto.SHA1)} }

// start begins the id of an object of type t and size bytes, whose
// content is then written to the returned writer.
func (x *objectHasher) start(t plumbing.ObjectType, size int64) io.Writer {
	x.h.Reset()
	x.buf = append(append(append(x.buf[:0], t.String()...), ' '), strconv.FormatInt(size, 10)...)
	x.h.Write(append(x.buf, 0))
	return x.h
}

// sum is the id of the object written since start.
func (x *objectHasher) sum() plumbing.Hash {
	var out plumbing.Hash
	x.buf = x.h.Sum(x.buf[:0])
	copy(out[:], x.buf)
	return out
}
