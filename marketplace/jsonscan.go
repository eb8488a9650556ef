package marketplace

import (
	"encoding/json"
	"slices"
)

// orderedKeys lists an object's keys in document order (duplicates once),
// so reports follow the file. Every caller has decoded raw already, so it
// is valid JSON: one pass over its bytes finds the keys, where a
// json.Decoder spent a token and an allocation per value (a fifth of a
// 300-entry marketplace's parse). On bytes that are not an object, or stop
// being one, it returns the keys read so far.
func orderedKeys(raw json.RawMessage) []string {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil
	}
	i++
	var keys []string
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] != '"' {
			return keys // '}' or not an object after all
		}
		end := stringEnd(raw, i)
		if end < 0 {
			return keys
		}
		k, ok := plainString(raw[i:end])
		if !ok && json.Unmarshal(raw[i:end], &k) != nil {
			return keys
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
		if i = skipSpace(raw, end); i >= len(raw) || raw[i] != ':' {
			return keys
		}
		if i = skipValue(raw, i+1); i < 0 {
			return keys
		}
		if i = skipSpace(raw, i); i >= len(raw) || raw[i] != ',' {
			return keys
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string that opens at b[i]
// (a '"'), or -1 when it never closes.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++ // the escaped byte cannot close the string
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index just past the value that starts at or after
// b[i], or -1 when it does not end.
func skipValue(b []byte, i int) int {
	i = skipSpace(b, i)
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				if i = stringEnd(b, i); i < 0 {
					return -1
				}
				i-- // the loop's i++ lands just past the string
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default: // a number, true, false or null runs to the next delimiter
		for ; i < len(b); i++ {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}

// decodeString returns the string a JSON string literal stands for; the
// caller has checked that raw is one. Most strings in a marketplace are
// plain ASCII and are read without a decoder.
func decodeString(raw []byte) string {
	if s, ok := plainString(raw); ok {
		return s
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// plainString reads a string literal with no escapes and only printable
// ASCII inside, the one case where the bytes between the quotes are the
// value; any other literal is left to encoding/json (escapes, invalid
// UTF-8 replaced by U+FFFD).
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(body), true
}
