package main

import (
	"context"
	"log/slog"
	"os"
	"syscall"

	"golang.org/x/term"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
)

// app is the backend wired for one command.
type app struct {
	*installer.App
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
	log := o.log
	if log == nil {
		log = slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelError, ReplaceAttr: plugind.RedactAttr}))
	}
	opts := installer.OpenOptions{Getenv: m.Getenv, Log: log}
	if f, ok := m.Stderr.(*os.File); ok && o.progress && term.IsTerminal(int(f.Fd())) {
		opts.Progress = newBarProgress(f)
	}
	if step := m.Getenv(crashEnv); step != "" {
		opts.StepHook = func(s string) {
			if s == step {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	} else if hook := m.slowStepHook(); hook != nil {
		opts.StepHook = hook
	}
	a, err := installer.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &app{App: a, installer: a.Installer}, nil
}
