package main

import (
	"fmt"
	"log/slog"
	"os"
	"syscall"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/store"
)

// app is the backend wired for one command.
type app struct {
	home      installer.Home
	store     *store.Store
	installer *installer.Installer
}

// crashEnv names the test-only crash switch: when set to a step name of
// apply/publication, the process kills itself with SIGKILL at that step.
// The crash-safety tests use it; nothing else should.
const crashEnv = "REASONIX_TEST_CRASHPOINT"

func (m *Main) open() (*app, error) {
	dir, err := installer.DefaultHomeDir(m.Getenv)
	if err != nil {
		return nil, err
	}
	home := installer.Home{Dir: dir}
	st, err := store.Open(home.StoreDir(), store.Options{})
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	log := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := installer.Config{
		Home:    home,
		Sources: resolver.New(resolver.Config{Store: st, Log: log}),
		Log:     log,
	}
	if step := m.Getenv(crashEnv); step != "" {
		cfg.StepHook = func(s string) {
			if s == step {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}
	return &app{home: home, store: st, installer: installer.New(cfg)}, nil
}
