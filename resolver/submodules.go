package resolver

import (
	"context"

	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/tarball"
)

// submodules fetches the submodules of a tree of parent (SPEC §8) through
// the same host layers as every repository of the request: cache, mirror,
// rewrite, offline.
func (s *Sources) submodules(parent source.Source) tarball.SubmoduleFunc {
	return host.Submodules(func(ctx context.Context, src source.Source) (host.Repo, error) {
		return s.repo(src, requestOf(ctx))
	}, parent, 1)
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
