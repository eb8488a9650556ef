package manifest

import (
	"sort"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/lazyregexp"
)

// Masked replaces a credential wherever one is shown.
const Masked = plugind.Masked

// Credential detection (names, token formats, references) is
// plugind.FindSecrets and friends: one definition shared with error and log
// redaction. This file adds what needs a manifest's structure: whole env
// and header values, argument lists, and shell command lines.

func isReference(v string) bool { return plugind.IsSecretReference(v) }

// maskValue hides a literal env or header value; references and empty
// values are shown as they are.
func maskValue(v string) string {
	if v == "" || isReference(v) {
		return v
	}
	return Masked
}

func maskMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = maskValue(v)
	}
	return out
}

// maskURL hides URL userinfo and credential-looking query or fragment
// values. It works on the text, not a parsed URL, so nothing else of the
// URL is re-encoded.
func maskURL(s string) string { return plugind.RedactSecrets(s) }

// flagWord is an option that may take a value: -u, --api-key, --auth.token.
var flagWord = lazyregexp.New(`^--?[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// secret is one credential inside a string the manifest declares.
type secret struct {
	start, end int
	kind       plugind.SecretKind
	name       string // see plugind.SecretSpan.Name; a flag's name for flag values
	// word marks a whole shell word (the value after a credential flag),
	// quotes included; its literal is the word's unquoted text.
	word    bool
	literal string
}

func spansOf(s string) []secret {
	var out []secret
	for _, sp := range plugind.FindSecrets(s) {
		out = append(out, secret{start: sp.Start, end: sp.End, kind: sp.Kind, name: sp.Name, literal: s[sp.Start:sp.End]})
	}
	return out
}

// flagSecret reports whether value, following flag in an argument list or
// command line, is the credential the flag names: "--token X",
// "--api-key X", and curl's "-u user:password". It returns the name the
// value is bound to.
func flagSecret(flag, value string) (string, bool) {
	if !flagWord.MatchString(flag) || value == "" || value == Masked ||
		strings.HasPrefix(value, "-") || strings.HasPrefix(value, "$") || isReference(value) {
		return "", false
	}
	name := strings.TrimLeft(flag, "-")
	if (flag == "-u" || flag == "--user") && strings.Contains(value, ":") {
		return "user", true
	}
	if name == "" || !plugind.IsSecretName(name) {
		return "", false
	}
	return name, true
}

// argSecrets finds the credentials of an argument list, per argument.
func argSecrets(args []string) [][]secret {
	out := make([][]secret, len(args))
	for i, a := range args {
		if i > 0 {
			if name, ok := flagSecret(args[i-1], a); ok {
				out[i] = []secret{{start: 0, end: len(a), kind: plugind.SecretPair, name: name, word: true, literal: a}}
				continue
			}
		}
		out[i] = spansOf(a)
	}
	return out
}

// maskArgs hides credential flag values ("--token X", "--api-key=X"),
// well-known token literals and URL credentials in a launch command line.
func maskArgs(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	found := argSecrets(args)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = replaceSecrets(a, found[i], func(secret) string { return Masked })
	}
	return out
}

// maskCommand is a hook's command as shown: a shell command line with its
// credential-bearing text hidden, or (exec form) the executable with any
// URL credential hidden.
func maskCommand(command string, shellForm bool, shell string) string {
	if !shellForm {
		return plugind.RedactSecrets(command)
	}
	t := lexShell(command, dialectOf(shell))
	return replaceSecrets(command, t.secrets(), func(secret) string { return Masked })
}

// replaceSecrets rewrites the non-overlapping, ordered secrets of s.
func replaceSecrets(s string, found []secret, repl func(secret) string) string {
	if len(found) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, f := range found {
		b.WriteString(s[last:f.start])
		b.WriteString(repl(f))
		last = f.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// mergeSecrets orders secrets and drops any that overlaps an earlier one; on
// equal starts the first listed wins (a flag's value before a token in it).
func mergeSecrets(found []secret) []secret {
	sort.SliceStable(found, func(i, j int) bool { return found[i].start < found[j].start })
	out := found[:0]
	end := -1
	for _, f := range found {
		if f.start < end {
			continue
		}
		out = append(out, f)
		end = f.end
	}
	return out
}
