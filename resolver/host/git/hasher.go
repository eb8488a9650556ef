package git

import (
	"io"

	"github.com/go-git/go-git/v5/plumbing"

	"reasonix.io/plugind/internal/gitobj"
)

// objectHasher is gitobj.Hasher in go-git's types: a pack's objects are
// hashed with the one rule archives are proven by.
type objectHasher struct{ h *gitobj.Hasher }

func newObjectHasher() objectHasher { return objectHasher{h: gitobj.NewHasher()} }

// start begins the id of an object of type t and size bytes, whose
// content is then written to the returned writer.
func (x *objectHasher) start(t plumbing.ObjectType, size int64) io.Writer {
	return x.h.Start(t.String(), size)
}

// sum is the id of the object written since start.
func (x *objectHasher) sum() plumbing.Hash { return plumbing.Hash(x.h.Sum()) }
