package host

import (
	"context"
	"errors"

	"reasonix.io/plugind/internal/gitobj"
)

// ProofGitTree is Fetched.Proof when the content was proven to be the
// commit's tree: its git tree id, computed over what arrived, is the one
// the commit names (SPEC §17). A git fetch proves it by construction (every
// object's id is checked as the pack is indexed); an archive by hashing
// what it held.
const ProofGitTree = "git-tree"

// CommitTree is what a commit object says of its tree.
type CommitTree struct {
	ID string // the tree's id
	// Entries are the root tree's entries, when the transport had them
	// at hand (nil otherwise): where an archive that differs goes wrong
	// first.
	Entries []gitobj.Entry
}

// CommitTrees reads commit objects: the git transport, which asks for the
// commit alone (and its root tree) from a server that filters.
type CommitTrees interface {
	// CommitTree reads commit sha's tree id. An error wrapping
	// errors.ErrUnsupported says this transport cannot, here.
	CommitTree(ctx context.Context, sha string) (CommitTree, error)
}

// CommitTree implements CommitTrees when the Repo below does, with
// retries.
func (r *Retry) CommitTree(ctx context.Context, sha string) (ct CommitTree, err error) {
	inner, ok := r.Repo.(CommitTrees)
	if !ok {
		return CommitTree{}, errors.ErrUnsupported
	}
	err = r.do(ctx, "commit tree", func() error { ct, err = inner.CommitTree(ctx, sha); return err })
	return ct, err
}
