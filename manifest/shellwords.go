package manifest

import "strings"

// This file splits shell text (a hook's command, a `sh -c` script) into the
// pipelines of simple commands a POSIX shell would run, enough to see which
// programs it starts and with what words: quoting, escapes, command and
// process substitutions, redirections and the list operators. It never
// expands anything: $VAR and ${VAR} stay as written. The run-time fetch
// finder (runtimefetch.go) is its only reader.

// shellWord is one word of a simple command, its quotes removed.
type shellWord struct {
	text string
	// subs are the scripts of the command substitutions ($(…), `…`) the
	// word holds: they run before the command does.
	subs []string
	// proc is the script of a process substitution (<(…) or >(…)) the
	// word is; "" for any other word.
	proc string
}

// shellCommand is a simple command: its words, assignments and keywords
// included (the reader strips them).
type shellCommand []shellWord

// shellPipeline is commands joined by |: each one's output is the next
// one's input.
type shellPipeline []shellCommand

// maxShellDepth bounds how deep substitutions and `sh -c` scripts are
// read: a script nested deeper is not looked into.
const maxShellDepth = 8

// splitShell reads script into its pipelines. Unbalanced quotes or
// parentheses end the text where they start, as far as this reader cares:
// what came before is still read.
func splitShell(script string) []shellPipeline {
	l := &shellLexer{s: script}
	l.run()
	return l.out
}

type shellLexer struct {
	s   string
	out []shellPipeline
	// the pipeline, command and word being read
	pipe   shellPipeline
	cmd    shellCommand
	word   strings.Builder
	inWord bool
	subs   []string
	// redirect: the next word is a redirection's target, not an argument.
	redirect bool
}

func (l *shellLexer) run() {
	s := l.s
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			l.endWord()
			i++
		case c == '\\':
			if i+1 < len(s) {
				if s[i+1] != '\n' { // a backslash-newline continues the line
					l.add(s[i+1 : i+2])
				}
				i += 2
			} else {
				i++
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				l.add(s[i+1:])
				i = len(s)
				break
			}
			l.add(s[i+1 : i+1+end])
			i += end + 2
		case c == '"':
			i = l.doubleQuoted(i + 1)
		case c == '`':
			end := closingBacktick(s, i+1)
			l.subs = append(l.subs, s[i+1:end])
			l.add(s[i:min(end+1, len(s))])
			i = end + 1
		case c == '$':
			i = l.dollar(i)
		case c == '#' && !l.inWord:
			if nl := strings.IndexByte(s[i:], '\n'); nl >= 0 {
				i += nl
			} else {
				i = len(s)
			}
		case (c == '<' || c == '>') && i+1 < len(s) && s[i+1] == '(' && !l.inWord:
			end := matchingParen(s, i+2)
			l.endWord()
			l.cmd = append(l.cmd, shellWord{text: s[i:min(end+1, len(s))], proc: s[i+2 : end]})
			i = end + 1
		case c == '<' || c == '>':
			// A redirection: a file-descriptor number before it is not an
			// argument, and neither is its target.
			if l.inWord && isDigits(l.word.String()) {
				l.word.Reset()
				l.inWord, l.subs = false, nil
			}
			l.endWord()
			for i < len(s) && strings.IndexByte("<>&|-", s[i]) >= 0 {
				i++
			}
			l.redirect = true
		case c == '\n' || c == ';' || c == '&' || c == '(' || c == ')':
			if c == '&' && i+1 < len(s) && s[i+1] == '>' { // &> file
				l.endWord()
				i += 2
				l.redirect = true
				break
			}
			l.endPipeline()
			i++
			if i < len(s) && (s[i] == '&' || s[i] == ';') {
				i++
			}
		case c == '|':
			if i+1 < len(s) && s[i+1] == '|' {
				l.endPipeline()
				i += 2
				break
			}
			l.endCommand()
			i++
			if i < len(s) && s[i] == '&' { // |& pipes stderr too
				i++
			}
		default:
			l.add(s[i : i+1])
			i++
		}
	}
	l.endPipeline()
}

// doubleQuoted reads a "…" string from i (just past the quote) and returns
// where it ends.
func (l *shellLexer) doubleQuoted(i int) int {
	s := l.s
	l.inWord = true
	for i < len(s) {
		switch c := s[i]; {
		case c == '"':
			return i + 1
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0:
			if s[i+1] != '\n' {
				l.add(s[i+1 : i+2])
			}
			i += 2
		case c == '$':
			i = l.dollar(i)
		case c == '`':
			end := closingBacktick(s, i+1)
			l.subs = append(l.subs, s[i+1:end])
			l.add(s[i:min(end+1, len(s))])
			i = end + 1
		default:
			l.add(s[i : i+1])
			i++
		}
	}
	return i
}

// dollar reads what starts with $ at i: a command substitution (recorded),
// an arithmetic expansion, a ${…} parameter or $'…' text (kept as written,
// the last one unquoted).
func (l *shellLexer) dollar(i int) int {
	s := l.s
	switch {
	case strings.HasPrefix(s[i:], "$(("):
		end := matchingParen(s, i+2) // the inner ( is nested in the outer
		l.add(s[i:min(end+1, len(s))])
		return end + 1
	case strings.HasPrefix(s[i:], "$("):
		end := matchingParen(s, i+2)
		l.subs = append(l.subs, s[i+2:end])
		l.add(s[i:min(end+1, len(s))])
		return end + 1
	case strings.HasPrefix(s[i:], "${"):
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			l.add(s[i:])
			return len(s)
		}
		l.add(s[i : i+end+1])
		return i + end + 1
	case strings.HasPrefix(s[i:], "$'"):
		j := i + 2
		for j < len(s) && s[j] != '\'' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		l.add(s[i+2 : min(j, len(s))])
		return j + 1
	}
	l.add("$")
	return i + 1
}

func (l *shellLexer) add(t string) {
	l.word.WriteString(t)
	l.inWord = true
}

func (l *shellLexer) endWord() {
	if !l.inWord {
		return
	}
	w := shellWord{text: l.word.String(), subs: l.subs}
	l.word.Reset()
	l.inWord, l.subs = false, nil
	if l.redirect {
		l.redirect = false
		return
	}
	l.cmd = append(l.cmd, w)
}

func (l *shellLexer) endCommand() {
	l.endWord()
	l.redirect = false
	if len(l.cmd) > 0 {
		l.pipe = append(l.pipe, l.cmd)
	}
	l.cmd = nil
}

func (l *shellLexer) endPipeline() {
	l.endCommand()
	if len(l.pipe) > 0 {
		l.out = append(l.out, l.pipe)
	}
	l.pipe = nil
}

// matchingParen returns the index of the ) closing a ( whose content
// starts at i, skipping quoted text and nested parentheses; len(s) when
// there is none.
func matchingParen(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return len(s)
			}
			i += end + 1
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return len(s)
}

// closingBacktick returns the index of the ` ending a `…` substitution
// whose content starts at i; len(s) when there is none.
func closingBacktick(s string, i int) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '`':
			return i
		}
	}
	return len(s)
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// shellQuote is a word as a shell reads it back: bare when it holds only
// characters no shell treats specially, else in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-${}") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
