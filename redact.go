package plugind

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"reasonix.io/plugind/internal/lazyregexp"
)

// Masked is what a hidden credential is shown as.
const Masked = "***"

// SecretKind says how FindSecrets recognized a credential.
type SecretKind uint8

const (
	// SecretUserinfo is the user[:password] part of a URL
	// ("https://user:pass@host").
	SecretUserinfo SecretKind = iota + 1
	// SecretPair is the value of NAME=VALUE whose NAME marks a credential: a
	// query parameter (?access_token=…), an assignment (API_KEY=…), a flag
	// (--password=…).
	SecretPair
	// SecretHeader is the value of a credential header or JSON member:
	// "Authorization: Bearer …" (the scheme word is kept), "X-Api-Key: …",
	// "token": "…".
	SecretHeader
	// SecretBearer is the token after a bare "Bearer ".
	SecretBearer
	// SecretToken is a whole well-known credential token (ghp_…, sk-…,
	// AKIA…), whatever surrounds it.
	SecretToken
)

// SecretSpan is one credential value found in a text: text[Start:End].
type SecretSpan struct {
	Start, End int
	Kind       SecretKind
	// Name is what the value is bound to: the key of a SecretPair, the
	// header or member name of a SecretHeader, and for a SecretToken the
	// environment variable such a token is conventionally kept in
	// (GITHUB_TOKEN). Empty for SecretUserinfo and SecretBearer.
	Name string
}

// RedactSecrets returns s with every credential FindSecrets recognizes
// replaced by Masked: URL userinfo, token-like query and assignment values,
// Authorization and other credential header values, and well-known token
// literals. It is for any text that may echo a user- or plugin-supplied
// source, URL or command: errors, warnings, logs. It is idempotent and
// leaves ordinary words alone.
func RedactSecrets(s string) string {
	spans := FindSecrets(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.Start])
		b.WriteString(Masked)
		last = sp.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// RedactAttr is a slog.HandlerOptions.ReplaceAttr function that applies
// RedactSecrets to every string, error and fmt.Stringer value, the message
// included, so a log line never repeats a credential a source carried.
func RedactAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		s := a.Value.String()
		if r := RedactSecrets(s); r != s {
			a.Value = slog.StringValue(r)
		}
	case slog.KindAny:
		var s string
		switch v := a.Value.Any().(type) {
		case error:
			s = v.Error()
		case fmt.Stringer:
			s = v.String()
		default:
			return a
		}
		if r := RedactSecrets(s); r != s {
			a.Value = slog.StringValue(r)
		}
	}
	return a
}

// FindSecrets returns the credential values in s, in order and without
// overlaps. The detection is lexical, one pass over the bytes; it is the
// single definition of "looks like a credential" that display masking,
// export and error redaction share.
func FindSecrets(s string) []SecretSpan {
	f := finder{s: s}
	for i := 0; i < len(s); i++ {
		// Whatever starts inside a credential already found would overlap
		// it and be dropped: skipping it keeps the scan linear on texts
		// like "key=key=key=…".
		if i < f.end {
			continue
		}
		switch c := s[i]; {
		case c == ':':
			if strings.HasPrefix(s[i:], "://") {
				f.userinfo(i)
			} else {
				f.header(i)
			}
		case c == '=':
			f.pair(i)
		case isTokenByte(c) && (i == 0 || !isTokenByte(s[i-1])):
			f.word(i)
		}
	}
	return f.result()
}

type finder struct {
	s     string
	spans []SecretSpan
	end   int // the furthest end of a span found so far
}

func (f *finder) add(start, end int, kind SecretKind, name string) {
	f.spans = append(f.spans, SecretSpan{Start: start, End: end, Kind: kind, Name: name})
	f.end = max(f.end, end)
}

// result orders the spans and drops any that overlaps an earlier one: the
// first rule to claim a value (a pair's key before the token it holds)
// names it.
func (f *finder) result() []SecretSpan {
	if len(f.spans) == 0 {
		return nil
	}
	sort.SliceStable(f.spans, func(i, j int) bool { return f.spans[i].Start < f.spans[j].Start })
	out := f.spans[:0]
	end := -1
	for _, sp := range f.spans {
		if sp.Start < end {
			continue
		}
		out = append(out, sp)
		end = sp.End
	}
	return out
}

// userinfo handles "scheme://userinfo@host": i is the index of "://".
func (f *finder) userinfo(i int) {
	s := f.s
	j := i
	for j > 0 && isSchemeByte(s[j-1]) {
		j--
	}
	if j == i || !isLetter(s[j]) {
		return
	}
	a := i + 3
	e := a
	for e < len(s) && !isAuthorityEnd(s[e]) {
		e++
	}
	at := strings.LastIndexByte(s[a:e], '@')
	if at <= 0 {
		return
	}
	if ui := s[a : a+at]; ui != Masked && !IsSecretReference(ui) {
		f.add(a, a+at, SecretUserinfo, "")
	}
}

// pair handles NAME=VALUE: i is the index of '='.
func (f *finder) pair(i int) {
	s := f.s
	if i+1 < len(s) && s[i+1] == '=' || i > 0 && strings.IndexByte("=!<>", s[i-1]) >= 0 {
		return // ==, !=, <=, >=: a comparison, not an assignment
	}
	j := i
	for j > 0 && isKeyByte(s[j-1]) {
		j--
	}
	key := strings.TrimLeft(s[j:i], "-")
	if key == "" || !IsSecretName(key) {
		return
	}
	start, end := valueSpan(s, i+1)
	kind := SecretPair
	if isAuthHeader(key) {
		// Authorization='Bearer …' (a PowerShell hashtable, a config
		// line): keep the scheme word in sight, as for the header.
		kind = SecretHeader
		start = skipAuthScheme(s[:end], start)
		if authSchemes[strings.ToLower(s[start:end])] {
			return
		}
	}
	if isLiteralSecret(s[start:end]) {
		f.add(start, end, kind, key)
	}
}

func isAuthHeader(name string) bool {
	return strings.EqualFold(name, "authorization") || strings.EqualFold(name, "proxy-authorization")
}

// skipAuthScheme returns where the credentials start in an Authorization
// value at p: after its scheme word ("Bearer ") when it has one.
func skipAuthScheme(s string, p int) int {
	w := p
	for w < len(s) && isLetter(s[w]) {
		w++
	}
	if !authSchemes[strings.ToLower(s[p:w])] || w >= len(s) || s[w] != ' ' {
		return p
	}
	for w < len(s) && s[w] == ' ' {
		w++
	}
	return w
}

// header handles "Name: value" for credential headers and "name": "value"
// for credential JSON members: i is the index of ':'.
func (f *finder) header(i int) {
	s := f.s
	j := i
	quoted := j > 0 && s[j-1] == '"'
	if quoted {
		j--
	}
	k := j
	for k > 0 && isHeaderByte(s[k-1]) {
		k--
	}
	name := s[k:j]
	if name == "" || quoted && (k == 0 || s[k-1] != '"') {
		return
	}
	auth := isAuthHeader(name)
	switch {
	case auth:
	case quoted:
		if !IsSecretName(name) {
			return
		}
	default:
		// Unquoted, only header-shaped names ("X-Api-Key:"): prose such
		// as "token: unexpected end" is not a credential.
		if !strings.Contains(name, "-") || !IsSecretName(name) {
			return
		}
	}
	p := i + 1
	for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
		p++
	}
	if p < len(s) && (s[p] == '"' || s[p] == '\'') {
		if q := strings.IndexByte(s[p+1:], s[p]); !auth && q >= 0 {
			if v := s[p+1 : p+1+q]; isLiteralSecret(v) && v[0] != '<' {
				f.add(p+1, p+1+q, SecretHeader, name)
			}
			return
		}
		p++
	}
	if auth {
		p = skipAuthScheme(s, p)
	}
	e := p
	for e < len(s) && !isValueEnd(s[e]) {
		e++
	}
	// A scheme word alone ("needs Authorization: Bearer" at a line's end)
	// names the kind of credential, not one.
	if v := s[p:e]; isLiteralSecret(v) && !(auth && authSchemes[strings.ToLower(v)]) {
		f.add(p, e, SecretHeader, name)
	}
}

// word handles what starts at a word boundary: a bare "Bearer <token>"
// and the well-known token formats.
func (f *finder) word(i int) {
	s := f.s
	if (s[i] == 'B' || s[i] == 'b') && len(s) > i+7 && strings.EqualFold(s[i:i+7], "bearer ") {
		p := i + 7
		for p < len(s) && s[p] == ' ' {
			p++
		}
		e := p
		for e < len(s) && isBearerByte(s[e]) {
			e++
		}
		// A bare "Bearer" in prose ("a bearer credential") is followed by
		// a word, not a token: ask for a digit.
		if v := s[p:e]; len(v) >= 6 && hasDigit(v) && isLiteralSecret(v) {
			f.add(p, e, SecretBearer, "")
		}
		return
	}
	for _, ti := range tokensByFirstByte[s[i]] {
		t := &knownTokens[ti]
		if !strings.HasPrefix(s[i:], t.prefix) {
			continue
		}
		p := i + len(t.prefix)
		e := p
		for e < len(s) && t.class(s[e]) {
			e++
		}
		if e < len(s) && isTokenByte(s[e]) {
			continue // the word goes on: not this token's shape
		}
		// Short random tokens nearly always hold a digit; asking for one
		// keeps words like "sk-learn" out.
		if rest := s[p:e]; len(rest) >= t.min && (t.max == 0 || len(rest) <= t.max) && (len(rest) >= 20 || hasDigit(rest)) {
			f.add(i, e, SecretToken, t.env)
			return
		}
	}
	if s[i] == 'e' && strings.HasPrefix(s[i:], "eyJ") {
		if m := jwtPattern.FindStringIndex(s[i:]); m != nil && (i+m[1] == len(s) || !isTokenByte(s[i+m[1]])) {
			f.add(i, i+m[1], SecretToken, "JWT")
		}
	}
}

// knownTokens are credential formats recognized whatever key they sit under.
// Longer prefixes come before their own prefixes (sk-ant- before sk-).
var knownTokens = []struct {
	prefix   string
	env      string // where such a token is conventionally kept
	class    func(byte) bool
	min, max int // length after the prefix; max 0 is unbounded
}{
	{"ghp_", "GITHUB_TOKEN", isAlnum, 20, 0},
	{"gho_", "GITHUB_TOKEN", isAlnum, 20, 0},
	{"ghu_", "GITHUB_TOKEN", isAlnum, 20, 0},
	{"ghs_", "GITHUB_TOKEN", isAlnum, 20, 0},
	{"ghr_", "GITHUB_TOKEN", isAlnum, 20, 0},
	{"github_pat_", "GITHUB_TOKEN", isWordByte, 20, 0},
	{"glpat-", "GITLAB_TOKEN", isTokenByte, 20, 0},
	{"sk-ant-", "ANTHROPIC_API_KEY", isTokenByte, 20, 0},
	{"sk-", "OPENAI_API_KEY", isTokenByte, 8, 0},
	{"sk_live_", "STRIPE_SECRET_KEY", isAlnum, 16, 0},
	{"sk_test_", "STRIPE_SECRET_KEY", isAlnum, 16, 0},
	{"rk_live_", "STRIPE_SECRET_KEY", isAlnum, 16, 0},
	{"rk_test_", "STRIPE_SECRET_KEY", isAlnum, 16, 0},
	{"xoxb-", "SLACK_BOT_TOKEN", isTokenByte, 10, 0},
	{"xoxp-", "SLACK_USER_TOKEN", isTokenByte, 10, 0},
	{"xoxa-", "SLACK_TOKEN", isTokenByte, 10, 0},
	{"xoxr-", "SLACK_TOKEN", isTokenByte, 10, 0},
	{"xoxs-", "SLACK_TOKEN", isTokenByte, 10, 0},
	{"AKIA", "AWS_ACCESS_KEY_ID", isUpperDigit, 16, 16},
	{"ASIA", "AWS_ACCESS_KEY_ID", isUpperDigit, 16, 16},
	{"AIza", "GOOGLE_API_KEY", isTokenByte, 35, 35},
	{"npm_", "NPM_TOKEN", isAlnum, 30, 0},
	{"hf_", "HF_TOKEN", isAlnum, 30, 0},
}

// tokensByFirstByte indexes knownTokens by the first byte of their prefix,
// so the scan looks at no format that cannot start where it is.
var tokensByFirstByte = func() (idx [256][]int) {
	for i, t := range knownTokens {
		idx[t.prefix[0]] = append(idx[t.prefix[0]], i)
	}
	return idx
}()

var jwtPattern = lazyregexp.New(`^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`)

// IsSecretToken reports whether v as a whole is a well-known credential
// token (ghp_…, github_pat_…, glpat-…, sk-…, xoxb-…, AKIA…).
func IsSecretToken(v string) bool {
	sp := FindSecrets(v)
	return len(sp) == 1 && sp[0].Kind == SecretToken && sp[0].Start == 0 && sp[0].End == len(v)
}

var authSchemes = map[string]bool{"bearer": true, "basic": true, "token": true, "bot": true, "digest": true, "negotiate": true, "ntlm": true}

// secretWords end a name that holds a credential: access_token, apiKey,
// X-Amz-Signature, client_secret, --password, GITHUB_PAT.
var secretWords = map[string]bool{
	"token": true, "tokens": true, "secret": true, "secrets": true, "password": true, "passwd": true, "pwd": true,
	"pass": true, "passphrase": true, "key": true, "apikey": true, "accesskey": true, "secretkey": true,
	"privatekey": true, "auth": true, "authorization": true, "credential": true, "credentials": true,
	"signature": true, "sig": true, "session": true, "sessionid": true, "sessionkey": true, "cookie": true,
	"private": true, "accesstoken": true, "authtoken": true, "apitoken": true, "refreshtoken": true,
	"clientsecret": true, "pat": true, "bearer": true, "jwt": true,
}

// neutralSuffixes may follow the credential word without changing what the
// name holds: session_id, SECRET_KEY_BASE.
var neutralSuffixes = map[string]bool{
	"id": true, "ids": true, "value": true, "val": true, "str": true, "string": true, "b64": true,
	"base64": true, "hex": true, "raw": true, "data": true, "base": true, "enc": true, "encoded": true,
}

// IsSecretName reports whether a key, variable, flag or header name says it
// holds a credential. The last word decides (ignoring neutral suffixes
// such as _id), so TOKEN_FILE, credential.helper, token_type and
// public_key are not credentials while access_token and SESSION_ID are.
func IsSecretName(name string) bool {
	words := nameWords(name)
	for len(words) > 1 && neutralSuffixes[words[len(words)-1]] {
		words = words[:len(words)-1]
	}
	if len(words) == 0 {
		return false
	}
	last := words[len(words)-1]
	if !secretWords[last] {
		return false
	}
	return last != "key" || len(words) < 2 || words[len(words)-2] != "public"
}

// nameWords splits a name at punctuation and camel-case humps, lower-cased:
// "X-Amz-Signature" → x amz signature, "apiKey" → api key,
// "APIKey" → api key.
func nameWords(name string) []string {
	var words []string
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, strings.ToLower(name[start:end]))
		}
		start = -1
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := name[i-1]
		switch {
		case isUpper(c) && (isLower(prev) || isDigit(prev)):
			flush(i)
			start = i
		case isUpper(c) && isUpper(prev) && i+1 < len(name) && isLower(name[i+1]):
			flush(i)
			start = i
		}
	}
	flush(len(name))
	return words
}

var (
	envRef    = lazyregexp.New(`\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%`)
	refFiller = lazyregexp.New(`^[A-Za-z \t:-]*$`)
)

// IsSecretReference reports whether v names its secret instead of holding
// it: "${VAR}", "$VAR", "%VAR%", "${env:VAR}", "$env:VAR", or such a
// reference behind plain words like "Bearer ".
func IsSecretReference(v string) bool {
	if !strings.ContainsAny(v, "$%") || !envRef.MatchString(v) {
		return false
	}
	return refFiller.MatchString(envRef.ReplaceAllString(v, ""))
}

// isLiteralSecret reports whether a value bound to a credential name is a
// literal worth hiding: not empty, not already masked, not a reference or
// an expansion ($(…), {placeholder}), not a boolean.
func isLiteralSecret(v string) bool {
	// A reference may sit in quotes of its own: an exported shell command
	// writes 'token='"${VAR}"'' so that the shell expands it.
	if u := strings.Trim(v, `"'`); u != v && (u == "" || u == Masked || IsSecretReference(u)) {
		return false
	}
	if v == "" || v == Masked || IsSecretReference(v) {
		return false
	}
	switch v[0] {
	case '$', '{', '<':
		return false
	}
	switch strings.ToLower(v) {
	case "true", "false", "null", "none", "yes", "no", "on", "off":
		return false
	}
	return true
}

// valueSpan returns the value starting at p: up to the closing quote when
// it is quoted, else up to the first byte that ends a value.
func valueSpan(s string, p int) (int, int) {
	if p < len(s) && (s[p] == '"' || s[p] == '\'') {
		if q := strings.IndexByte(s[p+1:], s[p]); q >= 0 {
			return p + 1, p + 1 + q
		}
		p++
	}
	e := p
	for e < len(s) && !isValueEnd(s[e]) {
		e++
	}
	return p, e
}

func isValueEnd(c byte) bool {
	return c <= ' ' || c == 0x7f || strings.IndexByte("&#\"'`<>;,)]}|\\", c) >= 0
}

func isAuthorityEnd(c byte) bool {
	return c <= ' ' || c == 0x7f || strings.IndexByte("/?#\"'`<>\\", c) >= 0
}

func isLetter(c byte) bool     { return isUpper(c) || isLower(c) }
func isUpper(c byte) bool      { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool      { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool      { return isLetter(c) || isDigit(c) }
func isUpperDigit(c byte) bool { return isUpper(c) || isDigit(c) }
func isWordByte(c byte) bool   { return isAlnum(c) || c == '_' }
func isTokenByte(c byte) bool  { return isWordByte(c) || c == '-' }
func isKeyByte(c byte) bool    { return isTokenByte(c) || c == '.' }
func isHeaderByte(c byte) bool { return isTokenByte(c) }
func isSchemeByte(c byte) bool { return isAlnum(c) || c == '+' || c == '-' || c == '.' }
func isBearerByte(c byte) bool { return isTokenByte(c) || strings.IndexByte("._~+/=", c) >= 0 }

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			return true
		}
	}
	return false
}
