package installer

import (
	"fmt"
	"slices"
	"strings"

	"reasonix.io/plugind"
)

// Tally is what a response's actions came to, counted once here so every
// one-line summary of it (the CLI's result line, the page's banners) says
// the same numbers.
type Tally struct {
	// Ready are planned and wait for approval; Done were installed,
	// updated or removed by this response.
	Ready, Done int
	// Moves are the Ready or Done actions of an update that move an
	// installed plugin (the rest of Ready/Done are new installs).
	Moves int
	// UpToDate are installed as planned already (kept).
	UpToDate int
	// Skipped are left out by policy (unpinnable, npm…): not failures.
	Skipped                   int
	Blocked, Conflict, Failed int
	// Dependencies are the Ready or Done actions planned only because
	// another plugin needs them.
	Dependencies int
	// Unchecked are the plugins whose source could not be reached: what
	// the response says of them is what was cached (Action.Unchecked);
	// UncheckedWhy says why, each reason once; UncheckedNames names them.
	Unchecked                    int
	UncheckedWhy, UncheckedNames []string
	// FullTrust names the Ready or Done actions that carry a runtime: code
	// that runs outside the sandbox.
	FullTrust []string
}

// Tally counts r's actions.
func (r *Response) Tally() Tally {
	var t Tally
	for _, a := range r.Actions {
		if a.Unchecked != "" {
			t.Unchecked++
			t.UncheckedNames = append(t.UncheckedNames, a.Name)
			if !slices.Contains(t.UncheckedWhy, a.Unchecked) {
				t.UncheckedWhy = append(t.UncheckedWhy, a.Unchecked)
			}
		}
		switch a.Status {
		case ActionReady, ActionInstalled, ActionRemoved:
			if a.Status == ActionReady {
				t.Ready++
			} else {
				t.Done++
			}
			if a.Previous != nil {
				t.Moves++
			}
			if a.Dependency {
				t.Dependencies++
			}
			if a.Runtime != nil {
				t.FullTrust = append(t.FullTrust, a.Name)
			}
		case ActionUpToDate:
			t.UpToDate++
		case ActionSkipped:
			t.Skipped++
		case ActionBlocked:
			t.Blocked++
		case ActionConflict:
			t.Conflict++
		case ActionFailed:
			t.Failed++
		}
	}
	return t
}

// NotDone counts the actions that stopped a bulk operation from doing all
// it was asked (blocked, conflicting or failed; skipped ones are policy).
func (t Tally) NotDone() int { return t.Blocked + t.Conflict + t.Failed }

// UncheckedText says how many plugins could not be checked and why: the
// start of the response's error, and the CLI's warning.
func (t Tally) UncheckedText() string {
	return fmt.Sprintf("could not check %d %s (%s): showing what was cached", t.Unchecked, plural(t.Unchecked, "plugin", "plugins"), strings.Join(t.UncheckedWhy, ", "))
}

// markUnchecked gives a response whose plugins could not all be checked
// its verdict (SPEC §11): never "up to date" (StatusUnchecked instead),
// and not ok — exit status 1 — whatever was planned or applied from the
// cache meanwhile. Offline nothing is unchecked: the cache was asked for.
// It reports whether anything was.
func (r *Response) markUnchecked() bool {
	t := r.Tally()
	if t.Unchecked == 0 {
		return false
	}
	if r.Status == StatusUpToDate {
		r.Status = StatusUnchecked
	}
	if r.OK {
		r.OK = false
		r.Err = plugind.Errorf(plugind.CodeSourceUnreadable, "%s for %s (--offline plans from the cache without asking)", t.UncheckedText(), strings.Join(t.UncheckedNames, ", "))
	}
	return true
}
