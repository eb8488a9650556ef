// Package gitobj computes git object ids the way git does: blobs and trees
// ("TYPE SIZE\0" then the content, SHA-1 with collision detection, as
// go-git hashes), tree entries sorted git's way. The git host hashes the
// objects of a pack with it, the archive extractor the files of an archive,
// so a tree proven against a commit is hashed by one rule (SPEC §17).
package gitobj

import (
	"crypto"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing/hash"
)

// ID is a git object id (SHA-1).
type ID [20]byte

// String is the id in hex, as git spells it.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// IsZero reports the zero id (no object).
func (id ID) IsZero() bool { return id == ID{} }

// ParseID reads a 40-hex object id.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 2*len(id) {
		return id, fmt.Errorf("%q is not a 40-hex git object id", s)
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("%q is not a 40-hex git object id", s)
	}
	return id, nil
}

// Object types, as an object's header names them.
const (
	TypeBlob   = "blob"
	TypeTree   = "tree"
	TypeCommit = "commit"
	TypeTag    = "tag"
)

// Hasher computes object ids one after another with one hash state: a new
// state for each of a few hundred thousand objects is garbage the
// collector pays for. Not safe for concurrent use.
type Hasher struct {
	h   hash.Hash
	buf []byte
}

// NewHasher returns a Hasher.
func NewHasher() *Hasher { return &Hasher{h: hash.New(crypto.SHA1)} }

// Start begins the id of an object of type typ and size bytes, whose
// content is then written to the returned writer; Sum ends it.
func (x *Hasher) Start(typ string, size int64) io.Writer {
	x.h.Reset()
	x.buf = append(append(append(x.buf[:0], typ...), ' '), strconv.FormatInt(size, 10)...)
	x.h.Write(append(x.buf, 0))
	return x.h
}

// Sum is the id of the object written since Start.
func (x *Hasher) Sum() ID {
	var out ID
	x.buf = x.h.Sum(x.buf[:0])
	copy(out[:], x.buf)
	return out
}

// Blob is the id of a blob holding data (a link's target).
func (x *Hasher) Blob(data []byte) ID {
	w := x.Start(TypeBlob, int64(len(data)))
	_, _ = w.Write(data)
	return x.Sum()
}
