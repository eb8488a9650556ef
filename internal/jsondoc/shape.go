package jsondoc

import (
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Role says what a field is to Reasonix, so parsers act on the table
// rather than on lists of their own.
type Role uint8

const (
	// Meta describes the plugin (name, version, author…).
	Meta Role = iota + 1
	// Component contributes something Reasonix maps (skills, hooks…).
	Component
	// Unsupported contributes something Reasonix does not map: install
	// skips it with a warning and the package is partial.
	Unsupported
	// EntryOnly belongs to a marketplace entry, never to plugin.json
	// (source, strict, category…).
	EntryOnly
)

// Trait refines a component row.
type Trait uint8

const (
	// Declares: the field names component files of its own, which Claude
	// Code refuses from a strict: false entry beside a plugin.json
	// ("conflicting manifests").
	Declares Trait = 1 << iota
	// Replaces: a declaration replaces the conventional folder instead of
	// adding to it (commands/, agents/).
	Replaces
	// Located: the paths it declares must exist in the plugin folder.
	Located
	// Directories: …and be folders.
	Directories
)

// Row is one field of a document kind: its key, its shape, what it is to
// Reasonix, and whether it must be there (Required is the message for a
// missing one).
type Row struct {
	Key      string
	Shape    *Shape
	Role     Role
	Traits   Trait
	Required string
}

// Table is one object kind: its rows, and what happens to keys it does not
// list (Unknown: nil ignores them silently).
type Table struct {
	Name  string
	Rows  []Row
	index map[string]int
	// Unknown reports a key the table does not list.
	Unknown func(w *Walk, at, key string)
	// Check is a rule over the whole object, run after its fields.
	Check func(w *Walk, at string, n *Node)
	// Advice is authoring advice (a missing description…): validate gives
	// it, on an object with no error; install does not.
	Advice func(w *Walk, at string, n *Node)
}

// NewTable indexes rows.
func NewTable(name string, rows ...Row) *Table {
	t := &Table{Name: name, Rows: rows, index: make(map[string]int, len(rows))}
	for i, r := range rows {
		if _, dup := t.index[r.Key]; dup {
			panic("jsondoc: " + name + " lists " + r.Key + " twice")
		}
		t.index[r.Key] = i
	}
	return t
}

// Row returns the row of key.
func (t *Table) Row(key string) (Row, bool) {
	i, ok := t.index[key]
	if !ok {
		return Row{}, false
	}
	return t.Rows[i], true
}

// Keys lists the rows' keys, in table order.
func (t *Table) Keys() []string {
	out := make([]string, len(t.Rows))
	for i, r := range t.Rows {
		out[i] = r.Key
	}
	return out
}

// With is a copy of t named name whose rows are t's with rows added; a row
// of a key t has replaces t's. Its other settings are t's.
func (t *Table) With(name string, rows ...Row) *Table {
	all := append([]Row{}, t.Rows...)
	for _, r := range rows {
		if i, ok := t.index[r.Key]; ok {
			all[i] = r
			continue
		}
		all = append(all, r)
	}
	out := NewTable(name, all...)
	out.Unknown, out.Check, out.Advice = t.Unknown, t.Check, t.Advice
	return out
}

// Shape is what a value must be. Build one with the constructors below.
type Shape struct {
	kind  Kind // what it accepts, unless any, alts or union
	any   bool
	what  string
	hints map[Kind]string // the message for a value of this kind instead of a plain mismatch

	nonEmpty bool
	enum     []string
	str      func(s string) string // a string's problem, "" when fine

	integer, positive, nonNegative bool

	elem     *Shape
	maxItems int
	keys     func(key string) string // a map key's problem, "" when fine

	table *Table
	union *Union
	alts  []*Shape

	lenient bool   // a mismatch is a warning: the value is ignored
	kept    string // a mismatch is Claude's error that its installer, and install, ignore: how
	rule    func(w *Walk, at string, n *Node)
}

// Union is an object whose tag field selects its table (hook "type", MCP
// server "type", marketplace source "source").
type Union struct {
	Tag string
	// Default is the case of an object without the tag; "" makes the tag
	// required, with Missing as the message.
	Default string
	Missing string
	Cases   map[string]*Table
	// Unknown reports a tag no case lists (nil: an object of no case is
	// not looked into).
	Unknown func(w *Walk, at, tag string)
}

func Any() *Shape       { return &Shape{any: true} }
func Nil() *Shape       { return &Shape{kind: Null, what: "null"} }
func Str() *Shape       { return &Shape{kind: String, what: "a string"} }
func Boolean() *Shape   { return &Shape{kind: Bool, what: "true or false"} }
func Num() *Shape       { return &Shape{kind: Number, what: "a number"} }
func AnyObject() *Shape { return &Shape{kind: Object, what: "an object", table: NewTable("object")} }

// Obj is an object of table t.
func Obj(t *Table) *Shape { return &Shape{kind: Object, what: "an object", table: t} }

// List is an array of elem.
func List(elem *Shape) *Shape { return &Shape{kind: Array, what: "an array", elem: elem} }

// Map is an object with free keys and values of elem.
func Map(elem *Shape) *Shape { return &Shape{kind: Object, what: "an object", elem: elem} }

// StrList is an array of strings; StrMap an object of strings.
func StrList() *Shape { return List(Str()).Describe("an array of strings") }
func StrMap() *Shape  { return Map(Str()).Describe("an object of strings") }

// Tagged is an object whose tag selects its table.
func Tagged(u *Union) *Shape { return &Shape{kind: Object, what: "an object", union: u} }

// OneOf accepts a value of any alternative's kind, checked by the first
// alternative of that kind.
func OneOf(what string, alts ...*Shape) *Shape { return &Shape{what: what, alts: alts} }

// Describe sets how a mismatch names what was expected.
func (s *Shape) Describe(what string) *Shape { s.what = what; return s }

// Hint replaces the mismatch message for a value of kind k.
func (s *Shape) Hint(k Kind, msg string) *Shape {
	if s.hints == nil {
		s.hints = map[Kind]string{}
	}
	s.hints[k] = msg
	return s
}

// NonEmpty refuses "".
func (s *Shape) NonEmpty() *Shape { s.nonEmpty = true; return s }

// Enum limits a string to values.
func (s *Shape) Enum(values ...string) *Shape { s.enum = values; return s }

// Check adds a string rule: check returns the problem, "" when fine.
func (s *Shape) Check(check func(string) string) *Shape { s.str = check; return s }

// Int, Positive and NonNegative narrow a number.
func (s *Shape) Int() *Shape         { s.integer = true; return s }
func (s *Shape) Positive() *Shape    { s.positive = true; return s }
func (s *Shape) NonNegative() *Shape { s.nonNegative = true; return s }

// MaxItems bounds an array.
func (s *Shape) MaxItems(n int) *Shape { s.maxItems = n; return s }

// KeyCheck adds a rule on a map's keys.
func (s *Shape) KeyCheck(check func(string) string) *Shape { s.keys = check; return s }

// Lenient makes a mismatch a warning: the value is ignored, not refused.
func (s *Shape) Lenient() *Shape { s.lenient = true; return s }

// Ignored makes a mismatch an error Claude Code's validator reports but
// its installer (and so install) ignores, saying how (Finding.Kept).
func (s *Shape) Ignored(how string) *Shape { s.kept = how; return s }

// Rule adds a check run on a value the shape accepted.
func (s *Shape) Rule(rule func(w *Walk, at string, n *Node)) *Shape { s.rule = rule; return s }

// Accepts reports whether a value of kind k can match s (its alternatives
// included); it does not look inside.
func (s *Shape) Accepts(k Kind) bool {
	return s.any || slices.ContainsFunc(s.alts, func(a *Shape) bool { return a.Accepts(k) }) ||
		len(s.alts) == 0 && s.kind == k
}

// Closest is the name in known nearest to k, if one is near enough to be
// a likely typo.
func Closest(k string, known []string) string {
	best, bestD := "", 3
	if len(k) <= 3 {
		bestD = 2
	}
	for _, c := range known {
		if strings.EqualFold(c, k) {
			return c
		}
		if d := levenshtein.ComputeDistance(strings.ToLower(k), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Strict is an Unknown handler that refuses keys the table does not list,
// naming those it allows.
func Strict(w *Walk, at, key string) {
	w.Errorf(Join(at, key), "unknown field %q: this object allows only %s", key, strings.Join(w.Table().Keys(), ", "))
}

// Warn is an Unknown handler that warns about a key the table does not
// list, suggesting the one it likely meant.
func Warn(w *Walk, at, key string) {
	if s := Closest(key, w.Table().Keys()); s != "" {
		w.Warnf(Join(at, key), "unknown field %q (did you mean %q?); Claude Code and Reasonix ignore it", key, s)
		return
	}
	w.Warnf(Join(at, key), "unknown field %q; Claude Code and Reasonix ignore it", key)
}
