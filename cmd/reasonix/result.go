package main

import (
	"errors"
	"fmt"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/resolver/host"
)

// Every mutating command ends with one result line on stderr, in every mode
// (SPEC §11): what it did or would do, in counts, marked ✓ when it did all
// it was asked and ✗ when it did nothing. On a terminal it is the last line
// on screen (wrapped to its width, never cut: it may be all a person reads).

// command names a mutating command for its result line.
type command string

const (
	cmdInstall command = "install"
	cmdUpdate  command = "update"
	cmdRemove  command = "remove"
	cmdPrune   command = "prune"
	cmdSync    command = "sync"
	cmdLock    command = "lock --update"
)

const (
	markDone   = "✓"
	markFailed = "✗"
)

// ok prints a result line for something done.
func (c *console) ok(format string, args ...any) {
	c.result(c.good(markDone) + " " + fmt.Sprintf(format, args...))
}

// failed prints a result line for something not done, with why, and
// returns the exit-1 error of a command that did nothing.
func (c *console) failed(what string, err error) error {
	c.result(c.bad(markFailed+" "+what+":") + " " + errorText(err))
	return errFailed
}

// result prints line as the result line, wrapped to the terminal.
func (c *console) result(line string) {
	fmt.Fprintln(c.w, c.fit(line))
}

// errorText is an error as the CLI prints it: its message, masked and
// escaped, then its code (which is never masked).
func errorText(err error) string {
	if code := plugind.CodeOf(err); code != "" {
		return fmt.Sprintf("%s [%s]", errorBody(err, err.Error()), code)
	}
	return errorBody(err, err.Error())
}

// errorBody is text, err's message, escaped for a terminal. The checksum
// log's SECURITY ERROR is a block, as Go prints it: its lines are kept
// (each escaped on its own, tabs as spaces); any other message is one line.
func errorBody(err error, text string) string {
	if !errors.Is(err, host.ErrLogSecurity) {
		return safeText(text)
	}
	lines := strings.Split(strings.ReplaceAll(text, "\t", "    "), "\n")
	for i, l := range lines {
		lines[i] = safeText(l)
	}
	return strings.Join(lines, "\n")
}

// responseResult prints the result line of resp, the response of cmd.
// reviewed says the review above holds the details ("see above"); else
// the JSON on stdout does.
func (c *console) responseResult(sh shown, resp *installer.Response, reviewed bool) {
	cmd, t := sh.cmd, resp.Tally()
	see := "see actions in the JSON"
	if reviewed {
		see = "see above"
	}
	nothing := map[command]string{cmdInstall: "nothing installed", cmdUpdate: "nothing updated", cmdRemove: "nothing removed", cmdPrune: "nothing pruned", cmdSync: "nothing synced", cmdLock: "the lock is not written"}[cmd]
	switch {
	case plugind.CodeOf(resp.Err) == plugind.CodeCancelled:
		_ = c.failed("interrupted", resp.Err)
		return
	case resp.Status == installer.StatusRefused || resp.Status == installer.StatusFailed:
		_ = c.failed(nothing, resp.Err)
		return
	case resp.Status == installer.StatusUnchecked:
		c.result(c.warn(t.UncheckedText()) + upToDateSuffix(t))
		return
	}

	var line string
	names := doneNames(resp)
	switch cmd {
	case cmdRemove:
		c.ok("removed %s", safeText(strings.Join(names, ", ")))
		return
	case cmdPrune:
		switch {
		case len(names) == 0:
			c.ok("nothing to prune: every dependency installed is still needed")
		case resp.Applied:
			c.ok("pruned %s: %s", plural(len(names), "plugin"), safeText(strings.Join(names, ", ")))
		default:
			c.result(fmt.Sprintf("would prune %s: %s — nothing removed yet (rerun with --yes)", plural(len(names), "plugin"), safeText(strings.Join(names, ", "))))
		}
		return
	case cmdSync:
		switch {
		case resp.Status == installer.StatusUpToDate:
			line = "the home matches the lock"
		case resp.Applied:
			line = "synced to the lock: " + plural(t.Done, "plugin") + " changed"
		default:
			line = "planned a sync: " + plural(t.Ready, "plugin") + " to install or move"
		}
	case cmdLock:
		if len(names) == 0 {
			c.ok("%s is current: every wanted plugin is still at its locked pin (%s)", safeText(resp.Source), plural(t.UpToDate, "plugin"))
			return
		}
		line = "wrote " + safeText(resp.Source) + ": " + plural(t.Ready, "plugin") + " added, moved or dropped"
	case cmdUpdate:
		switch {
		case resp.Status == installer.StatusUpToDate && len(resp.Actions) == 0:
			c.ok("nothing is installed, so there is nothing to update")
			return
		case resp.Status == installer.StatusUpToDate && sh.offline:
			line = fmt.Sprintf("offline: %s as cached, nothing to update as far as the cache knows", plural(t.UpToDate, "plugin"))
		case resp.Status == installer.StatusUpToDate:
			line = fmt.Sprintf("everything is up to date (%s checked)", plural(t.UpToDate, "plugin"))
		case resp.Applied:
			line = "updated " + plural(t.Done, "plugin")
		default:
			line = "planned " + plural(t.Ready, "update")
		}
	default:
		switch {
		case resp.Status == installer.StatusUpToDate:
			line = "nothing to install: " + installedAsPlanned(resp, t)
		case resp.Applied:
			line = "installed " + plural(t.Done, "plugin")
		default:
			line = "planned " + plural(t.Ready, "plugin")
		}
	}
	if t.Dependencies > 0 && resp.Status != installer.StatusUpToDate {
		as := "dependencies"
		if t.Dependencies == 1 {
			as = "a dependency"
		}
		line += fmt.Sprintf(" (%d as %s)", t.Dependencies, as)
	}
	if resp.Status != installer.StatusUpToDate {
		line += upToDateSuffix(t)
	}
	for _, part := range []struct {
		n    int
		what string
	}{{t.Skipped, "skipped"}, {t.Blocked, "blocked"}, {t.Conflict, "conflicting"}, {t.Failed, "failed"}} {
		if part.n > 0 {
			line += fmt.Sprintf(", %d %s", part.n, part.what)
		}
	}
	if t.NotDone() > 0 {
		line += " (" + see + ")"
	}
	if !resp.Applied && t.Ready > 0 && cmd != cmdLock {
		line += ": nothing written yet"
	}
	if len(t.FullTrust) > 0 {
		verb := "would run"
		if resp.Applied {
			verb = "runs"
		}
		line += fmt.Sprintf("; %s: %s %s outside the sandbox (%s)", c.trust("FULL TRUST"), safeText(strings.Join(t.FullTrust, ", ")), verb, see)
	}
	if t.Unchecked > 0 {
		line += "; " + c.warn(t.UncheckedText())
	}
	if resp.OK && t.Unchecked == 0 {
		c.ok("%s", line)
		return
	}
	c.result(line)
}

// upToDateSuffix counts the plugins an operation found current, checked.
func upToDateSuffix(t installer.Tally) string {
	n := t.UpToDate - t.Unchecked
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(", %d up to date", n)
}

// installedAsPlanned says what an up-to-date install found.
func installedAsPlanned(resp *installer.Response, t installer.Tally) string {
	if t.UpToDate == 1 {
		for _, a := range resp.Actions {
			if a.Status == installer.ActionUpToDate {
				return safeText(a.Name) + " is installed as planned"
			}
		}
	}
	return plural(t.UpToDate, "plugin") + " installed as planned"
}

// doneNames are the plugins a removal or prune removed or would remove.
func doneNames(resp *installer.Response) []string {
	var names []string
	for _, a := range resp.Actions {
		if a.Status == installer.ActionRemoved || a.Status == installer.ActionReady {
			names = append(names, a.Name)
		}
	}
	return names
}
