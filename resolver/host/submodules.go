package host

import (
	"context"
	"fmt"

	"reasonix.io/plugind"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/tarball"
)

// MaxSubmoduleDepth bounds how deep submodules of submodules are followed
// (SPEC §8): a submodule of the fetched tree is at depth 1.
const MaxSubmoduleDepth = 3

// RepoOpener opens a repository with the layers of the fetch that met it
// (a resolver's cache, offline mode and mirror; a mirror's policy).
type RepoOpener func(ctx context.Context, src source.Source) (Repo, error)

// Submodules is FetchOptions.Submodules for a tree of parent at depth: each
// submodule comes from the URL its .gitmodules entry gives (relative URLs
// against parent's), parsed as any source is, opened through open, at the
// commit the parent pins — which proves it as well as the parent's own pin
// does, so nothing more is checked — with what is left of the parent's
// budget, its own submodules one level deeper.
func Submodules(open RepoOpener, parent source.Source, depth int) tarball.SubmoduleFunc {
	return func(ctx context.Context, sm tarball.Submodule, dest string, budget plugind.Budget) (*tarball.SubmoduleTree, error) {
		if depth > MaxSubmoduleDepth {
			return nil, plugind.Errorf(plugind.CodeBudgetExceeded, "of %s: submodules nested more than %d deep are not followed", parent.Key(), MaxSubmoduleDepth)
		}
		src, err := source.ParseSubmoduleURL(parent, sm.URL)
		if err != nil {
			return nil, fmt.Errorf("of %s: %w", parent.Key(), err)
		}
		fail := func(err error) error { return fmt.Errorf("from %s: %w", src, err) }
		repo, err := open(ctx, src)
		if err != nil {
			return nil, fail(err)
		}
		got, err := repo.Fetch(ctx, sm.Commit, dest, FetchOptions{
			Paths: sm.Paths, Budget: budget, Hash: true, Concurrent: true,
			Submodules: Submodules(open, src, depth+1),
		})
		if err != nil {
			return nil, fail(err)
		}
		files, dirs := got.Tree, got.Dirs
		if files == nil {
			// A transport that did not hash as it wrote: read it once.
			_, tree, err := plugind.TreeDigest(dest, budget)
			if err != nil {
				return nil, fail(err)
			}
			files = tree.Files
		}
		return &tarball.SubmoduleTree{URL: src.String(), Files: files, Dirs: dirs, Submodules: got.Submodules}, nil
	}
}

// WithSubmodules is r whose fetches follow the submodules of the tree they
// write, each opened through open (the stack r came from), when the caller
// gave no FetchOptions.Submodules of its own.
func WithSubmodules(r Repo, open RepoOpener) Repo { return &withSubmodules{Repo: r, open: open} }

type withSubmodules struct {
	Repo
	open RepoOpener
}

// Fetch implements Repo.
func (w *withSubmodules) Fetch(ctx context.Context, sha, dest string, opts FetchOptions) (*Fetched, error) {
	if opts.Submodules == nil {
		opts.Submodules = Submodules(w.open, w.Source(), 1)
	}
	return w.Repo.Fetch(ctx, sha, dest, opts)
}
