// Package jsonout writes the JSON the CLI and the daemon answer with.
package jsonout

import (
	"encoding/json"
	"io"
)

// Write writes v as indented JSON and a newline, HTML characters
// unescaped, as the CLI and the daemon answer. A value that lays itself
// out (Indented: a Response, two megabytes for a bulk plan) writes itself:
// encoding/json's Encoder would check and compact the bytes of its
// MarshalJSON again, then indent them into one more buffer half again
// their size, which cost a warm bulk re-plan more than encoding did.
func Write(w io.Writer, v any) error {
	if m, ok := v.(Indented); ok {
		err := m.WriteIndentedJSON(w)
		if err == nil {
			_, err = io.WriteString(w, "\n")
		}
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Indented is a value that writes itself laid out as Write lays JSON out
// (json.Indent with two spaces), faster than Write would (a bulk plan's
// Response).
type Indented interface {
	WriteIndentedJSON(w io.Writer) error
}

// Indent appends valid, compact-or-not JSON src to dst laid out as
// json.Indent(dst, src, prefix, "  ") lays it out, prefix being depth
// times two spaces: one value or member per line, "[]" and "{}" kept
// whole, whitespace outside strings dropped. It trusts src to be valid,
// as json.Marshal made it: json.Indent checks every byte again, which
// cost as much as encoding (issue 24).
func Indent(dst, src []byte, depth int) []byte {
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, "  "...)
		}
	}
	needIndent := false // an opening bracket was written; its first element is not
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if needIndent && c != ']' && c != '}' {
			needIndent = false
			depth++
			newline()
		}
		switch c {
		case '"':
			j := i + 1
			for ; j < len(src); j++ {
				if src[j] == '\\' {
					j++
				} else if src[j] == '"' {
					break
				}
			}
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			needIndent = true
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ": "...)
		case '}', ']':
			if needIndent {
				needIndent = false // empty: "{}" or "[]"
			} else {
				depth--
				newline()
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
