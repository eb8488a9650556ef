package fakegithub

import (
	"context"
	"fmt"
)

// scratchRef is fast-import's name for a commit that must end up on no ref;
// the stream deletes it again before fast-import writes any ref.
const scratchRef = "refs/fakegithub/unreachable"

// CommitUnreachable writes a commit of files (as in Commit) over parent's
// tree into the repository's object store, and points no branch or tag at
// it; parent "" means the default branch's head (none in an empty
// repository). This is how GitHub serves a commit pushed only to a fork: the
// fork network shares one object store, so the REST commits/{sha}, compare
// and tarball routes serve it, while upload-pack refuses a want of it ("not
// our ref"). A product that trusts an archive alone accepts a commit the
// repository never published.
func (r *Repo) CommitUnreachable(parent string, files map[string]string) string {
	r.s.helper()
	sha, err := r.commitUnreachable(parent, files)
	if err != nil {
		r.s.fail(fmt.Errorf("%s: unreachable commit on %q: %w", r.path, parent, err))
	}
	return sha
}

func (r *Repo) commitUnreachable(parent string, files map[string]string) (string, error) {
	list, deletes := filesFromMap(files)
	ch := change{files: list, deletes: deletes}
	if err := ch.check(); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if parent != "" {
		if !isHex40(parent) {
			return "", fmt.Errorf("parent %q is not a 40-hex commit id (or \"\" for the default branch's head)", parent)
		}
		if err := r.mustBeCommit(ctx, parent); err != nil {
			return "", err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if parent == "" {
		var err error
		if parent, err = r.head(ctx, r.defaultBranch); err != nil {
			return "", err
		}
	}
	return r.fastCommit(ctx, scratchRef, parent, "no branch or tag", ch, true)
}
