package main

import (
	"context"
	"fmt"
	"io"
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
//
// Only the registry is essential (SPEC §8: the cache is an optimization).
// When the cache cannot be opened, cache is nil, cacheErr says why, and
// everything runs without one; when the snapshot store cannot be opened,
// store is nil and every plan is refused with a clear install error, while
// the commands that read or edit the registry (list, show, doctor, remove,
// enable, disable, export, capabilities) work as usual. warnings say so,
// once, on stderr, and install/update add them to their JSON.
type app struct {
	home      installer.Home
	store     *store.Store
	storeErr  error
	cache     *cache.DB
	cacheErr  error
	installer *installer.Installer
	warnings  []string
	stderr    io.Writer
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

// openWith wires the backend. Only an unknown home is an error: a broken
// store or cache degrades the app (see app) instead of failing it.
func (m *Main) openWith(ctx context.Context, o openOptions) (*app, error) {
	dir, err := installer.DefaultHomeDir(m.Getenv)
	if err != nil {
		return nil, err
	}
	home := installer.Home{Dir: dir}
	log := o.log
	if log == nil {
		log = slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	}
	a := &app{home: home, stderr: m.Stderr}
	a.store, a.storeErr = store.Open(home.StoreDir(), store.Options{})
	if a.storeErr != nil {
		a.store = nil
		a.warnings = append(a.warnings, fmt.Sprintf("the snapshot store is unusable (%v): installs and updates are refused until it is repaired; list, show, doctor, remove, enable, disable and export work from the registry", a.storeErr))
	}
	a.cache, a.cacheErr = cache.OpenWith(ctx, home.CachePath(), cache.Options{Log: log})
	if a.cacheErr != nil {
		a.cache = nil
		a.warnings = append(a.warnings, fmt.Sprintf("the cache is unavailable (%v); going on without it: nothing fetched or planned is remembered, offline plans cannot use it, and the daemon cannot keep plans across restarts", a.cacheErr))
	} else {
		a.warnings = append(a.warnings, a.cache.Warnings()...)
	}
	for _, w := range a.warnings {
		if o.log != nil {
			log.Warn(w)
		} else {
			fmt.Fprintf(m.Stderr, "reasonix: warning: %s\n", w)
		}
	}

	cfg := installer.Config{Home: home, Log: log}
	if a.store != nil {
		rcfg := resolver.Config{
			Store:     a.store,
			Cache:     a.cache, // a nil *cache.DB is the resolver's "no cache"
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
		cfg.Sources = resolver.New(rcfg)
		cfg.Store = a.store
	} else {
		cfg.Sources = unusableStore{dir: home.StoreDir(), err: a.storeErr}
	}
	// The installer's stores are interfaces: a nil *cache.DB in one would
	// not be nil, so they are set only when the cache opened.
	if a.cache != nil {
		cfg.Plans, cfg.Inventories, cfg.Forget = a.cache, a.cache, a.cache
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
	a.installer = installer.New(cfg)
	return a, nil
}

// unusableStore is the resolver when the snapshot store cannot be opened:
// every source (even a local folder, whose marketplace may name remote
// entries) would need it, so every plan is refused, saying why.
type unusableStore struct {
	dir string
	err error
}

func (u unusableStore) Resolve(context.Context, resolver.Request) (*resolver.Fetched, error) {
	return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "the snapshot store %s is unusable (%v); nothing can be fetched or installed until it is repaired (fix its permissions or free space, or move it aside to start an empty one)", u.dir, u.err)
}

// notes are the warnings install and update add to their JSON: what
// openWith found, and whether the cache failed along the way.
func (a *app) notes() []string {
	out := append([]string{}, a.warnings...)
	if w := a.cacheFailures(); w != "" {
		out = append(out, w)
	}
	return out
}

// cacheFailures describes, in one line, the cache operations that failed
// and were absorbed during this command; "" when there were none.
func (a *app) cacheFailures() string {
	if a.cache == nil {
		return ""
	}
	n, op, last := a.cache.Failures()
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("the cache failed %d time(s) during this command and was bypassed (last: %s %v); the result does not depend on it, but it was not remembered", n, op, last)
}

// Close closes the cache, first saying once on stderr if it failed along
// the way.
func (a *app) Close() {
	if a.cache == nil {
		return
	}
	if w := a.cacheFailures(); w != "" {
		fmt.Fprintf(a.stderr, "reasonix: warning: %s\n", w)
	}
	_ = a.cache.Close()
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
