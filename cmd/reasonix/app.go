package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"

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
	return m.openWith(ctx, app.OpenOptions{})
}

// openToRead wires the backend for a command that only reads.
func (m *Main) openToRead(ctx context.Context) (*backend, error) {
	return m.openWith(ctx, app.OpenOptions{ReadOnly: true})
}

// openWith wires the backend with opts, for the environment of m. Only an
// unknown home or a bad environment is an error: a broken store or cache
// degrades the app instead, and says so once: in opts.Log when the caller
// gives one (the daemon's; a discarding one for shell completion), else
// as text on stderr, where progress is drawn when it is a terminal.
func (m *Main) openWith(ctx context.Context, opts app.OpenOptions) (*backend, error) {
	var progress *termProgress
	printed := opts.Log == nil
	if printed {
		logTo := m.Stderr
		if m.isTerminal(m.Stderr) {
			progress = &termProgress{con: m.consoleFor(m.Stderr), silent: map[string]bool{}}
			logTo = progress // log lines clear the status line first
			opts.Progress = progress
		}
		// Warnings by default (one per failure, with a hint; retries are
		// debug), everything with -v.
		level := slog.LevelWarn
		if m.verbose {
			level = slog.LevelDebug
		}
		opts.Log = slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: level, ReplaceAttr: secrets.MaskAttr}))
	}
	opts.Getenv = m.Getenv
	a, err := app.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	if m.relativeHome != "" {
		a.Warnings = append(a.Warnings, fmt.Sprintf("REASONIX_HOME=%s is a relative path: this run uses %s, and a run from another folder would use another home (export REASONIX_HOME=%s to keep this one)",
			m.relativeHome, a.Home.Dir, a.Home.Dir))
	}
	for _, w := range a.Warnings {
		if printed {
			fmt.Fprintln(m.Stderr, m.consoleFor(m.Stderr).fit("reasonix: warning: "+secrets.Mask(w)))
		} else {
			opts.Log.Warn(w)
		}
	}
	return &backend{App: a, stderr: m.Stderr, progress: progress}, nil
}

// Close closes the cache, first saying once on stderr if it failed along
// the way.
func (a *backend) Close() { a.closing()() }

// closing stops the progress and starts closing the backend: the cache's
// last connection checkpoints its log (three fsyncs, 2 ms of a 50 ms
// re-plan) while the caller prints its answer. done waits for that, then
// warns of any cache failure, as the last line.
func (a *backend) closing() (done func()) {
	a.progress.Stop()
	failures := a.CacheFailures()
	var closed sync.WaitGroup
	closed.Go(a.App.Close)
	return func() {
		closed.Wait()
		if failures != "" {
			fmt.Fprintf(a.stderr, "reasonix: warning: %s\n", secrets.Mask(failures))
		}
	}
}
