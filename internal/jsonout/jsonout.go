// Package jsonout writes the JSON the CLI and the daemon answer with.
package jsonout

import (
	"bufio"
	"encoding/json"
	"io"
)

// Write writes v as indented JSON and a newline, HTML characters
// unescaped, as the CLI and the daemon answer. A value that encodes itself
// (a Response, half a megabyte for a bulk plan) is indented as it streams
// out: encoding/json's Encoder would check and compact its bytes again,
// then indent them into one more buffer half again their size, which cost
// a warm bulk re-plan more than encoding did.
func Write(w io.Writer, v any) error {
	if m, ok := v.(Indented); ok {
		body, err := m.MarshalIndentedJSON()
		if err != nil {
			return err
		}
		_, err = w.Write(append(body, '\n'))
		return err
	}
	if m, ok := v.(json.Marshaler); ok {
		body, err := m.MarshalJSON()
		if err != nil {
			return err
		}
		// Trusted to be valid, as json.Marshal made it: checking half a
		// megabyte again costs what indenting it does.
		bw := bufio.NewWriterSize(w, 64<<10)
		writeIndented(bw, body)
		bw.WriteByte('\n')
		return bw.Flush()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Indented is a value that lays itself out as Write does (json.Indent with
// two spaces), faster than Write would (a bulk plan's Response).
type Indented interface {
	MarshalIndentedJSON() ([]byte, error)
}

// writeIndented writes valid, compact-or-not JSON src laid out as
// json.Indent(dst, src, "", "  ") lays it out: one value or member per
// line, two spaces per level, "[]" and "{}" kept whole, whitespace outside
// strings dropped. Write errors surface at Flush.
func writeIndented(w *bufio.Writer, src []byte) {
	depth := 0
	newline := func() {
		w.WriteByte('\n')
		for range depth {
			w.WriteString("  ")
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
			w.Write(src[i : j+1])
			i = j
		case '{', '[':
			w.WriteByte(c)
			needIndent = true
		case ',':
			w.WriteByte(c)
			newline()
		case ':':
			w.WriteString(": ")
		case '}', ']':
			if needIndent {
				needIndent = false // empty: "{}" or "[]"
			} else {
				depth--
				newline()
			}
			w.WriteByte(c)
		default:
			w.WriteByte(c)
		}
	}
}
