package main

import (
	"io"
	"os"
	"strconv"

	"github.com/muesli/termenv"
	"golang.org/x/term"
)

// console is one output stream as a person sees it (SPEC §11): whether it
// is a terminal, how many columns it has, whether a line may be redrawn in
// place, and which colours it may use. Colour follows termenv's reading of
// the environment: NO_COLOR, CLICOLOR(_FORCE), TERM (dumb: none) and
// COLORTERM; nothing is coloured off a terminal unless CLICOLOR_FORCE asks.
type console struct {
	w        io.Writer
	terminal bool
	// width is the terminal's columns; 0 means unbounded (not a terminal):
	// lines and table cells are then written whole.
	width int
	// redraw says a line may be rewritten in place (\r and erase-line): a
	// terminal that is not TERM=dumb.
	redraw bool
	out    *termenv.Output
}

// defaultColumns is the width assumed for a terminal that will not say
// (and COLUMNS unset).
const defaultColumns = 80

// minColumns keeps layouts sane on absurdly narrow terminals.
const minColumns = 20

// consoleFor describes w as the user sees it.
func (m *Main) consoleFor(w io.Writer) *console {
	terminal := m.isTerminal(w)
	c := &console{w: w, terminal: terminal}
	if terminal {
		c.width = max(m.columnsOf(w), minColumns)
		c.redraw = m.Getenv("TERM") != "dumb"
	}
	c.out = termenv.NewOutput(w, termenv.WithEnvironment(environ(m.Getenv)), termenv.WithTTY(terminal))
	return c
}

// isTerminal reports whether w is a terminal (tests decide through
// Main.terminal).
func (m *Main) isTerminal(w io.Writer) bool {
	if m.terminal != nil {
		return m.terminal(w)
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// columnsOf is the width of the terminal w: what the terminal says, else
// $COLUMNS, else defaultColumns (tests set Main.columns).
func (m *Main) columnsOf(w io.Writer) int {
	if m.columns > 0 {
		return m.columns
	}
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	if n, err := strconv.Atoi(m.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return defaultColumns
}

// environ adapts Main.Getenv to termenv.Environ.
type environ func(string) string

func (e environ) Getenv(k string) string { return e(k) }

// Environ is only used by termenv for what Getenv already answers.
func (e environ) Environ() []string { return nil }

// The colours mark what a person must not miss: risk, FULL TRUST, errors,
// and what could not be checked. Every string passed here is already
// escaped (safeText): colour never comes from a plugin.

func (c *console) style(s string) termenv.Style { return c.out.String(s) }

func (c *console) bad(s string) string {
	return c.style(s).Foreground(c.out.Color("1")).Bold().String()
}

func (c *console) good(s string) string { return c.style(s).Foreground(c.out.Color("2")).String() }

func (c *console) warn(s string) string { return c.style(s).Foreground(c.out.Color("3")).String() }

func (c *console) strong(s string) string { return c.style(s).Bold().String() }

// trust is the FULL TRUST mark: reversed, bold and red, so it stands out
// of any screen of text.
func (c *console) trust(s string) string {
	return c.style(s).Foreground(c.out.Color("1")).Bold().Reverse().String()
}

// risk colours a risk level: high red, medium yellow, low as it is.
func (c *console) risk(level, s string) string {
	switch level {
	case "high":
		return c.bad(s)
	case "medium":
		return c.warn(s)
	}
	return s
}
