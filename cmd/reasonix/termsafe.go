package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"reasonix.io/plugind/secrets"
)

// Every string a text printer writes that came from a plugin, a
// marketplace, a source or an error goes through safeText or safeLine. A
// plugin's metadata must not drive the user's terminal: an escape sequence
// can hide text (ESC[8m), plant a link (OSC 8), retitle the window or
// rewrite earlier lines, and bidi controls can make the review show a
// command other than the one that runs. Such characters are shown as
// visible escapes instead (\x1b, \u202e); JSON output is left as it is, its
// encoder already escapes control characters. Credentials are masked too
// (secrets.Mask), so no text line repeats one.

// maxCell bounds a description or command in a one-line row.
const maxCell = 120

// safeText returns s masked and escaped for a terminal, on one line: line
// breaks show as \n.
func safeText(s string) string {
	return termEscape(secrets.Mask(s), false, 0)
}

// safeLine returns prose (a description) as one row: runs of blanks and
// line breaks become one space, the rest is escaped as by safeText, and
// beyond max characters it is cut with "…" (max <= 0: no limit).
func safeLine(s string, max int) string {
	return termEscape(secrets.Mask(s), true, max)
}

// safeCell is safeText cut to max characters, for a command in a row.
func safeCell(s string, max int) string {
	return termEscape(secrets.Mask(s), false, max)
}

// termEscape does the escaping. collapse folds blank runs to one space;
// max > 0 cuts the result to max characters, an escape never split.
func termEscape(s string, collapse bool, max int) string {
	if collapse {
		s = strings.Join(strings.FieldsFunc(s, isBlank), " ")
	}
	if isPlain(s) && (max <= 0 || len(s) <= max) {
		return s
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		piece, size := escaped(s[i:])
		width := 1
		if piece != "" {
			width = len(piece)
		} else {
			piece = s[i : i+size]
		}
		if max > 0 && n+width > max-1 && moreThan(s[i:], max-n) {
			b.WriteString("…")
			return b.String()
		}
		b.WriteString(piece)
		n += width
		i += size
	}
	return b.String()
}

// escaped is how the rune s starts with is shown, and its size: "" when it
// is shown as it is.
func escaped(s string) (string, int) {
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case r == utf8.RuneError && size == 1:
		return fmt.Sprintf(`\x%02x`, s[0]), size
	case r == '\n':
		return `\n`, size
	case r == '\r':
		return `\r`, size
	case r == '\t':
		return `\t`, size
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf(`\x%02x`, r), size
	case r >= 0x80 && r <= 0x9f, isBidiOrSeparator(r):
		return fmt.Sprintf(`\u%04x`, r), size
	}
	return "", size
}

// moreThan reports whether rest, escaped, is wider than room: only then
// is a cut needed.
func moreThan(rest string, room int) bool {
	w := 0
	for i := 0; i < len(rest) && w <= room; {
		piece, size := escaped(rest[i:])
		w += max(len(piece), 1)
		i += size
	}
	return w > room
}

// isPlain reports whether s is printable ASCII only, which needs nothing.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

func isBlank(r rune) bool { return strings.ContainsRune(" \t\n\r\v\f\u0085\u2028\u2029", r) }

// isBidiOrSeparator reports the invisible characters that reorder or
// break displayed text: bidi embeddings, overrides, isolates and marks,
// and the Unicode line and paragraph separators.
func isBidiOrSeparator(r rune) bool {
	return unicode.Is(unicode.Bidi_Control, r) || r == 0x2028 || r == 0x2029
}
