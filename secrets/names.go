package secrets

import (
	"strings"

	"reasonix.io/plugind/internal/lazyregexp"
)

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

// IsName reports whether a key, variable, flag or header name says it
// holds a credential. The last word decides (ignoring neutral suffixes
// such as _id), so TOKEN_FILE, credential.helper, token_type and
// public_key are not credentials while access_token and SESSION_ID are.
func IsName(name string) bool {
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
		// A hump starts at an upper case letter after a lower case one or a
		// digit ("apiKey"), or before a lower case one ("APIKey").
		if isUpper(c) && (isLower(prev) || isDigit(prev) || isUpper(prev) && i+1 < len(name) && isLower(name[i+1])) {
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

// IsReference reports whether v names its secret instead of holding it:
// "${VAR}", "$VAR", "%VAR%", "${env:VAR}", "$env:VAR", or such a reference
// behind plain words like "Bearer ".
func IsReference(v string) bool {
	if !strings.ContainsAny(v, "$%") || !envRef.MatchString(v) {
		return false
	}
	return refFiller.MatchString(envRef.ReplaceAllString(v, ""))
}

// isLiteral reports whether a value bound to a credential name is a
// literal worth hiding: not empty, not already masked, not a reference or
// an expansion ($(…), {placeholder}), not a boolean.
func isLiteral(v string) bool {
	// A reference may sit in quotes of its own: an exported shell command
	// writes 'token='"${VAR}"'' so that the shell expands it.
	if u := strings.Trim(v, `"'`); u != v && (u == "" || u == Masked || IsReference(u)) {
		return false
	}
	if v == "" || v == Masked || IsReference(v) {
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
