package secrets

import (
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"strings"
)

// Masked is what a hidden credential is shown as.
const Masked = "***"

// Mask returns s with every credential find recognizes replaced by
// Masked: URL userinfo, query and fragment parameter values, credential
// assignments, Authorization and other credential header values, and
// well-known token literals. It is for any text that may echo a user- or
// plugin-supplied source, URL or command: errors, warnings, logs, a
// manifest's URLs. It is idempotent and leaves ordinary words alone.
func Mask(s string) string {
	return replaceSecrets(s, find(s, display), func(secret) string { return Masked })
}

// MaskQuoting returns Mask(text), with also every credential of input
// masked wherever text repeats it: a message about a refused input may
// quote a piece of it out of the place that made it a credential (a
// password in "invalid port …"). Values shorter than four bytes are left:
// too short to be a credential, and masking them would garble the text.
func MaskQuoting(text, input string) string {
	var values []string
	add := func(v string) {
		if len(v) < 4 {
			return
		}
		values = append(values, v)
		if u, err := url.QueryUnescape(v); err == nil && u != v && len(u) >= 4 {
			values = append(values, u)
		}
	}
	for _, sp := range find(input, display) {
		v := input[sp.Start:sp.End]
		add(v)
		if _, pass, ok := strings.Cut(v, ":"); ok && sp.Kind == Userinfo {
			add(pass)
		}
	}
	// Longest first, so a userinfo goes whole before its password.
	sort.SliceStable(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
	for _, v := range values {
		text = strings.ReplaceAll(text, v, Masked)
	}
	return Mask(text)
}

// MaskAttr is a slog.HandlerOptions.ReplaceAttr function that applies Mask
// to every string, error and fmt.Stringer value, the message included, so
// a log line never repeats a credential a source carried.
func MaskAttr(_ []string, a slog.Attr) slog.Attr {
	if k := a.Value.Kind(); k != slog.KindString && k != slog.KindAny {
		return a
	}
	var s string
	switch v := a.Value.Any().(type) {
	case string:
		s = v
	case error:
		s = v.Error()
	case fmt.Stringer:
		s = v.String()
	default:
		return a
	}
	if r := Mask(s); r != s {
		a.Value = slog.StringValue(r)
	}
	return a
}

// MaskValues hides each whole literal value of an env or headers map;
// references and empty values are shown as they are (nil when empty).
func MaskValues(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
		if v != "" && !IsReference(v) {
			out[k] = Masked
		}
	}
	return out
}

// MaskArgs hides credential flag values ("--token X", "--api-key=X"),
// well-known token literals and URL credentials in a launch command line
// (nil when empty).
func MaskArgs(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	found := argSecrets(args, display)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = replaceSecrets(a, found[i], func(secret) string { return Masked })
	}
	return out
}

// MaskCommand is a hook's command as shown: a shell command line (in the
// dialect of shell: bash by default, "powershell"/"pwsh" or "cmd") with its
// credential-bearing text hidden, or (exec form) the executable with any
// URL credential hidden.
func MaskCommand(command string, shellForm bool, shell string) string {
	if !shellForm {
		return Mask(command)
	}
	t := lexShell(command, dialectOf(shell))
	return replaceSecrets(command, t.secrets(display), func(secret) string { return Masked })
}
