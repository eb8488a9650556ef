package installer

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/store"
)

// OpenOptions configure Open. Only Getenv is required.
type OpenOptions struct {
	Getenv func(string) string
	Log    *slog.Logger
	// Progress hears about bulk plans (the CLI's bars); nil: silent.
	Progress resolver.Progress
	// StepHook is called at each named step of apply and publication (the
	// crash-safety tests kill the process there).
	StepHook func(step string)
	// Budget overrides the per-snapshot and per-package budget (tests use
	// small ones); zero: SPEC §8's.
	Budget plugind.Budget
	// Hosts overrides where remote sources come from; nil: the environment's
	// GitHub and generic git hosts.
	Hosts host.Opener
	Now   func() time.Time
}

// App is the backend wired for one home: what the CLI, the daemon, the
// benchmarks and the tests all build the same way.
type App struct {
	Home      Home
	Store     *store.Store
	Cache     *cache.DB
	Resolver  *resolver.Sources
	Installer *Installer
}

// Open wires the backend for $REASONIX_HOME (SPEC §4).
func Open(ctx context.Context, opts OpenOptions) (*App, error) {
	dir, err := DefaultHomeDir(opts.Getenv)
	if err != nil {
		return nil, err
	}
	home := Home{Dir: dir}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := store.Open(home.StoreDir(), store.Options{Budget: opts.Budget})
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	db, err := cache.Open(ctx, home.CachePath())
	if err != nil {
		return nil, fmt.Errorf("open cache: %w", err)
	}
	hosts := opts.Hosts
	if hosts == nil {
		hcfg, err := resolver.HostConfigFromEnv(opts.Getenv, log)
		if err != nil {
			db.Close()
			return nil, err
		}
		h, err := resolver.NewHosts(hcfg)
		if err != nil {
			db.Close()
			return nil, err
		}
		hosts = h
	}
	res := resolver.New(resolver.Config{
		Store: st, Cache: db, Hosts: hosts, Budget: opts.Budget, Log: log,
		Offline: opts.Getenv("REASONIX_OFFLINE") == "1", Progress: opts.Progress, Now: opts.Now,
	})
	in := New(Config{
		Home: home, Sources: res, Budget: opts.Budget, Now: opts.Now, Log: log,
		Plans: db, Inventories: db, StepHook: opts.StepHook,
	})
	return &App{Home: home, Store: st, Cache: db, Resolver: res, Installer: in}, nil
}

// Close releases the cache.
func (a *App) Close() {
	if a.Cache != nil {
		_ = a.Cache.Close()
	}
}
