// Package jsondoc is the one document model of plugin and marketplace
// documents: an ordered JSON decoder (Parse), field tables that describe a
// document kind once (Table, Row, Shape), and the walker that turns a
// document into findings with JSON paths (Walk). Parsers and `validate`
// read the same tables, so what install refuses and what validate calls an
// error cannot drift apart.
package jsondoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Kind is a JSON value's type.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// Node is a decoded JSON value that keeps object key order, so findings
// come in document order and a document written back keeps the author's
// layout.
type Node struct {
	Kind   Kind
	Bool   bool
	Str    string  // a string's value, or a number's literal text
	Items  []Node  // Array
	Fields []Field // Object, in document order, each key once
}

// Field is one member of an object.
type Field struct {
	Key string
	Val Node
}

// Get returns an object member, or nil (also when n is nil or not an
// object).
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != Object {
		return nil
	}
	for i := range n.Fields {
		if n.Fields[i].Key == key {
			return &n.Fields[i].Val
		}
	}
	return nil
}

// GetStr is the value of member key when it is a string, else "" (a wrong
// type is the tables' to report).
func (n *Node) GetStr(key string) string {
	if v := n.Get(key); v != nil && v.Kind == String {
		return v.Str
	}
	return ""
}

// Keys lists an object's keys in document order.
func (n *Node) Keys() []string {
	if n == nil {
		return nil
	}
	out := make([]string, len(n.Fields))
	for i := range n.Fields {
		out[i] = n.Fields[i].Key
	}
	return out
}

// Put adds or replaces key in an object, keeping the order of the others.
func (n *Node) Put(key string, v Node) {
	if i := slices.IndexFunc(n.Fields, func(f Field) bool { return f.Key == key }); i >= 0 {
		n.Fields[i].Val = v
		return
	}
	n.Fields = append(n.Fields, Field{key, v})
}

// Remove deletes key from an object (nothing when absent).
func (n *Node) Remove(key string) {
	n.Fields = slices.DeleteFunc(n.Fields, func(f Field) bool { return f.Key == key })
}

// Text is a string node.
func Text(s string) Node { return Node{Kind: String, Str: s} }

// IsEmpty reports whether n declares nothing: absent, null, "", [] or {}.
func (n *Node) IsEmpty() bool {
	if n == nil {
		return true
	}
	switch n.Kind {
	case Null:
		return true
	case String:
		return n.Str == ""
	case Array:
		return len(n.Items) == 0
	case Object:
		return len(n.Fields) == 0
	}
	return false
}

// StringList reads a string or an array of strings; ok is false when it is
// something else. Absent and null read as none.
func (n *Node) StringList() ([]string, bool) {
	if n == nil || n.Kind == Null {
		return nil, true
	}
	items := n.ListOf()
	out := make([]string, 0, len(items))
	for i := range items {
		if items[i].Kind != String {
			return nil, false
		}
		out = append(out, items[i].Str)
	}
	return out, true
}

// StringMap reads an object of strings; ok is false when some value is not
// a string. Absent and null read as none.
func (n *Node) StringMap() (map[string]string, bool) {
	if n == nil || n.Kind == Null {
		return nil, true
	}
	if n.Kind != Object {
		return nil, false
	}
	out := make(map[string]string, len(n.Fields))
	for _, f := range n.Fields {
		if f.Val.Kind != String {
			return nil, false
		}
		out[f.Key] = f.Val.Str
	}
	return out, true
}

// ListOf is a value as a list: an array's items, or the value alone.
func (n *Node) ListOf() []Node {
	if n == nil {
		return nil
	}
	if n.Kind == Array {
		return n.Items
	}
	return []Node{*n}
}

// Describe names a value for messages: its type, or a short quote of a
// string.
func (n *Node) Describe() string {
	if n.Kind == String {
		return fmt.Sprintf("the string %q", Clip(n.Str, 60))
	}
	return [...]string{Null: "null", Bool: "a boolean", Number: "a number", Array: "an array", Object: "an object"}[n.Kind]
}

// Clip shortens an author's string to quote it in a message.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Marshal writes n as indented JSON (as json.MarshalIndent indents, two
// spaces), keys in their document order.
func (n *Node) Marshal() []byte {
	var b bytes.Buffer
	_ = json.Indent(&b, n.Compact(), "", "  ") // Compact is valid JSON
	b.WriteByte('\n')
	return b.Bytes()
}

// Compact writes n as compact JSON, keys in their document order.
func (n *Node) Compact() []byte {
	var b bytes.Buffer
	n.write(&b)
	return b.Bytes()
}

func (n *Node) write(w *bytes.Buffer) {
	switch n.Kind {
	case Null:
		w.WriteString("null")
	case Bool:
		w.WriteString(strconv.FormatBool(n.Bool))
	case Number:
		w.WriteString(n.Str)
	case String:
		writeString(w, n.Str)
	case Array:
		w.WriteByte('[')
		for i := range n.Items {
			if i > 0 {
				w.WriteByte(',')
			}
			n.Items[i].write(w)
		}
		w.WriteByte(']')
	case Object:
		w.WriteByte('{')
		for i := range n.Fields {
			if i > 0 {
				w.WriteByte(',')
			}
			writeString(w, n.Fields[i].Key)
			w.WriteByte(':')
			n.Fields[i].Val.write(w)
		}
		w.WriteByte('}')
	}
}

// writeString writes s as a JSON string literal, as encoding/json writes it
// without HTML escaping; a string with nothing to escape is written as is.
func writeString(w *bytes.Buffer, s string) {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == '"' || r == '\\' || r >= 0x7f }) {
		w.WriteByte('"')
		w.WriteString(s)
		w.WriteByte('"')
		return
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
