package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/jsonout"
)

func writeJSON(w io.Writer, v any) error { return jsonout.Write(w, v) }

// fail prints err for a text command and returns the exit-1 error. The
// message may quote a source or a plugin's text: it is masked and escaped.
func fail(w io.Writer, err error) error {
	fmt.Fprintf(w, "reasonix: %s\n", errorText(err))
	return errFailed
}

// shown says how a command's structured response is shown to a person.
type shown struct {
	cmd command
	// offline: the plan was made from the cache on purpose (--offline),
	// so "up to date" only means "as cached".
	offline bool
	// approve, for a dry run, is the command that applies exactly the
	// plan of resp (nil: no review of a plan, or none to approve).
	approve func(resp *installer.Response) []string
}

// respond runs op against the backend and prints its structured response,
// the same JSON the HTTP API returns, on stdout, byte for byte in every
// mode. Then, on a terminal and without --json, the review (what was
// planned or done, FULL TRUST blocks last, the approving command), so that
// it is what stays on screen; off a terminal a FULL TRUST runtime still
// gets its one-line banner. Last, in every mode, the result line. A
// refused or failed operation exits 1.
func (m *Main) respond(ctx context.Context, sh shown, op func(a *backend) *installer.Response) error {
	con := m.consoleFor(m.Stderr)
	a, err := m.open(ctx)
	if err != nil {
		return m.refused(sh, "", err)
	}
	resp := op(a)
	if !resp.OK && !resp.Applied && ctx.Err() != nil {
		// Interrupted (Ctrl-C, SIGTERM): whatever the work was doing when
		// its context ended, the answer is that it was cancelled, and
		// publication never began or was rolled back.
		resp.Status = installer.StatusFailed
		resp.Err = plugind.Errorf(plugind.CodeCancelled, "interrupted: nothing was installed or changed")
	}
	// What opening found (a cache moved aside or unavailable, a broken
	// store) and cache failures belong to the answer too.
	resp.Warnings = append(a.Notes(), resp.Warnings...)
	defer a.closing()()
	// The response echoes the source and quotes it in errors and warnings:
	// credentials in them are masked before printing.
	resp = resp.Redacted()
	if err := writeJSON(m.Stdout, resp); err != nil {
		return err
	}
	review := con.terminal && !m.asJSON
	switch {
	case review && sh.cmd != cmdRemove:
		con.review(resp, sh)
		con.blank()
	case review:
		con.warnings(resp.Warnings)
	default:
		fullTrustBanner(m.Stderr, resp)
	}
	con.responseResult(sh, resp, review)
	if !resp.OK {
		if plugind.CodeOf(resp.Err) == plugind.CodeCancelled {
			return errInterrupted
		}
		return errFailed
	}
	return nil
}

// fullTrustBanner warns on stderr about every FULL TRUST runtime a plan
// would install (or just installed), naming the command it runs. There is
// no second prompt — approving the plan is the authorization (the seeds) —
// but it cannot be missed.
func fullTrustBanner(w io.Writer, resp *installer.Response) {
	for _, a := range resp.Actions {
		if a.Runtime == nil || (a.Status != installer.ActionReady && a.Status != installer.ActionInstalled) {
			continue
		}
		verb := "would run"
		if a.Status == installer.ActionInstalled {
			verb = "runs"
		}
		cmd := strings.Join(append([]string{a.Runtime.Command}, a.Runtime.Args...), " ")
		fmt.Fprintf(w, "!! FULL TRUST: %s %s %s outside the sandbox, with your user's permissions\n", safeText(a.Name), verb, safeText(cmd))
	}
}

// query runs a read-only command: it asks the backend for one value and
// prints it as JSON with --json, else as text. A backend error prints on
// stderr and exits 1.
func query[T any](ctx context.Context, m *Main, get func(a *backend) (T, error), text func(io.Writer, T)) error {
	a, err := m.openToRead(ctx)
	if err != nil {
		return fail(m.Stderr, err)
	}
	defer a.Close()
	v, err := get(a)
	a.progress.Stop()
	if err != nil {
		return fail(m.Stderr, err)
	}
	if m.asJSON {
		return writeJSON(m.Stdout, v)
	}
	text(m.Stdout, v)
	return nil
}

// refused answers a command of sh refused before it reached the backend
// (asked names what it was asked): still the structured response on
// stdout, which scripts read, and the result line; exit 1.
func (m *Main) refused(sh shown, asked string, err error) error {
	resp := installer.ErrorResponse(asked, err).Redacted()
	_ = writeJSON(m.Stdout, resp)
	m.consoleFor(m.Stderr).responseResult(sh, resp, false)
	return errFailed
}

// mutate runs a mutating command that answers with a value (marketplace
// add/update/remove, export…): its JSON on stdout with --json, then, in
// every mode, its result (the result line on stderr, after any details).
// A backend error is that line: "✗ " + nothing, and why; exit 1.
func mutate[T any](ctx context.Context, m *Main, nothing string, do func(a *backend) (T, error), result func(con *console, v T) error) error {
	con := m.consoleFor(m.Stderr)
	a, err := m.open(ctx)
	if err != nil {
		return con.failed(nothing, err)
	}
	defer a.Close()
	v, err := do(a)
	a.progress.Stop()
	if err != nil {
		return con.failed(nothing, err)
	}
	if m.asJSON {
		if err := writeJSON(m.Stdout, v); err != nil {
			return err
		}
	}
	return result(con, v)
}
