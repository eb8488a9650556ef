package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// table is a text table that never wraps a row: columns are as wide as
// their widest cell, two spaces apart, and when a row would be wider than
// the terminal the columns marked shrinkable give up width — last marked
// first — and their cells are cut with "…". Off a terminal (width 0)
// nothing is cut, so what a script reads is whole.
type table struct {
	indent int
	header []string
	rows   [][]string
	// shrink lists the columns that may be cut, in the order they give up
	// width.
	shrink []int
	// drop lists the columns left out, in that order, when the table is
	// still too wide with every shrinkable column cut: a row shows fewer
	// columns whole rather than every column cut to nothing.
	drop []int
}

// minCell is as far as a shrinkable column is cut.
const minCell = 8

const columnGap = 2

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write prints the table fitted to width columns (0: unbounded).
func (t *table) write(w io.Writer, width int) {
	all := append([][]string{t.header}, t.rows...)
	cols := len(t.header)
	widths := make([]int, cols)
	for _, r := range all {
		for i := 0; i < cols && i < len(r); i++ {
			widths[i] = max(widths[i], ansi.StringWidth(r[i]))
		}
	}
	dropped := make([]bool, cols)
	if width > 0 {
		total := t.indent + columnGap*(cols-1)
		for _, n := range widths {
			total += n
		}
		for _, i := range t.drop {
			if total-t.shrinkable(widths) <= width {
				break
			}
			dropped[i] = true
			total -= widths[i] + columnGap
		}
		for _, i := range t.shrink {
			if total <= width {
				break
			}
			if dropped[i] {
				continue
			}
			floor := min(widths[i], minCell)
			give := min(total-width, widths[i]-floor)
			widths[i] -= give
			total -= give
		}
	}
	pad := strings.Repeat(" ", t.indent)
	for _, r := range all {
		var b strings.Builder
		b.WriteString(pad)
		first := true
		for i := 0; i < cols; i++ {
			if dropped[i] {
				continue
			}
			if !first {
				b.WriteString(strings.Repeat(" ", columnGap))
			}
			first = false
			cell := ""
			if i < len(r) {
				cell = r[i]
			}
			if ansi.StringWidth(cell) > widths[i] {
				cell = ansi.Truncate(cell, widths[i], "…")
			}
			b.WriteString(cell)
			b.WriteString(strings.Repeat(" ", widths[i]-ansi.StringWidth(cell)))
		}
		line := strings.TrimRight(b.String(), " ")
		if width > 0 && ansi.StringWidth(line) > width {
			// Every shrinkable column is as narrow as it goes: the row is
			// cut, never wrapped.
			line = ansi.Truncate(line, width, "…")
		}
		fmt.Fprintln(w, line)
	}
}

// shrinkable is how much width the shrinkable columns could give up.
func (t *table) shrinkable(widths []int) int {
	n := 0
	for _, i := range t.shrink {
		n += widths[i] - min(widths[i], minCell)
	}
	return n
}
