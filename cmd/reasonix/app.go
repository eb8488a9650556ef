package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"syscall"

	"golang.org/x/term"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/store"
)

// app is the backend wired for one command.
type app struct {
	home      installer.Home
	store     *store.Store
	cache     *cache.DB
	installer *installer.Installer
}

// crashEnv names the test-only crash switch: when set to a step name of
// apply/publication, the process kills itself with SIGKILL at that step.
// The crash-safety tests use it; nothing else should.
const crashEnv = "REASONIX_TEST_CRASHPOINT"

func (m *Main) open(ctx context.Context) (*app, error) {
	return m.openWith(ctx, openOptions{progress: true})
}

// openOptions are what differs between the CLI commands and the daemon,
// which share one backend constructor.
type openOptions struct {
	progress bool         // progress bars on stderr when it is a terminal
	log      *slog.Logger // nil: errors only, as text on stderr
}

func (m *Main) openWith(ctx context.Context, o openOptions) (*app, error) {
	dir, err := installer.DefaultHomeDir(m.Getenv)
	if err != nil {
		return nil, err
	}
	home := installer.Home{Dir: dir}
	st, err := store.Open(home.StoreDir(), store.Options{})
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	db, err := cache.Open(ctx, home.CachePath())
	if err != nil {
		return nil, fmt.Errorf("open cache: %w", err)
	}
	log := o.log
	if log == nil {
		log = slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelError, ReplaceAttr: plugind.RedactAttr}))
	}
	rcfg := resolver.Config{
		Store:     st,
		Cache:     db,
		Log:       log,
		GitHubURL: m.Getenv("REASONIX_GITHUB_URL"),
		APIURL:    m.Getenv("REASONIX_GITHUB_API_URL"),
		Token:     firstNonEmpty(m.Getenv("GITHUB_TOKEN"), m.Getenv("GH_TOKEN")),
		GitOff:    m.Getenv("REASONIX_GIT") == "off",
		Offline:   m.Getenv("REASONIX_OFFLINE") == "1",
	}
	if f, ok := m.Stderr.(*os.File); ok && o.progress && term.IsTerminal(int(f.Fd())) {
		rcfg.Progress = f
	}
	cfg := installer.Config{
		Home:        home,
		Sources:     resolver.New(rcfg),
		Log:         log,
		Plans:       db,
		Inventories: db,
	}
	if step := m.Getenv(crashEnv); step != "" {
		cfg.StepHook = func(s string) {
			if s == step {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	} else if hook := m.slowStepHook(); hook != nil {
		cfg.StepHook = hook
	}
	return &app{home: home, store: st, cache: db, installer: installer.New(cfg)}, nil
}

func (a *app) Close() {
	if a.cache != nil {
		_ = a.cache.Close()
	}
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
