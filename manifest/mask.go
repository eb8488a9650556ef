package manifest

import (
	"regexp"
	"strings"
)

// Masked replaces a credential wherever one is shown.
const Masked = "***"

var (
	envRef     = regexp.MustCompile(`\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*`)
	refFiller  = regexp.MustCompile(`^[A-Za-z \t:-]*$`)
	authScheme = regexp.MustCompile(`^(?i)(Bearer|Basic|Token|Bot|Digest)\s+(\S.*)$`)
	// secretWords are name parts that mark a credential: access_token,
	// apiKey, X-Amz-Signature, client_secret, --password.
	secretWords = map[string]bool{
		"token": true, "secret": true, "password": true, "passwd": true, "pwd": true, "passphrase": true,
		"key": true, "apikey": true, "auth": true, "authorization": true, "credential": true, "credentials": true,
		"signature": true, "sig": true, "session": true, "sessionid": true, "cookie": true, "private": true,
		"privatekey": true, "accesstoken": true, "authtoken": true, "clientsecret": true, "pat": true, "bearer": true,
	}
	nameWord = regexp.MustCompile(`[A-Z]+[a-z0-9]*|[a-z0-9]+`)
	// Well-known credential prefixes: such a value is a secret whatever the
	// key it sits under.
	secretPrefixes = []string{"ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_", "glpat-", "sk-", "sk_live_", "rk_live_", "xoxb-", "xoxp-", "xoxa-", "AKIA", "npm_", "hf_"}
)

// isReference reports whether v names its secret instead of holding it:
// "${VAR}", "$VAR", or such a reference behind a plain word like "Bearer ".
func isReference(v string) bool {
	if !envRef.MatchString(v) {
		return false
	}
	return refFiller.MatchString(envRef.ReplaceAllString(v, ""))
}

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

func secretName(name string) bool {
	for _, w := range nameWord.FindAllString(name, -1) {
		if secretWords[strings.ToLower(w)] {
			return true
		}
	}
	return false
}

func secretValue(v string) bool {
	for _, p := range secretPrefixes {
		if strings.HasPrefix(v, p) && len(v) > len(p)+8 {
			return true
		}
	}
	return false
}

// maskURL hides URL userinfo and credential-looking query or fragment
// values. It works on the text, not a parsed URL, so nothing else of the
// URL is re-encoded.
func maskURL(s string) string {
	rest, frag, hasFrag := strings.Cut(s, "#")
	base, query, hasQuery := strings.Cut(rest, "?")
	if i := strings.Index(base, "://"); i >= 0 {
		auth := base[i+3:]
		end := strings.IndexAny(auth, "/")
		if end < 0 {
			end = len(auth)
		}
		if at := strings.LastIndex(auth[:end], "@"); at >= 0 && !isReference(auth[:at]) {
			base = base[:i+3] + Masked + auth[at:]
		}
	}
	out := base
	if hasQuery {
		out += "?" + maskPairs(query)
	}
	if hasFrag {
		if strings.Contains(frag, "=") {
			frag = maskPairs(frag)
		} else if secretValue(frag) {
			frag = Masked
		}
		out += "#" + frag
	}
	return out
}

func maskPairs(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok || v == "" || isReference(v) {
			continue
		}
		if secretName(k) || secretValue(v) {
			parts[i] = k + "=" + Masked
		}
	}
	return strings.Join(parts, "&")
}

// maskArgs hides credential flag values ("--token X", "--api-key=X"),
// well-known token literals and URL credentials in a launch command line.
func maskArgs(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = maskArg(a)
		if i > 0 && isSecretFlag(args[i-1]) && !strings.HasPrefix(a, "-") && a != "" && !isReference(a) {
			out[i] = Masked
		}
	}
	return out
}

func maskArg(a string) string {
	if strings.HasPrefix(a, "-") {
		if flag, v, ok := strings.Cut(a, "="); ok && secretName(strings.TrimLeft(flag, "-")) && v != "" && !isReference(v) {
			return flag + "=" + Masked
		}
	}
	if secretValue(a) {
		return Masked
	}
	if strings.Contains(a, "://") {
		return maskURL(a)
	}
	if k, v, ok := strings.Cut(a, "="); ok && !strings.HasPrefix(a, "-") && secretName(k) && v != "" && !isReference(v) {
		return k + "=" + Masked // "API_KEY=..." passed to env(1) or similar
	}
	return a
}

func isSecretFlag(a string) bool {
	return strings.HasPrefix(a, "-") && !strings.Contains(a, "=") && secretName(strings.TrimLeft(a, "-"))
}
