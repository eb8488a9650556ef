package main

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// The human part of an output (the review, warnings, details) is printed
// on a console so that no line is wider than the terminal. A longer line
// is wrapped at word boundaries and goes on two columns further in than it
// began, so it still reads as one item; widths are measured as the
// terminal shows them (wide characters, colour codes). Off a terminal
// lines are written whole.

// line prints one formatted line, fitted.
func (s *console) line(format string, args ...any) {
	fmt.Fprintln(s.w, s.fit(fmt.Sprintf(format, args...)))
}

// blank prints an empty line (between sections).
func (s *console) blank() { fmt.Fprintln(s.w) }

// titled prints, when there are items, a section: a blank line, head, and
// each item's row below it, two columns in.
func titled[T any](s *console, head string, items []T, row func(T) string) {
	if len(items) == 0 {
		return
	}
	s.blank()
	s.line("%s", head)
	for _, it := range items {
		s.line("  %s", row(it))
	}
}

// fit wraps line to the console's width.
func (c *console) fit(line string) string {
	if c.width == 0 || ansi.StringWidth(line) <= c.width {
		return line
	}
	body := strings.TrimLeft(line, " ")
	indent := len(line) - len(body)
	hang := min(indent+2, c.width/3)
	indent = min(indent, hang)
	rows := strings.Split(ansi.Wrap(body, c.width-hang, ""), "\n")
	for i, r := range rows {
		pad := hang
		if i == 0 {
			pad = indent
		}
		rows[i] = strings.Repeat(" ", pad) + strings.TrimRight(r, " ")
	}
	return strings.Join(rows, "\n")
}

// commandLines lays out a suggested command for a terminal of width
// columns (0: one line) so it can still be pasted whole: words are never
// split, and each line but the last ends with " \" so the shell joins
// them. A single word wider than the terminal stays whole, beyond it.
func commandLines(args []string, indent, width int) []string {
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = shellQuote(a)
	}
	const more = 4 // continuation lines go further in
	var lines []string
	cur := strings.Repeat(" ", indent)
	start := len(cur)
	for _, w := range words {
		switch {
		case len(cur) == start:
			cur += w
		case width > 0 && ansi.StringWidth(cur)+1+ansi.StringWidth(w)+2 > width:
			lines = append(lines, cur+" \\")
			cur = strings.Repeat(" ", indent+more) + w
			start = -1 // not empty any more
		default:
			cur += " " + w
		}
	}
	return append(lines, cur)
}
