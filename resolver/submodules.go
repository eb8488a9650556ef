package resolver

import (
	"context"
	"fmt"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/resolver/source"
	"reasonix.io/plugind/tarball"
)

// maxSubmoduleDepth bounds how deep submodules of submodules are followed
// (SPEC §8): a submodule of the fetched tree is at depth 1.
const maxSubmoduleDepth = 3

// submodules fetches the submodules of a tree of parent at the given depth
// (tarball.Options.Submodules): each from the URL its .gitmodules entry
// gives (relative to parent's), parsed as any source is, through the same
// host layers as every repository of the request (cache, mirror, rewrite,
// offline), at the commit the parent pins — which proves it as well as the
// parent's own pin does, so nothing more is checked — and with what is left
// of the parent's budget.
func (s *Sources) submodules(parent source.Source, depth int) tarball.SubmoduleFunc {
	return func(ctx context.Context, sm tarball.Submodule, dest string, budget plugind.Budget) (*tarball.SubmoduleTree, error) {
		if depth > maxSubmoduleDepth {
			return nil, plugind.Errorf(plugind.CodeBudgetExceeded, "of %s: submodules nested more than %d deep are not followed", parent.Key(), maxSubmoduleDepth)
		}
		src, err := source.ParseSubmoduleURL(parent, sm.URL)
		if err != nil {
			return nil, fmt.Errorf("of %s: %w", parent.Key(), err)
		}
		fail := func(err error) error {
			return fmt.Errorf("from %s: %w", src, err)
		}
		repo, err := s.repo(src, requestOf(ctx))
		if err != nil {
			return nil, fail(err)
		}
		got, err := repo.Fetch(ctx, sm.Commit, dest, host.FetchOptions{
			Paths: sm.Paths, Budget: budget, Hash: true, Concurrent: true,
			Submodules: s.submodules(src, depth+1),
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

// requestKey carries, in a Resolve's context, the request every repository
// of it is opened for (Sources.repo): a submodule met while fetching is
// opened as the rest were.
type requestKey struct{}

func withRequest(ctx context.Context, req Request) context.Context {
	return context.WithValue(ctx, requestKey{}, req)
}

func requestOf(ctx context.Context) Request {
	req, _ := ctx.Value(requestKey{}).(Request)
	return req
}
