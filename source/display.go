package source

import (
	"net/url"
	"strings"
)

const masked = "***"

// Display is raw as it may be shown in a message or log: userinfo, query
// values and a key=value fragment are masked, whatever else is wrong with
// the string. A refused source is echoed so the user can see which one was
// refused, but a credential in it must never reach a terminal, a log or an
// API error (SPEC §5).
func Display(raw string) string {
	if schemeRE.MatchString(raw) {
		scheme, rest, _ := strings.Cut(raw, "://")
		// The authority ends at the first '/', '?' or '#'.
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		authority, tail := rest[:end], rest[end:]
		if at := strings.LastIndex(authority, "@"); at >= 0 {
			authority = masked + authority[at:]
		}
		return scheme + "://" + authority + maskQuery(tail)
	}
	// scp-like or NAME@HOST forms: "user:secret@host:path".
	if at := strings.LastIndex(raw, "@"); at > 0 {
		if user, _, hasPass := strings.Cut(raw[:at], ":"); hasPass && !strings.Contains(raw[:at], "/") {
			raw = user + ":" + masked + raw[at:]
		}
	}
	return maskQuery(raw)
}

// maskQuery masks the values of a query and of a key=value fragment.
func maskQuery(tail string) string {
	p, frag, hasFrag := strings.Cut(tail, "#")
	p, query, hasQuery := strings.Cut(p, "?")
	out := p
	if hasQuery {
		out += "?" + maskPairs(query, "&")
	}
	if hasFrag {
		if strings.Contains(frag, "=") {
			frag = maskPairs(frag, "&")
		}
		out += "#" + frag
	}
	return out
}

// maskPairs masks every value of a key=value list, keeping the keys so the
// user can tell which parameter was refused.
func maskPairs(s, sep string) string {
	parts := strings.Split(s, sep)
	for i, part := range parts {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			if part != "" {
				parts[i] = masked
			}
			continue
		}
		if v != "" {
			if uk, err := url.QueryUnescape(k); err == nil {
				k = url.QueryEscape(uk)
			}
			parts[i] = k + "=" + masked
		}
	}
	return strings.Join(parts, sep)
}

// scrub removes from msg every credential raw carries (what Display masks),
// so no detail of a refusal can repeat one, however it quotes the input.
// Values shorter than four bytes are left: too short to be a credential,
// and scrubbing them would garble the message.
func scrub(raw, msg string) string {
	for _, secret := range secretsOf(raw) {
		if len(secret) >= 4 {
			msg = strings.ReplaceAll(msg, secret, masked)
		}
	}
	return msg
}

// secretsOf lists the credential-bearing parts of raw: userinfo, query
// values and key=value fragment values, raw and unescaped.
func secretsOf(raw string) []string {
	var out []string
	add := func(v string) {
		if v == "" {
			return
		}
		out = append(out, v)
		if u, err := url.QueryUnescape(v); err == nil && u != v {
			out = append(out, u)
		}
	}
	rest := raw
	if schemeRE.MatchString(raw) {
		_, rest, _ = strings.Cut(raw, "://")
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		userinfo := rest[:at]
		add(userinfo)
		if _, pass, ok := strings.Cut(userinfo, ":"); ok {
			add(pass)
		}
	}
	p, frag, _ := strings.Cut(raw, "#")
	_, query, _ := strings.Cut(p, "?")
	for _, list := range []string{query, frag} {
		if list == frag && !strings.Contains(frag, "=") {
			continue
		}
		for _, part := range strings.Split(list, "&") {
			if _, v, ok := strings.Cut(part, "="); ok {
				add(v)
			} else {
				add(part)
			}
		}
	}
	return out
}
