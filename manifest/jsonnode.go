package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// node is a decoded JSON value that keeps object key order, so unknown
// fields are reported in document order and exported documents keep the
// author's layout.
type node struct {
	kind  nodeKind
	keys  []string // object
	vals  []*node  // object, parallel to keys
	items []*node  // array
	str   string   // string, or a number's literal text
	b     bool
}

type nodeKind int

const (
	kindNull nodeKind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k nodeKind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// get returns an object member, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// isEmpty reports whether n declares nothing: absent, null, "", [] or {}.
// remove deletes key from an object (no-op when absent).
func (n *node) remove(key string) {
	i := indexOf(n.keys, key)
	if i < 0 {
		return
	}
	n.keys = append(n.keys[:i], n.keys[i+1:]...)
	n.vals = append(n.vals[:i], n.vals[i+1:]...)
}

// put adds or replaces key in an object, keeping the order of the others.
func (n *node) put(key string, v *node) {
	if i := indexOf(n.keys, key); i >= 0 {
		n.vals[i] = v
		return
	}
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

func (n *node) isEmpty() bool {
	if n == nil {
		return true
	}
	switch n.kind {
	case kindNull:
		return true
	case kindString:
		return n.str == ""
	case kindArray:
		return len(n.items) == 0
	case kindObject:
		return len(n.keys) == 0
	}
	return false
}

// stringMap returns an object of strings as a map; ok is false when some
// value is not a string.
func (n *node) stringMap() (map[string]string, bool) {
	if n == nil || n.kind == kindNull {
		return nil, true
	}
	if n.kind != kindObject {
		return nil, false
	}
	out := make(map[string]string, len(n.keys))
	for i, k := range n.keys {
		if n.vals[i].kind != kindString {
			return nil, false
		}
		out[k] = n.vals[i].str
	}
	return out, true
}

// stringList accepts a string or an array of strings.
func (n *node) stringList() ([]string, bool) {
	if n == nil || n.kind == kindNull {
		return nil, true
	}
	switch n.kind {
	case kindString:
		return []string{n.str}, true
	case kindArray:
		out := make([]string, 0, len(n.items))
		for _, it := range n.items {
			if it.kind != kindString {
				return nil, false
			}
			out = append(out, it.str)
		}
		return out, true
	}
	return nil, false
}

// parseJSON decodes data (a leading UTF-8 BOM is tolerated). Malformed input
// is reported with the file name, line and column.
func parseJSON(name string, data []byte) (*node, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	// A first pass with the standard decoder gives exact error offsets and
	// rejects trailing garbage; the second keeps key order.
	var probe any
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, jsonError(name, data, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := decodeNode(dec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return n, nil
}

func jsonError(name string, data []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := position(data, syn.Offset)
		if strings.Contains(syn.Error(), "unexpected end") {
			return fmt.Errorf("%s is not valid JSON: %v (at line %d, column %d: the document ends too early)", name, syn, line, col)
		}
		return fmt.Errorf("%s is not valid JSON at line %d, column %d: %v", name, line, col, syn)
	}
	return fmt.Errorf("%s is not valid JSON: %w", name, err)
}

// position converts a byte offset into a 1-based line and column. The
// decoder's offset points just past the offending byte.
func position(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off > 0 {
		off--
	}
	line, col := 1, 1
	for _, c := range data[:off] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

func decodeNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			n := &node{kind: kindObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is %v", kt)
				}
				child, err := decodeNode(dec)
				if err != nil {
					return nil, err
				}
				// Duplicate keys: the last one wins, as encoding/json does.
				if i := indexOf(n.keys, k); i >= 0 {
					n.vals[i] = child
					continue
				}
				n.keys = append(n.keys, k)
				n.vals = append(n.vals, child)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		case '[':
			n := &node{kind: kindArray, items: []*node{}}
			for dec.More() {
				child, err := decodeNode(dec)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, child)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		}
		return nil, fmt.Errorf("unexpected %v", v)
	case string:
		return &node{kind: kindString, str: v}, nil
	case json.Number:
		return &node{kind: kindNumber, str: v.String()}, nil
	case bool:
		return &node{kind: kindBool, b: v}, nil
	case nil:
		return &node{kind: kindNull}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

func indexOf(keys []string, k string) int {
	for i, x := range keys {
		if x == k {
			return i
		}
	}
	return -1
}

// marshal writes n as indented JSON, keys in their original order.
func (n *node) marshal() []byte {
	var b bytes.Buffer
	n.write(&b, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func (n *node) write(w *bytes.Buffer, depth int) {
	indent := func(d int) {
		w.WriteByte('\n')
		w.WriteString(strings.Repeat("  ", d))
	}
	switch n.kind {
	case kindNull:
		w.WriteString("null")
	case kindBool:
		if n.b {
			w.WriteString("true")
		} else {
			w.WriteString("false")
		}
	case kindNumber:
		w.WriteString(n.str)
	case kindString:
		writeString(w, n.str)
	case kindArray:
		if len(n.items) == 0 {
			w.WriteString("[]")
			return
		}
		w.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				w.WriteByte(',')
			}
			indent(depth + 1)
			it.write(w, depth+1)
		}
		indent(depth)
		w.WriteByte(']')
	case kindObject:
		if len(n.keys) == 0 {
			w.WriteString("{}")
			return
		}
		w.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				w.WriteByte(',')
			}
			indent(depth + 1)
			writeString(w, k)
			w.WriteString(": ")
			n.vals[i].write(w, depth+1)
		}
		indent(depth)
		w.WriteByte('}')
	}
}

func writeString(w io.Writer, s string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	_, _ = w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
