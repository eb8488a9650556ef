package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit: a document it refuses for
// depth is refused here too.
const maxDepth = 10000

// bom is the UTF-8 byte-order mark.
var bom = []byte("\xef\xbb\xbf")

// TrimBOM drops a leading UTF-8 byte-order mark and says whether there was
// one. JSON forbids it and Claude Code's parser refuses it; whether that is
// an error is the caller's rule.
func TrimBOM(data []byte) ([]byte, bool) { return bytes.CutPrefix(data, bom) }

// SyntaxError is a document that is not JSON, with where it stops being
// JSON.
type SyntaxError struct {
	Line, Col int
	Msg       string // encoding/json's description
	EarlyEnd  bool   // the document ends before its value does
}

func (e *SyntaxError) Error() string {
	if e.EarlyEnd {
		return fmt.Sprintf("not valid JSON: %s (at line %d, column %d: the document ends too early)", e.Msg, e.Line, e.Col)
	}
	return fmt.Sprintf("not valid JSON at line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// Dup is a key an object repeats: the same key again (its first place and
// last value stand, as encoding/json and JavaScript's JSON.parse read it),
// or a key that differs from an earlier one (Other) only in case.
type Dup struct {
	Object string // the JSON path of the object
	Key    string
	Other  string // Folded: the earlier key
	Folded bool
}

// Finding is the duplicate as a warning, at the key's JSON path.
func (d Dup) Finding() Finding {
	if d.Folded {
		return Finding{Path: Join(d.Object, d.Key), Message: fmt.Sprintf("%q differs from %q only in case: they are two different fields", Clip(d.Key, 60), Clip(d.Other, 60))}
	}
	return Finding{Path: Join(d.Object, d.Key), Message: fmt.Sprintf("%q is given twice in this object; the last value is read, as Claude Code reads it", Clip(d.Key, 60))}
}

// Parse decodes data in one pass, keeping object keys in document order,
// and finds the keys objects repeat (dups). What Parse accepts is exactly
// what encoding/json accepts; a refusal is a *SyntaxError with the line
// and column.
func Parse(data []byte) (*Node, []Dup, error) {
	d := decoder{data: data}
	root := &Node{}
	d.space()
	ok := d.value(root)
	if ok {
		d.space()
		ok = d.pos == len(d.data)
	}
	if !ok {
		return nil, nil, syntaxError(data)
	}
	return root, d.dups, nil
}

// syntaxError describes why data is not JSON in encoding/json's words, at
// the line and column its offset names. It is asked only once the decoder
// has refused the document, so the fast path never pays for it.
func syntaxError(data []byte) error {
	var probe struct{}
	err := json.Unmarshal(data, &probe)
	var syn *json.SyntaxError
	if !errors.As(err, &syn) {
		// Not reached: Parse and encoding/json accept the same documents
		// (FuzzParse checks it).
		return &SyntaxError{Line: 1, Col: 1, Msg: "not a JSON document"}
	}
	line, col := position(data, syn.Offset)
	return &SyntaxError{Line: line, Col: col, Msg: syn.Error(), EarlyEnd: strings.Contains(syn.Error(), "unexpected end")}
}

// position converts encoding/json's offset (just past the offending byte)
// into a 1-based line and column.
func position(data []byte, off int64) (int, int) {
	off = min(off, int64(len(data)))
	if off > 0 {
		off--
	}
	before := data[:off]
	return 1 + bytes.Count(before, []byte("\n")), len(before) - bytes.LastIndexByte(before, '\n')
}

type decoder struct {
	data  []byte
	pos   int
	depth int
	// path is where the decoder is, kept so a duplicate key can be named
	// by its JSON path; it becomes a string only then.
	path []step
	dups []Dup
}

type step struct {
	key   string
	index int
	isKey bool
}

func (d *decoder) here() string {
	p := ""
	for _, s := range d.path {
		if s.isKey {
			p = Join(p, s.key)
		} else {
			p = Index(p, s.index)
		}
	}
	return p
}

func (d *decoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) value(n *Node) bool {
	if d.pos >= len(d.data) {
		return false
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(n)
	case c == '[':
		return d.array(n)
	case c == '"':
		s, ok := d.string()
		n.Kind, n.Str = String, s
		return ok
	case c == 't':
		n.Kind, n.Bool = Bool, true
		return d.literal("true")
	case c == 'f':
		n.Kind = Bool
		return d.literal("false")
	case c == 'n':
		n.Kind = Null
		return d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return d.number(n)
	}
	return false
}

func (d *decoder) literal(word string) bool {
	if !bytes.HasPrefix(d.data[d.pos:], []byte(word)) {
		return false
	}
	d.pos += len(word)
	return true
}

// number reads a number literal, kept as written: the run of characters
// a number may hold, which encoding/json judges. (In JSON a number is
// followed by none of them, so a run that is not one number is not JSON.)
func (d *decoder) number(n *Node) bool {
	end := d.pos
	for end < len(d.data) && strings.IndexByte("+-.eE0123456789", d.data[end]) >= 0 {
		end++
	}
	if !json.Valid(d.data[d.pos:end]) {
		return false
	}
	n.Kind, n.Str = Number, string(d.data[d.pos:end])
	d.pos = end
	return true
}

// string reads the string literal at d.pos. Most strings hold no escape
// and valid UTF-8: their bytes are their value. Any other literal is
// decoded by encoding/json, so escapes, surrogates and invalid UTF-8 read
// exactly as it reads them (and a bad escape is refused as it refuses it).
func (d *decoder) string() (string, bool) {
	b, start := d.data, d.pos
	plain, ascii := true, true
	i := start + 1
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			d.pos = i + 1
			body := b[start+1 : i]
			if plain && (ascii || utf8.Valid(body)) {
				return string(body), true
			}
			var s string
			if json.Unmarshal(b[start:i+1], &s) != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			plain = false // encoding/json judges the escape
			i += 2
		case c < 0x20:
			return "", false
		default:
			if c >= 0x80 {
				ascii = false
			}
			i++
		}
	}
	return "", false
}

// members reads the container opened at d.pos: its members, each read
// by member, between commas, up to its closing bracket; anything else is
// not JSON.
func (d *decoder) members(closing byte, member func() bool) bool {
	if d.depth++; d.depth > maxDepth {
		return false
	}
	d.pos++
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == closing {
		d.pos++
		d.depth--
		return true
	}
	for member() {
		d.space()
		switch {
		case d.pos >= len(d.data):
			return false
		case d.data[d.pos] == ',':
			d.pos++
			d.space()
		case d.data[d.pos] == closing:
			d.pos++
			d.depth--
			return true
		default:
			return false
		}
	}
	return false
}

func (d *decoder) array(n *Node) bool {
	n.Kind = Array
	n.Items = []Node{}
	return d.members(']', func() bool {
		d.path = append(d.path, step{index: len(n.Items)})
		n.Items = append(n.Items, Node{})
		ok := d.value(&n.Items[len(n.Items)-1])
		d.path = d.path[:len(d.path)-1]
		return ok
	})
}

func (d *decoder) object(n *Node) bool {
	n.Kind = Object
	var seen keyIndex
	return d.members('}', func() bool {
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return false
		}
		key, ok := d.string()
		if !ok {
			return false
		}
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return false
		}
		d.pos++
		d.space()
		d.path = append(d.path, step{key: key, isKey: true})
		n.Fields = append(n.Fields, Field{Key: key})
		last := len(n.Fields) - 1
		ok = d.value(&n.Fields[last].Val)
		d.path = d.path[:len(d.path)-1]
		if !ok {
			return false
		}
		if prev, folded := seen.find(n.Fields[:last], key); prev >= 0 && !folded {
			// A repeat keeps the first place and the last value.
			n.Fields[prev].Val = n.Fields[last].Val
			n.Fields = n.Fields[:last]
			d.dups = append(d.dups, Dup{Object: d.here(), Key: key})
		} else {
			if prev >= 0 {
				d.dups = append(d.dups, Dup{Object: d.here(), Key: key, Other: n.Fields[prev].Key, Folded: true})
			}
			seen.add(key, last)
		}
		return true
	})
}

// keyIndex finds an object's earlier keys: by scanning while the object is
// small (most are), through maps once it is not. Both fold case as
// strings.EqualFold does (and encoding/json matches keys to fields): the
// daemon refuses a request body on it.
type keyIndex struct {
	exact  map[string]int
	folded map[string]int
}

const scanKeys = 16

// find returns the index of key among fields, or of a key that differs
// only in case (folded), or -1.
func (x *keyIndex) find(fields []Field, key string) (int, bool) {
	if x.exact == nil {
		if len(fields) < scanKeys {
			at := -1
			for i := range fields {
				switch k := fields[i].Key; {
				case k == key:
					return i, false
				case at < 0 && strings.EqualFold(k, key):
					at = i
				}
			}
			return at, at >= 0
		}
		x.exact, x.folded = make(map[string]int, 2*len(fields)), make(map[string]int, 2*len(fields))
		for i := range fields {
			x.add(fields[i].Key, i)
		}
	}
	if i, ok := x.exact[key]; ok {
		return i, false
	}
	if i, ok := x.folded[foldKey(key)]; ok {
		return i, true
	}
	return -1, false
}

func (x *keyIndex) add(key string, i int) {
	if x.exact == nil {
		return
	}
	x.exact[key] = i
	k := foldKey(key)
	if _, ok := x.folded[k]; !ok {
		x.folded[k] = i
	}
}

// foldKey maps s to one representative of its Unicode simple case-folding
// class, so foldKey(a) == foldKey(b) exactly when strings.EqualFold(a, b).
func foldKey(s string) string { return strings.Map(FoldRune, s) }

// FoldRune is the smallest member of r's simple case-folding orbit: two
// runes fold to the same one exactly when unicode.SimpleFold relates them
// (plain ToLower misses pairs such as "ſ"/"s" or "K" KELVIN SIGN/"k").
func FoldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}
