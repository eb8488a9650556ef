package secrets

import (
	"strings"
	"unicode"
)

// Byte classes of the lexical scan, looked up in one table: the scan asks
// several of them of every byte.
const (
	valueEnd      uint8 = 1 << iota // ends a NAME=VALUE value
	authorityStop                   // ends a URL authority in running text
	wordBreak                       // see isWordBreak
	opener                          // see isOpener
	queryEnd                        // see isQueryEnd
	slash                           // '/'
)

var classes = func() (t [256]uint8) {
	for c := 0; c <= ' '; c++ {
		t[c] = valueEnd | authorityStop | wordBreak | queryEnd
	}
	t[0x7f] = valueEnd | authorityStop | wordBreak | queryEnd
	set := func(bytes string, class uint8) {
		for i := 0; i < len(bytes); i++ {
			t[bytes[i]] |= class
		}
	}
	set("&#\"'`<>;,)]}|\\", valueEnd)
	set("/?#\"'`<>\\", authorityStop)
	set("\"`<>|", wordBreak)
	set("'([{", opener)
	set("\"`<>\\|", queryEnd)
	set("/", slash)
	return t
}()

// inValue and inAuthority: what a NAME=VALUE value and a URL authority in
// running text hold.
func inValue(c byte) bool     { return classes[c]&valueEnd == 0 }
func inAuthority(c byte) bool { return classes[c]&authorityStop == 0 }

// authorityEnd returns where the URL authority starting at p ends: at a
// '/', '?' or '#', at whitespace, or at the closing quote or bracket of
// the URL's opener (the byte before it). Other quotes stay inside: a
// source given alone may hold them in its password.
func authorityEnd(s string, p int, opener byte) int {
	closer := closerOf(opener)
	return runEnd(s, p, func(c byte) bool {
		return !(c <= ' ' || c == 0x7f || c == '/' || c == '?' || c == '#' || closer != 0 && c == closer)
	})
}

// isQueryEnd ends a URL's query or fragment: whitespace, a byte no URL
// holds unescaped, or the closer of its opener.
func isQueryEnd(c, closer byte) bool {
	return classes[c]&queryEnd != 0 || closer != 0 && c == closer
}

// openerAt is the byte before s[j] (0 at the start).
func openerAt(s string, j int) byte {
	if j == 0 {
		return 0
	}
	return s[j-1]
}

// closerOf is the byte that closes what opener opened: a quote or a
// bracket; 0 for anything else.
func closerOf(opener byte) byte {
	switch opener {
	case '"', '\'', '`':
		return opener
	case '<':
		return '>'
	case '(':
		return ')'
	case '[':
		return ']'
	case '{':
		return '}'
	}
	return 0
}

// isWordBreak ends the word a '?' or '#' must be in (with a '/') to start
// a URL's query or fragment: whitespace and what no URL holds unescaped.
func isWordBreak(c byte) bool { return classes[c]&wordBreak != 0 }

// isOpener may open a quoted or bracketed URL, and so starts a word where
// a word could start ("'https://…'", "(https://…)"); inside a URL it is
// data.
func isOpener(c byte) bool { return classes[c]&opener != 0 }

func isSpace(c byte) bool      { return c == ' ' }
func isLetter(c byte) bool     { return isUpper(c) || isLower(c) }
func isUpper(c byte) bool      { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool      { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool      { return isLetter(c) || isDigit(c) }
func isUpperDigit(c byte) bool { return isUpper(c) || isDigit(c) }
func isWordByte(c byte) bool   { return isAlnum(c) || c == '_' }
func isTokenByte(c byte) bool  { return isWordByte(c) || c == '-' }
func isKeyByte(c byte) bool    { return isTokenByte(c) || c == '.' }
func isSchemeByte(c byte) bool { return isAlnum(c) || c == '+' || c == '-' || c == '.' }
func isUserByte(c byte) bool   { return isKeyByte(c) || c == '~' || c == '+' }
func isBearerByte(c byte) bool { return isTokenByte(c) || strings.IndexByte("._~+/=", c) >= 0 }

func isAlnumRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

// runStart is where the run of bytes in accepts that ends at p starts;
// runEnd, where the one that starts at p ends.
func runStart(s string, p int, in func(byte) bool) int {
	for p > 0 && in(s[p-1]) {
		p--
	}
	return p
}

func runEnd(s string, p int, in func(byte) bool) int {
	for p < len(s) && in(s[p]) {
		p++
	}
	return p
}
