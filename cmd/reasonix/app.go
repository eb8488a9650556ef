package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"reasonix.io/plugind/app"
	"reasonix.io/plugind/secrets"
)

// backend is the app wired for one command (app.Open), and where its
// warnings go.
type backend struct {
	*app.App
	stderr io.Writer
	// progress draws on stderr when it is a terminal (nil otherwise);
	// stop it before printing the command's output.
	progress *termProgress
}

func (m *Main) open(ctx context.Context) (*backend, error) {
	return m.openWith(ctx, openOptions{})
}

// openToRead wires the backend for a command that only reads.
func (m *Main) openToRead(ctx context.Context) (*backend, error) {
	return m.openWith(ctx, openOptions{readOnly: true})
}

// openOptions are what differs between the CLI commands and the daemon,
// which share one backend constructor. A command that prints (neither log
// nor quiet) draws progress on stderr when it is a terminal.
type openOptions struct {
	log      *slog.Logger // nil: warnings (with --verbose, debug) as text on stderr
	quiet    bool         // print nothing (shell completion)
	daemon   bool         // plans again and again: keep what planning decoded
	readOnly bool         // only reads: a home not made yet stays unmade
}

// openWith wires the backend. Only an unknown home or a bad environment is
// an error: a broken store or cache degrades the app instead, and says so
// once (on stderr, or in the daemon's log).
func (m *Main) openWith(ctx context.Context, o openOptions) (*backend, error) {
	var progress *termProgress
	logTo := m.Stderr
	if o.log == nil && !o.quiet && m.isTerminal(m.Stderr) {
		progress = newTermProgress(m.consoleFor(m.Stderr))
		logTo = progress // log lines clear the status line first
	}
	log := o.log
	switch {
	case o.quiet:
		log = slog.New(slog.DiscardHandler)
	case log == nil:
		// Warnings by default (one per failure, with a hint; retries are
		// debug), everything with -v.
		level := slog.LevelWarn
		if m.verbose {
			level = slog.LevelDebug
		}
		log = slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: level, ReplaceAttr: secrets.MaskAttr}))
	}
	opts := app.OpenOptions{Getenv: m.Getenv, Log: log, Daemon: o.daemon, ReadOnly: o.readOnly}
	if progress != nil {
		opts.Progress = progress
	}
	a, err := app.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	if m.relativeHome != "" && !o.quiet {
		a.Warnings = append(a.Warnings, fmt.Sprintf("REASONIX_HOME=%s is a relative path: this run uses %s, and a run from another folder would use another home (export REASONIX_HOME=%s to keep this one)",
			m.relativeHome, a.Home.Dir, a.Home.Dir))
	}
	for _, w := range a.Warnings {
		if o.quiet {
			break
		}
		if o.log != nil {
			log.Warn(w)
		} else {
			fmt.Fprintln(m.Stderr, m.consoleFor(m.Stderr).fit("reasonix: warning: "+secrets.Mask(w)))
		}
	}
	return &backend{App: a, stderr: m.Stderr, progress: progress}, nil
}

// Close closes the cache, first saying once on stderr if it failed along
// the way.
func (a *backend) Close() {
	a.progress.Stop()
	if w := a.CacheFailures(); w != "" {
		fmt.Fprintf(a.stderr, "reasonix: warning: %s\n", secrets.Mask(w))
	}
	a.App.Close()
}
