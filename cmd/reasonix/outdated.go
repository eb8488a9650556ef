package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/resolver/host"
)

// printOutdated prints what the last update check found could move as a
// table on w (fitted to width columns, 0: unbounded), and on errw (stderr,
// so the table stays parseable) when it checked and what it could not
// check.
func printOutdated(w, errw io.Writer, width int, c *installer.UpdateCheck, now time.Time) {
	if c.Status == installer.CheckNever {
		fmt.Fprintln(errw, "No update check has run yet: `reasonix serve` checks in the background (--check-updates), and `reasonix plugin update --all --dry-run` shows what could move now, without recording it.")
		return
	}
	if len(c.Updates) == 0 {
		fmt.Fprintln(w, "Nothing could be updated, as of the last successful check.")
	} else {
		t := &table{header: []string{"NAME", "MARKETPLACE", "COMMIT", "VERSION", "RISK"}, shrink: []int{1, 0}}
		for _, n := range c.Updates {
			name := safeText(n.Name)
			switch {
			case n.RenamedFrom != "":
				name = safeText(n.RenamedFrom) + " → " + name
			case n.Dependency:
				name += " (new dependency)"
			}
			t.add(name, dash(safeText(n.MarketplaceName)), dash(host.Short(n.FromCommit))+" → "+host.Short(n.ToCommit), versionMove(n), riskMove(n))
		}
		t.write(w, width)
	}
	fmt.Fprintf(errw, "last successful check: %s\n", when(now, c.LastSuccessAt))
	switch c.Status {
	case installer.CheckSkippedOffline:
		fmt.Fprintf(errw, "warning: the last check, %s, was skipped: offline, or no source answered\n", when(now, c.CheckedAt))
	case installer.CheckFailed:
		fmt.Fprintf(errw, "warning: the last check, %s, failed: %s\n", when(now, c.CheckedAt), safeText(c.Error))
	}
	if len(c.CouldNotCheck) > 0 {
		parts := make([]string, len(c.CouldNotCheck))
		for i, u := range c.CouldNotCheck {
			parts[i] = safeText(u.Name) + " (" + safeText(u.Reason) + ")"
		}
		fmt.Fprintf(errw, "warning: could not check (%d): %s\n", len(parts), strings.Join(parts, ", "))
	}
	if len(c.Updates) > 0 {
		fmt.Fprintln(errw, "To review each move's capability diff and approve it: reasonix plugin update --all --dry-run")
	}
}

// versionMove is "1.0.0 → 2.0.0", or the one version when it stays.
func versionMove(n installer.UpdateNotice) string {
	from, to := safeCell(n.FromVersion, 24), safeCell(n.ToVersion, 24)
	if from == to {
		return dash(to)
	}
	return dash(from) + " → " + dash(to)
}

// riskMove is the update's risk, "low → high (raised)" when it is riskier
// than what is installed.
func riskMove(n installer.UpdateNotice) string {
	if n.RiskRaised {
		return string(n.PreviousRisk) + " → " + string(n.Risk) + " (raised)"
	}
	return dash(string(n.Risk))
}

// when is an instant in local time with how long ago it was.
func when(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Local().Format("2006-01-02 15:04:05") + " (" + ago(now, t) + ")"
}
