package jsondoc

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// std is what encoding/json makes of data, in the shape of a Node's
// values, for comparison: objects as ordered key lists are compared by
// Keys separately.
func std(t testing.TB, data []byte) (any, bool) {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// plain converts a Node to encoding/json's any form.
func plain(n *Node) any {
	switch n.Kind {
	case Null:
		return nil
	case Bool:
		return n.Bool
	case Number:
		return json.Number(n.Str)
	case String:
		return n.Str
	case Array:
		out := make([]any, len(n.Items))
		for i := range n.Items {
			out[i] = plain(&n.Items[i])
		}
		return out
	}
	out := make(map[string]any, len(n.Fields))
	for i := range n.Fields {
		out[n.Fields[i].Key] = plain(&n.Fields[i].Val)
	}
	return out
}

// decoderKeys lists an object's keys in document order, each once, with
// json.Decoder: what Node.Keys must say.
func decoderKeys(raw []byte) []string {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	keys := []string{}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		if k, _ := t.(string); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

// agree checks Parse against encoding/json on data: the same verdict, the
// same values, the same top-level key order.
func agree(t testing.TB, data []byte) {
	t.Helper()
	n, _, err := Parse(data)
	valid := json.Valid(data)
	if (err == nil) != valid {
		t.Fatalf("Parse(%q): err %v, but json.Valid says %v", data, err, valid)
	}
	if err != nil {
		var syn *SyntaxError
		if !errors.As(err, &syn) || syn.Line < 1 || syn.Col < 1 {
			t.Fatalf("Parse(%q): %v is not a SyntaxError with a position", data, err)
		}
		return
	}
	want, ok := std(t, data)
	if !ok {
		t.Fatalf("encoding/json refuses %q", data)
	}
	if got := plain(n); !reflect.DeepEqual(got, want) {
		t.Fatalf("Parse(%q) = %#v, encoding/json says %#v", data, got, want)
	}
	if n.Kind == Object {
		if got, want := n.Keys(), decoderKeys(data); !reflect.DeepEqual(got, want) {
			t.Fatalf("Parse(%q) keys %q, json.Decoder says %q", data, got, want)
		}
	}
}

var samples = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `-0.5e+10`, `1E3`, `true`, `false`, `null`,
	` { "b" : 1 , "a":2 } `,
	`{"a":1,"a":2,"b":3}`,
	`{"n":{"x":[1,{"y":"}]"}],"z":"\""},"m":[[],{}],"t":true,"f":false,"u":null,"e":-1.5e3}`,
	`{"esc\"aped":1,"\u00e9":2,"back\\":"\\","sur":"\ud83d\ude00","lone":"\ud83d","bad":"\udc00x"}`,
	"\"bad \xff utf8\"", `"é — ok"`, "{\"ws\"\n:\t\"v\"\r\n,\"x\":0}",
	// Not JSON.
	``, ` `, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
	`tru`, `nul`, `"abc`, "\"a\tb\"", `"\x"`, `"\u12"`, `{"a":1}x`, `{'a':1}`, `[`, `]`, `{"a" 1}`, `NaN`,
	"\xef\xbb\xbf{}",
	// A number run that is not one number; an escape cut short before a quote.
	`[1-2]`, `[0.5e]`, `[1e+-2]`, `{"a":1.5.5}`, `["\u12", "x"]`, "[\"\\\x01\"]", `"\`,
}

func TestParseAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range samples {
		agree(t, []byte(s))
	}
	deep := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	agree(t, []byte(deep))
	agree(t, []byte("["+deep+"]"))
}

func FuzzParse(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { agree(t, data) })
}

func TestParseDuplicates(t *testing.T) {
	t.Parallel()
	many := `{` + strings.Repeat(`"k0":0,`, 0)
	for i := range 20 {
		many += `"k` + string(rune('a'+i)) + `":1,`
	}
	many += `"kc":2,"KD":3}`
	tests := []struct {
		doc   string
		paths []string
		want  string // the value of the first key, as compact JSON
	}{
		{`{"a":1,"b":2}`, nil, `{"a":1,"b":2}`},
		{`{"a":1,"b":2,"a":3}`, []string{"a"}, `{"a":3,"b":2}`},
		{`{"x":{"Name":1,"name":2}}`, []string{"x.name"}, `{"x":{"Name":1,"name":2}}`},
		{`{"l":[{"a":1},{"a":1,"a":2}]}`, []string{"l[1].a"}, `{"l":[{"a":1},{"a":2}]}`},
		{`{"k.x":{"a":0,"a":1}}`, []string{`["k.x"].a`}, `{"k.x":{"a":1}}`},
		{many, []string{"kc", "KD"}, ""},
	}
	for _, tc := range tests {
		n, dups, err := Parse([]byte(tc.doc))
		if err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		var paths []string
		for _, d := range dups {
			paths = append(paths, d.Finding().Path)
		}
		if !reflect.DeepEqual(paths, tc.paths) {
			t.Errorf("%s: duplicates at %q, want %q (%v)", tc.doc, paths, tc.paths, dups)
		}
		if tc.want != "" && string(n.Compact()) != tc.want {
			t.Errorf("%s: read as %s, want %s", tc.doc, n.Compact(), tc.want)
		}
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		doc       string
		line, col int
		early     bool
	}{
		{"{\n  \"a\": 1,\n  \"b\" 2\n}", 3, 7, false},
		{"{\"a\": [1, 2", 1, 11, true},
		{"x", 1, 1, false},
	}
	for _, tc := range tests {
		_, _, err := Parse([]byte(tc.doc))
		var syn *SyntaxError
		if !errors.As(err, &syn) {
			t.Fatalf("%q: %v", tc.doc, err)
		}
		if syn.Line != tc.line || syn.Col != tc.col || syn.EarlyEnd != tc.early {
			t.Errorf("%q: line %d col %d early %v, want %d %d %v (%v)", tc.doc, syn.Line, syn.Col, syn.EarlyEnd, tc.line, tc.col, tc.early, err)
		}
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	t.Parallel()
	doc := `{"b":[1,"x\u0000<>&",{"z":null,"a":true}],"a":{},"c":[],"d":-1.5e3}`
	n, _, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if string(n.Compact()) != `{"b":[1,"x\u0000<>&",{"z":null,"a":true}],"a":{},"c":[],"d":-1.5e3}` {
		t.Errorf("compact: %s", n.Compact())
	}
	again, _, err := Parse(n.Marshal())
	if err != nil || !reflect.DeepEqual(plain(again), plain(n)) || !reflect.DeepEqual(again.Keys(), n.Keys()) {
		t.Errorf("indented form reads back differently: %s (%v)", n.Marshal(), err)
	}
}
