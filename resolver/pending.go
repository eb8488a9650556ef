package resolver

import (
	"context"

	"reasonix.io/plugind"
)

// TODO(issue 3, issue 4): remote and marketplace sources. Until then they
// are refused with a clear error rather than half-handled.
func (s *Sources) resolveRemote(ctx context.Context, req Request) (*Fetched, error) {
	return nil, plugind.Errorf(plugind.CodeInvalidSource, "source %q: remote sources are not supported by this build", req.Source)
}

func (s *Sources) resolveLocalMarketplace(ctx context.Context, req Request, dir string) (*Fetched, error) {
	return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s is a marketplace: marketplace installs are not supported by this build", dir)
}
