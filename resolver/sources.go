package resolver

import (
	"context"
	"log/slog"

	"reasonix.io/plugind"
	"reasonix.io/plugind/store"
)

// Sources is the Resolver over every source kind of SPEC §5.
type Sources struct {
	store  *store.Store
	budget plugind.Budget
	log    *slog.Logger
}

// Config configures Sources.
type Config struct {
	Store  *store.Store
	Budget plugind.Budget
	Log    *slog.Logger
}

// New returns a Resolver over cfg.
func New(cfg Config) *Sources {
	if cfg.Budget == (plugind.Budget{}) {
		cfg.Budget = plugind.DefaultBudget
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Sources{store: cfg.Store, budget: cfg.Budget, log: cfg.Log}
}

// Resolve implements Resolver.
func (s *Sources) Resolve(ctx context.Context, req Request) (*Fetched, error) {
	if isLocal(req.Source) {
		return s.resolveLocal(ctx, req)
	}
	return s.resolveRemote(ctx, req)
}
