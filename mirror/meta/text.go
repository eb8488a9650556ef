package meta

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxKey is the longest repository key, ref or path list a request may
// name: keys are parts of btree-indexed primary keys, whose entries
// PostgreSQL caps near 2.7 kB, and no real repository comes close.
const MaxKey = 1024

// Text makes any byte string storable as PostgreSQL text, which holds
// neither NUL nor bytes that are not UTF-8: each such byte becomes `\xNN`
// (as Go's %q spells it). Valid text is returned as it is. The audit log
// records what a client sent even when it was not text, so a hostile byte
// can neither make its row fail nor pass unseen.
func Text(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == 0 || r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clip cuts s to at most max bytes of whole characters, marking the cut.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
