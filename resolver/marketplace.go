package resolver

import (
	"context"

	"reasonix.io/plugind"
)

// resolveLocalMarketplace plans a local marketplace folder. Marketplaces are
// the next piece of work (issue 4); until then they are refused clearly.
func (s *Sources) resolveLocalMarketplace(ctx context.Context, req Request, dir string) (*Fetched, error) {
	return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s is a marketplace (.claude-plugin/marketplace.json): marketplace installs are not supported yet", dir)
}
