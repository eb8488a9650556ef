package main

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestTableCutsACellRatherThanWrap: at any width, every row is one line no
// wider than the terminal; the shrinkable columns are cut with "…", the
// others stay whole; off a terminal nothing is cut.
func TestTableCutsACellRatherThanWrap(t *testing.T) {
	t.Parallel()
	mk := func() *table {
		tb := &table{indent: 2, header: []string{"NAME", "COMMIT", "DESCRIPTION"}, shrink: []int{2, 0}}
		tb.add("a-rather-long-plugin-name", "fce67da29501", "Looks things up in the team's wiki, and a great deal more besides")
		tb.add("短い名前のプラグイン", "0012b77fedc8", "wide characters count twice")
		return tb
	}
	for _, width := range []int{0, 30, 45, 60, 150} {
		var b bytes.Buffer
		mk().write(&b, width)
		lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("width %d: %d lines, want 3:\n%s", width, len(lines), b.String())
		}
		for _, l := range lines {
			if width > 0 && ansi.StringWidth(l) > width {
				t.Errorf("width %d: a row %d wide: %q", width, ansi.StringWidth(l), l)
			}
		}
		full := strings.Contains(b.String(), "a great deal more besides")
		if width == 0 || width == 150 {
			if !full || strings.Contains(b.String(), "…") {
				t.Errorf("width %d: a cell was cut with room to spare:\n%s", width, b.String())
			}
			continue
		}
		if full || !strings.Contains(b.String(), "…") {
			t.Errorf("width %d: the description was not cut:\n%s", width, b.String())
		}
		if width >= 45 && !strings.Contains(lines[1], "fce67da29501") {
			t.Errorf("width %d: the commit column was cut: %q", width, lines[1])
		}
	}
}

// TestFitWrapsAtWords: a long line becomes rows no wider than the
// terminal, continued further in; a short one is untouched; off a terminal
// nothing is wrapped.
func TestFitWrapsAtWords(t *testing.T) {
	t.Parallel()
	line := "  npm sources are not supported (nothing from a package registry can be pinned to a commit) [install.not_pinnable]: from-npm"
	c := plainConsole(io.Discard, 60)
	got := c.fit(line)
	rows := strings.Split(got, "\n")
	if len(rows) < 2 {
		t.Fatalf("not wrapped: %q", got)
	}
	for i, r := range rows {
		if ansi.StringWidth(r) > 60 {
			t.Errorf("row %d is %d wide: %q", i, ansi.StringWidth(r), r)
		}
		if i > 0 && !strings.HasPrefix(r, "    ") {
			t.Errorf("row %d does not hang further in: %q", i, r)
		}
	}
	if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(line), " ") {
		t.Errorf("wrapping changed the words: %q", got)
	}
	if c.fit("short") != "short" || plainConsole(io.Discard, 0).fit(line) != line {
		t.Error("a line that fits, or one off a terminal, was changed")
	}
}

// TestCommandLinesPasteWhole: a suggested command broken for a narrow
// terminal is still one command to the shell, each line within the width.
func TestCommandLinesPasteWhole(t *testing.T) {
	t.Parallel()
	args := []string{"./reasonix", "plugin", "install", "/tmp/a folder/market", "--replace", "--yes", "--plan-id", "high:sha256:0123456789abcdef0123456789abcdef"}
	for _, width := range []int{0, 40, 60, 150} {
		lines := commandLines(args, 2, width)
		for _, l := range lines {
			// A word wider than the terminal stays whole, on a line of its own.
			if width > 0 && ansi.StringWidth(l) > width && len(strings.Fields(strings.TrimSuffix(l, " \\"))) > 1 {
				t.Errorf("width %d: a line %d wide: %q", width, ansi.StringWidth(l), l)
			}
		}
		joined := strings.ReplaceAll(strings.Join(lines, "\n"), " \\\n", " ")
		if got := strings.Join(strings.Fields(joined), " "); got != shellJoin(args) {
			t.Errorf("width %d: the lines join to %q, want %q", width, got, shellJoin(args))
		}
		if (width == 0 || width == 150) && len(lines) != 1 {
			t.Errorf("width %d: broken with room to spare: %q", width, lines)
		}
	}
}

// TestResultLineInEveryMode: off a terminal, with nothing else on stderr,
// every mutating command still ends with its result line (and --json
// changes nothing there); stdout keeps its JSON alone.
func TestResultLineInEveryMode(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	src := writePlugin(t, filepath.Join(t.TempDir(), "p"), "1.0.0")
	steps := []struct {
		args []string
		code int
		last string
	}{
		{[]string{"plugin", "install", src, "--dry-run"}, 0, "✓ planned 1 plugin: nothing written yet"},
		{[]string{"plugin", "install", src, "--yes", "--json"}, 0, "✓ installed 1 plugin"},
		{[]string{"plugin", "install", src, "--yes"}, 0, "✓ nothing to install: crashy is installed as planned"},
		{[]string{"plugin", "update", "crashy", "--dry-run"}, 0, "✓ everything is up to date (1 plugin checked)"},
		{[]string{"plugin", "disable", "crashy"}, 0, "✓ crashy is disabled"},
		{[]string{"plugin", "enable", "crashy", "--json"}, 0, "✓ crashy is enabled"},
		{[]string{"plugin", "prune", "--dry-run"}, 0, "✓ nothing to prune: every dependency installed is still needed"},
		{[]string{"plugin", "remove", "ghost", "--yes"}, 1, "✗ nothing removed: plugin \"ghost\" is not installed [install.not_found]"},
		{[]string{"plugin", "remove", "crashy", "--yes"}, 0, "✓ removed crashy"},
		{[]string{"plugin", "update", "--all", "--dry-run"}, 0, "✓ nothing is installed, so there is nothing to update"},
		{[]string{"cache", "gc"}, 0, "✓ evicted "},
		{[]string{"marketplace", "remove", "ghost"}, 1, "✗ nothing removed: "},
	}
	for _, s := range steps {
		r := run(t, home, nil, s.args...)
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if r.code != s.code || !strings.HasPrefix(lines[len(lines)-1], s.last) {
			t.Errorf("%q: exit %d (want %d), last line of stderr %q, want %q\nstderr: %s", s.args, r.code, s.code, lines[len(lines)-1], s.last, r.stderr)
		}
		if strings.Contains(r.stderr, "Review of") {
			t.Errorf("%q: a review on a stderr that is no terminal", s.args)
		}
	}
}

// shellJoin quotes args for a POSIX shell, as one line: what the lines of
// commandLines join to.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = shellQuote(a)
	}
	return strings.Join(out, " ")
}
