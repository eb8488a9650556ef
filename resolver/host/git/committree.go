package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"

	"reasonix.io/plugind/internal/gitobj"
	"reasonix.io/plugind/resolver/host"
)

// maxCommitTreePack bounds the pack of a commit and its root tree.
const maxCommitTreePack = 4 << 20

// CommitTree implements host.CommitTrees: a depth-1 fetch of the commit
// alone with its root tree (filter tree:1), no other tree, no blob — a
// few KiB, over the advertisement the plan holds anyway. It needs a
// server that filters and lets the commit be wanted (a tip, or
// allow-tip/reachable-sha1-in-want: GitHub does); otherwise it answers
// errors.ErrUnsupported, and the caller asks elsewhere. The pack's ids are
// checked as it is indexed, so the tree id is the commit's own.
func (r *Repo) CommitTree(ctx context.Context, sha string) (host.CommitTree, error) {
	sess, adv, err := r.advertise(ctx)
	if err != nil {
		return host.CommitTree{}, err
	}
	defer sess.Close()
	wantable := adv.refs.Has(sha) || adv.caps.Supports(capability.AllowReachableSHA1InWant) || adv.caps.Supports(capability.AllowTipSHA1InWant)
	if !wantable || !adv.caps.Supports(capability.Filter) {
		return host.CommitTree{}, fmt.Errorf("%s neither filters nor serves commits by id: %w", r.src.Key(), errors.ErrUnsupported)
	}
	req := packp.NewUploadPackRequestFromCapabilities(adv.caps)
	req.Wants = []plumbing.Hash{plumbing.NewHash(sha)}
	req.Depth = packp.DepthCommits(1)
	_ = req.Capabilities.Set(capability.Shallow)
	req.Filter = packp.FilterTreeDepth(1) // the commit and its root tree
	_ = req.Capabilities.Set(capability.Filter)
	if adv.caps.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	scratch, err := os.MkdirTemp("", "reasonix-commit-")
	if err != nil {
		return host.CommitTree{}, err
	}
	defer os.RemoveAll(scratch)
	px, err := r.fetchPack(ctx, sess, req, filepath.Join(scratch, "commit.pack"), historyLimits(maxCommitTreePack))
	if err != nil {
		return host.CommitTree{}, err
	}
	defer px.Close()
	tw := &treeWalker{ctx: ctx, px: px}
	var c object.Commit
	if err := tw.decode(plumbing.NewHash(sha), plumbing.CommitObject, &c); err != nil {
		return host.CommitTree{}, unreadable(err, "read commit %s of %s", sha, r.src.Key())
	}
	out := host.CommitTree{ID: c.TreeHash.String()}
	if t, err := tw.tree(c.TreeHash); err == nil {
		out.Entries = entriesOf(t)
	}
	return out, nil
}

// entriesOf is a tree's entries as gitobj lists them.
func entriesOf(t *object.Tree) []gitobj.Entry {
	out := make([]gitobj.Entry, 0, len(t.Entries))
	for _, e := range t.Entries {
		mode := uint32(e.Mode)
		if e.Mode == filemode.Deprecated {
			mode = gitobj.ModeFile
		}
		out = append(out, gitobj.Entry{Name: e.Name, Mode: mode, ID: gitobj.ID(e.Hash)})
	}
	return out
}
