package secrets

import (
	"strings"

	"reasonix.io/plugind/internal/lazyregexp"
)

// secret is one credential inside a string a plugin declares: a span find
// returned, or a whole shell word or argument a credential flag names.
type secret struct {
	Span
	// word marks a whole shell word (the value after a credential flag),
	// quotes included.
	word bool
	// literal is the credential's text: what the span covers, or a word's
	// unquoted text.
	literal string
}

// flagWord is an option that may take a value: -u, --api-key, --auth.token.
var flagWord = lazyregexp.New(`^--?[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// flagSecret reports whether value, following flag in an argument list or
// command line, is the credential the flag names: "--token X",
// "--api-key X", and curl's "-u user:password". It returns the name the
// value is bound to.
func flagSecret(flag, value string) (string, bool) {
	if !flagWord.MatchString(flag) || value == "" || value == Masked ||
		strings.HasPrefix(value, "-") || strings.HasPrefix(value, "$") || IsReference(value) {
		return "", false
	}
	name := strings.TrimLeft(flag, "-")
	if (flag == "-u" || flag == "--user") && strings.Contains(value, ":") {
		return "user", true
	}
	if name == "" || !IsName(name) {
		return "", false
	}
	return name, true
}

// argSecrets finds the credentials of an argument list, per argument.
func argSecrets(args []string, p policy) [][]secret {
	out := make([][]secret, len(args))
	for i, a := range args {
		if i > 0 {
			if name, ok := flagSecret(args[i-1], a); ok {
				out[i] = []secret{{Span: Span{Start: 0, End: len(a), Kind: Pair, Name: name}, word: true, literal: a}}
				continue
			}
		}
		out[i] = find(a, p)
	}
	return out
}

// replaceSecrets rewrites the non-overlapping, ordered secrets of s.
func replaceSecrets(s string, found []secret, repl func(secret) string) string {
	if len(found) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, f := range found {
		b.WriteString(s[last:f.Start])
		b.WriteString(repl(f))
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String()
}
