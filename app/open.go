// Package app is the composition root (SPEC §3): it opens the home, the
// snapshot store, the cache, the host stack and the installer, once, the
// same way for the CLI, the daemon, the mirror and the benchmarks.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/cache/maintain"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/resolver/host/mirror"
	"reasonix.io/plugind/store"
)

// OpenOptions configure Open. Only Getenv is required.
type OpenOptions struct {
	Getenv func(string) string
	Log    *slog.Logger
	// Progress hears about bulk plans (the CLI's bars); nil: silent.
	Progress resolver.Progress
	// Hosts overrides where remote sources come from (tests point them at
	// a fake); nil: the environment's.
	Hosts *resolver.HostConfig
	// Daemon: the process plans again and again, so what planning decoded
	// (the registry, marketplace documents, cached manifests) is kept for
	// the next plan (a one-shot command would only hold it until it
	// exits), and relative paths name nothing (installer.Config.NoWorkingDir).
	Daemon bool
	// ReadOnly says the command only reads (list, show, doctor…): a home
	// that does not exist yet is left unmade, and read as empty.
	ReadOnly bool
}

// ErrNoHome is the store's error in a read-only App whose home does not
// exist yet: there is nothing to read, and nothing was made.
var ErrNoHome = errors.New("the Reasonix home does not exist yet (the first install makes it)")

// App is the backend wired for one home: what the CLI, the daemon, the
// benchmarks and the tests all build the same way.
//
// Only the registry is essential (SPEC §8: the cache is an optimization).
// When the cache cannot be opened, Cache is nil, CacheErr says why, and
// everything runs without one; when the snapshot store cannot be opened,
// Store is nil and every plan is refused with a clear install error, while
// the commands that read or edit the registry work as usual. Warnings say
// so, for the caller to show once.
type App struct {
	Home      installer.Home
	Store     *store.Store
	StoreErr  error
	Cache     *cache.DB
	CacheErr  error
	Resolver  resolver.Resolver
	Installer *installer.Installer
	Warnings  []string
	// Offline: REASONIX_OFFLINE=1 asked for no network (the resolver
	// answers from the cache; the daemon's update check is skipped).
	Offline bool
}

// Open wires the backend for $REASONIX_HOME (SPEC §4). Only an unknown home
// or a bad environment is an error: a broken store or cache degrades the
// App instead of failing it.
func Open(ctx context.Context, opts OpenOptions) (*App, error) {
	home, err := installer.DefaultHome(opts.Getenv)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(home.Dir); opts.ReadOnly && errors.Is(err, fs.ErrNotExist) {
		// Nothing installed, nothing known: read as an empty home rather
		// than making one for a command that only looks.
		a := &App{Home: home, StoreErr: ErrNoHome, CacheErr: ErrNoHome, Resolver: unusableStore{dir: home.StoreDir(), err: ErrNoHome}}
		a.Installer = installer.New(installer.Config{Home: home, Sources: a.Resolver, Log: opts.Log})
		return a, nil
	}
	log := cmp.Or(opts.Log, slog.New(slog.DiscardHandler))
	hosts, hcfg, err := openHosts(opts, home, log)
	if err != nil {
		return nil, err
	}
	sumLog, err := openChecksumLog(opts.Getenv, home, hcfg)
	if err != nil {
		return nil, err
	}
	a := &App{Home: home, Offline: opts.Getenv("REASONIX_OFFLINE") == "1"}
	// Before anything else reads or writes the home: a loose one is made
	// private first (or said to be unsafe).
	if note, err := home.Secure(); err != nil {
		a.Warnings = append(a.Warnings, err.Error())
	} else if note != "" {
		a.Warnings = append(a.Warnings, note)
	}
	a.Store, a.StoreErr = store.Open(home.StoreDir(), store.Options{})
	if a.StoreErr != nil {
		a.Store = nil
		a.Warnings = append(a.Warnings, fmt.Sprintf("the snapshot store is unusable (%v): installs and updates are refused until it is repaired; list, show, doctor, remove, enable, disable and export work from the registry", a.StoreErr))
	}
	a.Cache, a.CacheErr = cache.OpenWith(ctx, home.CachePath(), cache.Options{Log: log})
	if a.CacheErr != nil {
		a.Cache = nil
		a.Warnings = append(a.Warnings, fmt.Sprintf("the cache is unavailable (%v); going on without it: nothing fetched or planned is remembered, offline plans cannot use it, and the daemon cannot keep plans across restarts", a.CacheErr))
	} else {
		a.Warnings = append(a.Warnings, a.Cache.Warnings()...)
	}
	// The daemon plans the same marketplaces again and again: one bounded
	// LRU of what planning decoded, shared by its resolver and installer.
	// The CLI plans once and keeps nothing.
	var decoded *cache.Decoded
	if opts.Daemon {
		decoded = cache.NewDecoded(cache.DecodedEntries)
	}
	cfg := installer.Config{Home: home, Store: a.Store, Cache: a.Cache, Log: log, StepHook: stepHook(opts.Getenv), NoWorkingDir: opts.Daemon, Decoded: decoded}
	if hosts.HasMirror() {
		cfg.RuntimePolicy = func(ctx context.Context, offline bool) (resolver.RuntimeRule, error) {
			return hosts.RuntimePolicy(ctx, offline || a.Offline)
		}
	}
	if a.Store != nil {
		a.Resolver = resolver.New(resolver.Config{
			Store: a.Store, Cache: a.Cache, Hosts: hosts, Log: log, Progress: opts.Progress,
			Offline: a.Offline, Decoded: decoded, ChecksumLog: sumLog,
		})
	} else {
		a.Resolver = unusableStore{dir: home.StoreDir(), err: a.StoreErr}
	}
	cfg.Sources = a.Resolver
	a.Installer = installer.New(cfg)
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

// Maintenance is the cache and store commands' backend for this home.
func (a *App) Maintenance() *maintain.Maintenance {
	return &maintain.Maintenance{Home: a.Installer, Store: a.Store, Cache: a.Cache, CacheErr: a.CacheErr}
}

// CacheFailures describes, in one line, the cache operations that failed
// and were absorbed so far; "" when there were none.
func (a *App) CacheFailures() string {
	if a.Cache == nil {
		return ""
	}
	n, op, last := a.Cache.Failures()
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("the cache failed %d time(s) during this command and was bypassed (last: %s %v); the result does not depend on it, but it was not remembered", n, op, last)
}

// Notes are the warnings an install or update adds to its response: what
// Open found, and whether the cache failed along the way.
func (a *App) Notes() []string {
	out := append([]string{}, a.Warnings...)
	if w := a.CacheFailures(); w != "" {
		out = append(out, w)
	}
	return out
}

// Close releases the cache.
func (a *App) Close() {
	if a.Cache != nil {
		_ = a.Cache.Close()
	}
}

// openHosts opens where remote sources come from: as opts.Hosts or else the
// environment says (SPEC §4), the team mirror in front when REASONIX_MIRROR
// names one (§15).
func openHosts(opts OpenOptions, home installer.Home, log *slog.Logger) (*resolver.Hosts, resolver.HostConfig, error) {
	var cfg resolver.HostConfig
	if opts.Hosts != nil {
		cfg = *opts.Hosts
	} else if env, err := resolver.HostConfigFromEnv(opts.Getenv, log); err == nil {
		cfg = env
	} else {
		return nil, cfg, err
	}
	mcfg, ok, err := mirror.ConfigFromEnv(opts.Getenv)
	if err != nil {
		return nil, cfg, err
	}
	if ok {
		mcfg.PolicyFile = home.MirrorPolicyPath()
		cfg.Mirror = &mcfg
	}
	hosts, err := resolver.NewHosts(cfg)
	return hosts, cfg, err
}

// openChecksumLog opens the checksum log REASONIX_CHECKSUM_LOG names
// (SPEC §17); nil when it names none, and nothing is then asked or
// written. Its tiles and lookups are cached under cache/checksumlog, the
// latest tree head of each log is remembered under checksumlog/ (state:
// losing it forgets what the log promised). The mirror's token goes to
// the log only when the log is served by the mirror itself.
func openChecksumLog(getenv func(string) string, home installer.Home, hcfg resolver.HostConfig) (*host.ChecksumLog, error) {
	lcfg, err := host.ParseChecksumLog(getenv(host.ChecksumLogEnv))
	if err != nil {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%v", err)
	}
	if lcfg == nil {
		return nil, nil
	}
	cfg := host.ChecksumLogConfig{
		Log: lcfg, CacheDir: filepath.Join(home.CacheDir(), "checksumlog"), StateDir: filepath.Join(home.Dir, "checksumlog"),
		Net: hcfg.Net,
	}
	if m := hcfg.Mirror; m != nil {
		cfg.MirrorURLs, cfg.MirrorToken = m.URLs, m.Token
	}
	return host.NewChecksumLog(cfg)
}

// Upstream opens the hosts a team mirror's replica fetches from (SPEC
// §15): as a client reaches them, never through a mirror, and, unless
// allowPrivate, at public addresses only.
func Upstream(getenv func(string) string, log *slog.Logger, allowPrivate bool) (*resolver.Hosts, error) {
	hcfg, err := resolver.HostConfigFromEnv(getenv, log)
	if err != nil {
		return nil, err
	}
	hcfg.Net.PublicOnly = !allowPrivate
	return resolver.NewHosts(hcfg)
}
