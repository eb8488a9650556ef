package secrets

import (
	"sort"
	"strings"
)

// A hook's shell-form command is handed to bash (the default, also Git Bash
// on Windows), PowerShell or cmd.exe. Finding the value after "--password"
// and writing a working variable reference in its place both depend on the
// shell's quoting, so the command is lexed in its own dialect. The lexer is
// deliberately small: words, quotes, escapes and command separators; it
// never evaluates anything.

type dialect uint8

const (
	posixShell dialect = iota
	powerShell
	cmdShell
)

// dialects is what each shell reads differently: the bytes that separate
// commands, the escape character, and how a variable reference is written
// (open + NAME + close).
var dialects = [...]struct {
	seps             string
	escape           byte
	refOpen, refShut string
}{
	posixShell: {";|&()<>", '\\', "${", "}"},
	powerShell: {";|&(){}", '`', "${env:", "}"},
	cmdShell:   {"&|<>()", '^', "%", "%"},
}

func dialectOf(shell string) dialect {
	switch strings.ToLower(shell) {
	case "powershell", "pwsh":
		return powerShell
	case "cmd":
		return cmdShell
	}
	return posixShell
}

// Quoting state of a byte.
const (
	unquoted uint8 = iota
	singleQuoted
	doubleQuoted
)

type shellWord struct {
	start, end int    // raw extent, quotes included
	text       string // the word as the command receives it
	afterSep   bool   // a command separator (;, |, &&…) precedes it
}

type shellText struct {
	s       string
	d       dialect
	quote   []uint8 // per byte: the quoting state its content is in
	words   []shellWord
	singles []span // single-quoted strings: extent with quotes, and content end
}

type span struct {
	start, end int // raw extent, quotes included
	contentEnd int // where the content ends: end-1, or end when unterminated
}

func lexShell(s string, d dialect) *shellText {
	t := &shellText{s: s, d: d, quote: make([]uint8, len(s))}
	var cur strings.Builder
	in, start, sep := false, 0, false
	begin := func(at int) {
		if !in {
			in, start = true, at
		}
	}
	end := func(at int) {
		if in {
			t.words = append(t.words, shellWord{start: start, end: at, text: cur.String(), afterSep: sep})
			cur.Reset()
			in, sep = false, false
		}
	}
	escape := dialects[d].escape
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			end(i)
			i++
		case strings.IndexByte(dialects[d].seps, c) >= 0:
			end(i)
			sep = true
			i++
		case c == '#' && !in && d != cmdShell:
			// A comment runs to the end of the line; find still
			// sees its text.
			i = runEnd(s, i, func(c byte) bool { return c != '\n' })
		case c == escape:
			begin(i)
			if i+1 < len(s) {
				cur.WriteByte(s[i+1])
			}
			i += 2
		case c == '\'' && d != cmdShell:
			begin(i)
			j := i + 1
			for j < len(s) {
				if s[j] == '\'' {
					if d == powerShell && j+1 < len(s) && s[j+1] == '\'' {
						cur.WriteByte('\'')
						t.quote[j], t.quote[j+1] = singleQuoted, singleQuoted
						j += 2
						continue
					}
					break
				}
				cur.WriteByte(s[j])
				t.quote[j] = singleQuoted
				j++
			}
			t.singles = append(t.singles, span{start: i, end: min(j+1, len(s)), contentEnd: j})
			i = j + 1
		case c == '"':
			begin(i)
			j := i + 1
			for j < len(s) && s[j] != '"' {
				t.quote[j] = doubleQuoted
				if d != cmdShell && s[j] == escape && j+1 < len(s) {
					t.quote[j+1] = doubleQuoted
					cur.WriteByte(s[j+1])
					j += 2
					continue
				}
				cur.WriteByte(s[j])
				j++
			}
			i = j + 1
		default:
			begin(i)
			cur.WriteByte(c)
			i++
		}
	}
	end(len(s))
	return t
}

// secrets finds the credentials of a command line p covers: the word
// after a credential flag, and whatever find finds in the text.
func (t *shellText) secrets(p policy) []secret {
	var found []secret
	for i := 1; i < len(t.words); i++ {
		w, prev := t.words[i], t.words[i-1]
		if w.afterSep {
			continue
		}
		if name, ok := flagSecret(prev.text, w.text); ok {
			found = append(found, secret{Span: Span{Start: w.start, End: w.end, Kind: Pair, Name: name}, word: true, literal: w.text})
		}
	}
	last := -1
	for _, f := range find(t.s, p) {
		if f.Start < last {
			continue // inside the quoted value the previous one ran to
		}
		// Inside quotes a value may hold blanks ("--api-key=a b"): the
		// shell passes the quoted text whole, so the secret runs to the
		// closing quote, not to the first blank.
		// Tokens, URL credentials and Authorization credentials are one
		// word by their format.
		oneWord := f.Kind == Token || f.Kind == Userinfo || f.Kind == Bearer || f.Kind == Header && isAuthHeader(f.Name)
		if q := t.quote[f.Start]; q != unquoted && !oneWord &&
			f.End < len(t.s) && (t.s[f.End] == ' ' || t.s[f.End] == '\t') && t.quote[f.End] == q {
			for f.End < len(t.s) && t.quote[f.End] == q {
				f.End++
			}
			f.literal = t.s[f.Start:f.End]
		}
		last = f.End
		found = append(found, f)
	}
	// On equal spans the first listed wins: a flag's value before a token
	// in it.
	return ordered(found, p)
}

// rewrite replaces each secret by a reference to the environment variable
// varFor names, written so this dialect expands it where the literal stood.
func (t *shellText) rewrite(varFor func(secret) string) string {
	found := t.secrets(export)
	if len(found) == 0 {
		return t.s
	}
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	for k := 0; k < len(found); k++ {
		f := found[k]
		if f.word {
			edits = append(edits, edit{f.Start, f.End, `"` + t.ref(varFor(f)) + `"`})
			continue
		}
		r, inSingle := t.singleAt(f.Start)
		if !inSingle {
			edits = append(edits, edit{f.Start, f.End, t.ref(varFor(f))})
			continue
		}
		if t.d == posixShell {
			// Nothing expands inside '…': close it, expand in "…", reopen.
			edits = append(edits, edit{f.Start, f.End, `'"` + t.ref(varFor(f)) + `"'`})
			continue
		}
		// PowerShell: rewrite the whole '…' string as "…" with its other
		// text escaped, so the references inside it expand.
		var b strings.Builder
		b.WriteByte('"')
		pos := r.start + 1
		for ; k < len(found) && found[k].Start < r.contentEnd; k++ {
			b.WriteString(psDoubleQuote(t.s[pos:found[k].Start]))
			b.WriteString(t.ref(varFor(found[k])))
			pos = found[k].End
		}
		k--
		b.WriteString(psDoubleQuote(t.s[pos:max(pos, r.contentEnd)]))
		b.WriteByte('"')
		edits = append(edits, edit{r.start, r.end, b.String()})
	}
	var b strings.Builder
	last := 0
	for _, e := range edits {
		b.WriteString(t.s[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.WriteString(t.s[last:])
	return b.String()
}

func (t *shellText) ref(name string) string {
	return dialects[t.d].refOpen + name + dialects[t.d].refShut
}

// singleAt returns the single-quoted string whose content holds pos.
func (t *shellText) singleAt(pos int) (span, bool) {
	if t.quote[pos] != singleQuoted {
		return span{}, false
	}
	// singles are in text order: the last one starting before pos.
	i := sort.Search(len(t.singles), func(i int) bool { return t.singles[i].start >= pos }) - 1
	if i >= 0 && pos < t.singles[i].contentEnd {
		return t.singles[i], true
	}
	return span{}, false
}

// psDoubleQuote turns the raw content of a PowerShell '…' string into the
// content of a "…" string with the same value.
func psDoubleQuote(raw string) string {
	r := strings.NewReplacer("''", "'", "`", "``", `"`, "`\"", "$", "`$")
	return r.Replace(raw)
}
