package jsondoc

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Mode is what a walk is for. The findings are the same in both modes;
// validate also gives authoring advice.
type Mode uint8

const (
	// Validate reports Claude Code's verdict, and advice.
	Validate Mode = iota
	// Install reports what install refuses (errors) and warns about.
	Install
)

// Walk turns documents into findings, recording them in its Report
// (whose Errorf, Warnf, Keep and Refuse rules call: validate
// reports a Keep as an error and install as a warning; a Refuse is a
// warning validate gives and install refuses).
type Walk struct {
	*Report
	Mode Mode
	// Ctx is what a document kind's rules need beyond the document (the
	// plugin folder its paths name…); each kind says what it puts here.
	Ctx any
	// NullOK reads null anywhere as absent (Reasonix's own manifest);
	// otherwise null is a value of the wrong type, as Claude Code's schema
	// has it.
	NullOK bool
	// Dups are the keys the document repeats (Parse). A key given twice is
	// a warning wherever it is; one that differs from another only in case
	// is one in an object of fixed fields (a typo of a field), not in a
	// map, where ".c" and ".C" are two extensions.
	Dups []Dup

	tables []*Table
}

// Table is the table of the object being walked.
func (w *Walk) Table() *Table { return w.tables[len(w.tables)-1] }

// Document walks a whole document, which must be an object of t.
func (w *Walk) Document(t *Table, n *Node) {
	for _, d := range w.Dups {
		if !d.Folded {
			w.Warnings = append(w.Warnings, d.Finding())
		}
	}
	if n.Kind != Object {
		w.Errorf("", "%s must be a JSON object, found %s", t.Name, n.Describe())
		return
	}
	w.Object(t, n, "")
}

// Value checks n at path at against s.
func (w *Walk) Value(s *Shape, n *Node, at string) {
	switch {
	case w.NullOK && n.Kind == Null:
		return
	case s.any:
	case len(s.alts) > 0:
		i := slices.IndexFunc(s.alts, func(a *Shape) bool { return a.Accepts(n.Kind) })
		if i < 0 {
			w.mismatch(s, n, at)
			return
		}
		w.Value(s.alts[i], n, at)
	case n.Kind != s.kind:
		w.mismatch(s, n, at)
		return
	default:
		w.inside(s, n, at)
	}
	// A rule runs on a value of the right kind even when something inside
	// it is wrong: it judges the whole (names unique across a list…) and
	// reads what it needs defensively.
	if s.rule != nil {
		s.rule(w, at, n)
	}
}

func (w *Walk) mismatch(s *Shape, n *Node, at string) {
	msg, hinted := s.hints[n.Kind]
	if !hinted {
		msg = fmt.Sprintf("must be %s, found %s", s.what, n.Describe())
	}
	switch {
	case s.lenient:
		w.Warnf(at, "%s; ignored", msg)
	case s.kept != "":
		w.Keep(at, s.kept, "%s", msg)
	default:
		w.Errorf(at, "%s", msg)
	}
}

// inside checks a value of the shape's kind.
func (w *Walk) inside(s *Shape, n *Node, at string) {
	switch s.kind {
	case String:
		switch {
		case s.nonEmpty && n.Str == "":
			w.Errorf(at, "must not be empty")
		case len(s.enum) > 0 && !slices.Contains(s.enum, n.Str):
			w.Errorf(at, "must be %s, found %q", oneOf(s.enum), Clip(n.Str, 60))
		case s.str != nil:
			if problem := s.str(n.Str); problem != "" {
				w.Errorf(at, "%s", problem)
			}
		}
	case Number:
		w.number(s, n, at)
	case Array:
		if s.maxItems > 0 && len(n.Items) > s.maxItems {
			w.Errorf(at, "at most %d entries", s.maxItems)
		}
		for i := range n.Items {
			w.Value(s.elem, &n.Items[i], Index(at, i))
		}
	case Object:
		switch {
		case s.table != nil:
			w.Object(s.table, n, at)
		case s.union != nil:
			w.union(s.union, n, at)
		default:
			for i := range n.Fields {
				f := &n.Fields[i]
				p := Join(at, f.Key)
				if s.keys != nil {
					if problem := s.keys(f.Key); problem != "" {
						w.Errorf(p, "%s", problem)
					}
				}
				w.Value(s.elem, &f.Val, p)
			}
		}
	}
}

func (w *Walk) number(s *Shape, n *Node, at string) {
	f, err := strconv.ParseFloat(n.Str, 64)
	if err != nil {
		w.Errorf(at, "is not a usable number: %s", n.Str)
		return
	}
	switch {
	case s.integer && f != float64(int64(f)):
		w.Errorf(at, "must be a whole number, found %s", n.Str)
	case s.positive && f <= 0:
		w.Errorf(at, "must be greater than 0, found %s", n.Str)
	case s.nonNegative && f < 0:
		w.Errorf(at, "must not be negative, found %s", n.Str)
	}
}

// Object checks n, an object, against t.
func (w *Walk) Object(t *Table, n *Node, at string) {
	before := len(w.Errors)
	w.tables = append(w.tables, t)
	defer func() { w.tables = w.tables[:len(w.tables)-1] }()
	for _, d := range w.Dups {
		if d.Folded && d.Object == at {
			w.Warnings = append(w.Warnings, d.Finding())
		}
	}
	for _, r := range t.Rows {
		if r.Required == "" {
			continue
		}
		if v := n.Get(r.Key); v == nil || (w.NullOK && v.Kind == Null) {
			w.Errorf(Join(at, r.Key), "%s", r.Required)
		}
	}
	for i := range n.Fields {
		f := &n.Fields[i]
		r, ok := t.Row(f.Key)
		switch {
		case !ok:
			if t.Unknown != nil {
				t.Unknown(w, at, f.Key)
			}
		case r.Shape == nil:
		default:
			w.Value(r.Shape, &f.Val, Join(at, f.Key))
		}
	}
	if t.Check != nil {
		t.Check(w, at, n)
	}
	if w.Mode == Validate && t.Advice != nil && len(w.Errors) == before {
		t.Advice(w, at, n)
	}
}

func (w *Walk) union(u *Union, n *Node, at string) {
	tag := u.Default
	switch v := n.Get(u.Tag); {
	case v == nil && u.Default == "":
		w.Errorf(Join(at, u.Tag), "%s", u.Missing)
		return
	case v == nil:
	case v.Kind != String:
		w.Errorf(Join(at, u.Tag), "must be a string, found %s", v.Describe())
		return
	default:
		tag = v.Str
	}
	t, ok := u.Cases[tag]
	if !ok {
		if u.Unknown != nil {
			u.Unknown(w, at, tag)
		}
		return
	}
	w.Object(t, n, at)
}

// oneOf lists values for a message: "a", "b" or "c".
func oneOf(values []string) string {
	q := QuoteEach(values)
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// QuoteEach is each of ss quoted as Go quotes a string, for a message.
func QuoteEach(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
