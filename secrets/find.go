// Package secrets is the one home of credential handling: detection (find)
// and its two policies, mask for display (Mask and the Mask* helpers) and
// strip for export (Strip). Every caller that shows or exports text a user,
// a source or a plugin supplied goes through it, so "looks like a
// credential" has one definition.
package secrets

import (
	"sort"
	"strings"
)

// Kind says how find recognized a credential.
type Kind uint8

const (
	// Userinfo is the user[:password] part of a URL
	// ("https://user:pass@host"), and the password of the scp-like
	// spelling of a remote ("user:pass@host:path").
	Userinfo Kind = iota + 1
	// Pair is the value of NAME=VALUE whose NAME marks a credential: a
	// query parameter (?access_token=…), an assignment (API_KEY=…), a flag
	// (--password=…).
	Pair
	// Header is the value of a credential header or JSON member:
	// "Authorization: Bearer …" (the scheme word is kept), "X-Api-Key: …",
	// "token": "…".
	Header
	// Bearer is the token after a bare "Bearer ".
	Bearer
	// Token is a whole well-known credential token (ghp_…, sk-…, AKIA…),
	// whatever surrounds it.
	Token
	// Param is any other parameter value of a URL's query or of a
	// key=value fragment ("?code=…", "?x"): nothing names it a credential,
	// but a query is where URLs carry them.
	Param
)

// Span is one credential value found in a text: text[Start:End].
type Span struct {
	Start, End int
	Kind       Kind
	// Name is what the value is bound to: the key of a Pair or Param, the
	// header or member name of a Header, and for a Token the environment
	// variable such a token is conventionally kept in (GITHUB_TOKEN).
	// Empty for Userinfo, Bearer and a Param without a key.
	Name string
	// byPlace marks a span found by where it sits in a URL rather than by
	// a name or a format (see find): display hides it, export leaves it.
	byPlace bool
}

// A policy says which credentials an operation acts on.
type policy uint8

const (
	// display hides every credential find knows, the union of
	// overlapping ones.
	display policy = iota
	// export moves to variables the credentials something names (a key,
	// a header, a flag, a token format, URL userinfo); what is only in a
	// credential's place stays, as the plugin needs it verbatim.
	export
)

// find returns the credential values in s that p covers, in order and
// without overlaps. The detection is lexical, one pass over the bytes; it
// is the single definition of "looks like a credential" that display
// masking, export and error redaction share.
//
// It runs the rules in two tiers. The named rules (userinfo, pair, header,
// word) claim what they find, and the scan goes on after it. The place
// rules only widen what display hides: every parameter of a URL's query or
// key=value fragment, the rest of a credential parameter's value up to its
// '&', the password of "user:pass@host", and URL userinfo whose password
// holds a quote. They never move the scan, so what the named rules find is
// the same with or without them.
func find(s string, p policy) []secret {
	f := finder{s: s}
	lastBreak, lastSlash := -1, -1 // the byte before the current word; its last '/'
	for i := 0; i < len(s); i++ {
		c := s[i]
		if cl := classes[c]; cl&(wordBreak|opener|slash) != 0 {
			switch {
			case cl&slash != 0:
				lastSlash = i
			case cl&wordBreak != 0 || i == 0 || isWordBreak(s[i-1]) || isOpener(s[i-1]) || strings.IndexByte("=:,;]", s[i-1]) >= 0:
				lastBreak = i // an opener where a word may start
			}
		}
		// Whatever starts inside a credential already found would overlap
		// it and be dropped: skipping it keeps the scan linear on texts
		// like "key=key=key=…".
		if i < f.end {
			continue
		}
		switch {
		case c == ':':
			if strings.HasPrefix(s[i:], "://") {
				f.userinfo(i)
			} else {
				f.scp(i)
				f.header(i)
			}
		case c == '=':
			f.pair(i)
		case c == '?' || c == '#':
			// A query or fragment of a URL or a path-like word: the word
			// holds a '/' ("https://h/p?x", "owner/repo?x"); or the
			// fragment right after a query.
			if lastSlash > lastBreak || c == '#' && i == f.qEnd && i > 0 {
				opener := byte(0)
				if lastBreak >= 0 {
					opener = s[lastBreak]
				}
				f.params(i, closerOf(opener))
			}
		case isTokenByte(c) && (i == 0 || !isTokenByte(s[i-1])):
			f.word(i)
		}
	}
	return f.result(p)
}

type finder struct {
	s     string
	spans []secret
	end   int // the furthest end of a named span found so far
	// qStart and qEnd bound the last URL query or fragment read, '?' or
	// '#' included: a value there runs to the next '&', as a URL's does.
	qStart, qEnd int
	// runFrom, runEnd, runAt and runCloser cache the last authority run
	// scp read: every ':' inside it ends where it ends, so reading it
	// once keeps the scan linear on texts like "=a:=a:=a:…".
	runFrom, runEnd, runAt int
	runCloser              byte
	runHidden              int // where the last password scp found ends
}

// run returns where the authority starting at p ends (authorityEnd) and
// the index of its last '@' (-1 when it has none).
func (f *finder) run(p int, opener byte) (end, at int) {
	closer := closerOf(opener)
	if f.runEnd == 0 || closer != f.runCloser || p < f.runFrom || p > f.runEnd {
		f.runFrom, f.runCloser = p, closer
		f.runEnd = authorityEnd(f.s, p, opener)
		f.runAt = strings.LastIndexByte(f.s[p:f.runEnd], '@')
		if f.runAt >= 0 {
			f.runAt += p
		}
	}
	if f.runAt < p {
		return f.runEnd, -1
	}
	return f.runEnd, f.runAt
}

// add records a credential a named rule found; the scan resumes after it.
func (f *finder) add(start, end int, kind Kind, name string) {
	f.spans = append(f.spans, secret{Span: Span{Start: start, End: end, Kind: kind, Name: name}})
	f.end = max(f.end, end)
}

// addByPlace records a credential a place rule found.
func (f *finder) addByPlace(start, end int, kind Kind, name string) {
	f.spans = append(f.spans, secret{Span: Span{Start: start, End: end, Kind: kind, Name: name, byPlace: true}})
}

// result orders the spans p covers and resolves their overlaps (ordered);
// each one's literal is the text it finally covers.
func (f *finder) result(p policy) []secret {
	out := f.spans[:0]
	for _, sp := range f.spans {
		if p == display || !sp.byPlace {
			out = append(out, sp)
		}
	}
	out = ordered(out, p)
	for i := range out {
		out[i].literal = f.s[out[i].Start:out[i].End]
	}
	return out
}

// ordered sorts list by start (on equal starts the first listed comes
// first) and resolves overlaps as p does: display extends the earlier
// element over their union, export drops the later one, so the first rule
// to claim a value (a pair's key before the token it holds) names it.
func ordered(list []secret, p policy) []secret {
	sort.SliceStable(list, func(i, j int) bool { return list[i].Start < list[j].Start })
	out := list[:0]
	for _, sp := range list {
		if n := len(out); n > 0 && sp.Start < out[n-1].End {
			if p == display && sp.End > out[n-1].End {
				out[n-1].End = sp.End
			}
			continue
		}
		out = append(out, sp)
	}
	return out
}

// userinfo handles "scheme://userinfo@host": i is the index of "://".
func (f *finder) userinfo(i int) {
	s := f.s
	j := runStart(s, i, isSchemeByte)
	if j == i || !isLetter(s[j]) {
		return
	}
	a := i + 3
	e := runEnd(s, a, inAuthority)
	// An ssh:// URL's user is an account name ("git"): SSH never carries
	// a secret there. Only a password after it is one.
	sshUser := func(ui string) bool { return strings.EqualFold(s[j:i], "ssh") && !strings.Contains(ui, ":") }
	if at := strings.LastIndexByte(s[a:e], '@'); at > 0 {
		if ui := s[a : a+at]; ui != Masked && !IsReference(ui) && !sshUser(ui) {
			f.add(a, a+at, Userinfo, "")
		}
	}
	// A quote in the password ("u:pa'ss@h"): the authority runs on to
	// the quote or bracket the URL sits in, if any.
	e = authorityEnd(s, a, openerAt(s, j))
	if at := strings.LastIndexByte(s[a:e], '@'); at > 0 {
		if ui := s[a : a+at]; ui != Masked && !IsReference(ui) && !sshUser(ui) {
			f.addByPlace(a, a+at, Userinfo, "")
		}
	}
}

// scp handles "user:password@host", the scp-like spelling of a remote
// with a password: i is the index of ':'. The password is the credential
// (the user stays in sight, as a source's error shows it).
func (f *finder) scp(i int) {
	s := f.s
	j := runStart(s, i, isUserByte)
	// The user starts a word: not a path's or a host's tail
	// ("x/y:z@h", "a@b:c@d"), not a reference ("${USER}:…"); and it is
	// not inside a password already found.
	if j == i || j > 0 && strings.IndexByte("/:@$}%", s[j-1]) >= 0 || i < f.runHidden {
		return
	}
	e, at := f.run(i+1, openerAt(s, j))
	if at <= i+1 {
		return
	}
	host := s[at+1 : e]
	if host == "" || !isAlnum(host[0]) {
		return
	}
	// mailto:me@host names an address; image:tag@sha256:… pins an image.
	if strings.EqualFold(s[j:i], "mailto") || strings.HasPrefix(host, "sha256:") || strings.HasPrefix(host, "sha512:") {
		return
	}
	if pass := s[i+1 : at]; pass != Masked && !IsReference(pass) {
		f.addByPlace(i+1, at, Userinfo, "")
		f.runHidden = at
	}
}

// pair handles NAME=VALUE: i is the index of '='.
func (f *finder) pair(i int) {
	s := f.s
	if i+1 < len(s) && s[i+1] == '=' || i > 0 && strings.IndexByte("=!<>", s[i-1]) >= 0 {
		return // ==, !=, <=, >=: a comparison, not an assignment
	}
	key := pairKey(s, i)
	if key == "" || !IsName(key) {
		return
	}
	start, end := valueSpan(s, i+1)
	kind := Pair
	if isAuthHeader(key) {
		// Authorization='Bearer …' (a PowerShell hashtable, a config
		// line): keep the scheme word in sight, as for the header.
		kind = Header
		start = skipAuthScheme(s[:end], start)
		if authSchemes[strings.ToLower(s[start:end])] {
			return
		}
	}
	if !isLiteral(s[start:end]) {
		return
	}
	f.add(start, end, kind, key)
	// A URL parameter's value runs on to its '&' ("?token=a;b").
	if f.qStart < i && i < f.qEnd && start == i+1 {
		if pe := f.paramEnd(start); pe > end {
			f.addByPlace(start, pe, kind, key)
		}
	}
}

// pairKey is the name before the '=' at i, flag dashes trimmed.
func pairKey(s string, i int) string {
	return strings.TrimLeft(s[runStart(s, i, isKeyByte):i], "-")
}

// params handles the query ("?a=1&b") or the key=value fragment ("#a=1")
// at i, which ends at closer (the quote or bracket the URL is in) or at a
// byte no URL holds: every parameter value is a possible credential,
// whatever its name. Values under a credential name are left to pair,
// which names them.
func (f *finder) params(i int, closer byte) {
	s := f.s
	if i < f.qEnd {
		return // a '?' inside a query already read is data
	}
	e := runEnd(s, i+1, func(c byte) bool { return !isQueryEnd(c, closer) && !(s[i] == '?' && c == '#') })
	f.qStart, f.qEnd = i, e
	if s[i] == '#' && strings.IndexByte(s[i+1:e], '=') < 0 {
		return // "#section-2": an anchor, not parameters
	}
	for p := i + 1; p < e; {
		q := f.paramEnd(p)
		start, name := p, ""
		if eq := strings.IndexByte(s[p:q], '='); eq >= 0 {
			start, name = p+eq+1, s[p:p+eq]
			if k := pairKey(s, p+eq); k != "" && IsName(k) {
				start = q // pair reads it
			}
		}
		// Punctuation alone ("?)" ending a sentence) holds no secret.
		if v := s[start:q]; start < q && isLiteral(v) && strings.IndexFunc(v, isAlnumRune) >= 0 {
			f.addByPlace(start, q, Param, name)
		}
		p = q + 1
	}
}

// paramEnd is where the URL parameter at p ends: its '&' or the end of
// the query.
func (f *finder) paramEnd(p int) int {
	if q := strings.IndexByte(f.s[p:f.qEnd], '&'); q >= 0 {
		return p + q
	}
	return f.qEnd
}

func isAuthHeader(name string) bool {
	return strings.EqualFold(name, "authorization") || strings.EqualFold(name, "proxy-authorization")
}

// skipAuthScheme returns where the credentials start in an Authorization
// value at p: after its scheme word ("Bearer ") when it has one.
func skipAuthScheme(s string, p int) int {
	w := runEnd(s, p, isLetter)
	if !authSchemes[strings.ToLower(s[p:w])] || w >= len(s) || s[w] != ' ' {
		return p
	}
	return runEnd(s, w, isSpace)
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
	k := runStart(s, j, isTokenByte)
	name := s[k:j]
	if name == "" || quoted && (k == 0 || s[k-1] != '"') {
		return
	}
	auth := isAuthHeader(name)
	switch {
	case auth:
	case quoted:
		if !IsName(name) {
			return
		}
	default:
		// Unquoted, only header-shaped names ("X-Api-Key:"): prose such
		// as "token: unexpected end" is not a credential.
		if !strings.Contains(name, "-") || !IsName(name) {
			return
		}
	}
	p := runEnd(s, i+1, func(c byte) bool { return c == ' ' || c == '\t' })
	if p < len(s) && (s[p] == '"' || s[p] == '\'') {
		if q := strings.IndexByte(s[p+1:], s[p]); !auth && q >= 0 {
			if v := s[p+1 : p+1+q]; isLiteral(v) && v[0] != '<' {
				f.add(p+1, p+1+q, Header, name)
			}
			return
		}
		p++
	}
	if auth {
		p = skipAuthScheme(s, p)
	}
	e := runEnd(s, p, inValue)
	// A scheme word alone ("needs Authorization: Bearer" at a line's end)
	// names the kind of credential, not one.
	if v := s[p:e]; isLiteral(v) && !(auth && authSchemes[strings.ToLower(v)]) {
		f.add(p, e, Header, name)
	}
}

// word handles what starts at a word boundary: a bare "Bearer <token>"
// and the well-known token formats.
func (f *finder) word(i int) {
	s := f.s
	if (s[i] == 'B' || s[i] == 'b') && len(s) > i+7 && strings.EqualFold(s[i:i+7], "bearer ") {
		p := runEnd(s, i+7, isSpace)
		e := runEnd(s, p, isBearerByte)
		// A bare "Bearer" in prose ("a bearer credential") is followed by
		// a word, not a token: ask for a digit.
		if v := s[p:e]; len(v) >= 6 && hasDigit(v) && isLiteral(v) {
			f.add(p, e, Bearer, "")
		}
		return
	}
	if end, env := knownToken(s, i); end > i {
		f.add(i, end, Token, env)
	}
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
	return p, runEnd(s, p, inValue)
}
