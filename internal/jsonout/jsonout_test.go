package jsonout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

type selfEncoded struct{ S string }

func (s selfEncoded) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		S     string         `json:"s"`
		List  []int          `json:"list"`
		Empty []int          `json:"empty"`
		Obj   map[string]any `json:"obj"`
	}{s.S, []int{1, 2}, []int{}, map[string]any{"k": []any{map[string]any{}, "v\\\"]}"}}})
}

// laidOut lays itself out (Indented), as a Response does, through Indent.
type laidOut struct{ selfEncoded }

func (l laidOut) WriteIndentedJSON(w io.Writer) error {
	body, err := l.MarshalJSON()
	if err == nil {
		_, err = w.Write(Indent(nil, body, 0))
	}
	return err
}

// Write must print exactly what an indenting Encoder without HTML
// escaping prints, for values that lay themselves out, values that encode
// themselves and the rest.
func TestWriteJSONMatchesEncoder(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		selfEncoded{S: "a <b> & \"c\" é \\ {[,:]}"},
		laidOut{selfEncoded{S: "laid <out> \"é\" {[,:]}"}},
		&selfEncoded{S: "pointer"},
		map[string]any{"html": "<script>&", "n": 1, "nested": []any{map[string]any{}, []any{}}},
		[]string{},
		nil,
	} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := Write(&got, v); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("Write(%#v) =\n%s\nwant\n%s", v, got.String(), want.String())
		}
	}
}

func FuzzIndent(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,{"b":"}\"]"}],"c":{}}`, " [ 1 , \"x\" , null , true ] ", `"s"`, `12.5e3`} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, src string, depth uint8) {
		if !json.Valid([]byte(src)) {
			return
		}
		depth %= 4
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(src), strings.Repeat("  ", int(depth)), "  "); err != nil {
			t.Fatal(err)
		}
		got := Indent([]byte("x"), []byte(src), int(depth))
		// json.Indent keeps the whitespace around a top-level value; the
		// values Write indents come from MarshalJSON and have none.
		if string(got) != "x"+string(bytes.TrimSpace(want.Bytes())) {
			t.Fatalf("Indent(%q, %d) =\n%s\njson.Indent:\n%s", src, depth, got, want.String())
		}
	})
}

// TestSharesSpliced: an array encoded a share at a time and spliced into
// its document's empty array gives json.Marshal's bytes for the whole.
func TestSharesSpliced(t *testing.T) {
	t.Parallel()
	type doc struct {
		Name string
		Xs   []string
	}
	for n := range 9 {
		xs := make([]string, n)
		for i := range xs {
			xs[i] = fmt.Sprintf("x%d, \"quoted\"", i)
		}
		want, _ := json.Marshal(doc{"d", xs})
		head, _ := json.Marshal(doc{"d", []string{}})
		shares, err := Shares(n, func(lo, hi int) ([]byte, error) { return json.Marshal(xs[lo:hi]) })
		if err != nil || len(shares) != min(runtime.GOMAXPROCS(0), n) {
			t.Fatalf("%d elements: %d shares, %v", n, len(shares), err)
		}
		if got := bytes.Join(Splice(head, len(head)-2, shares, "[", ",", "]"), nil); !bytes.Equal(got, want) {
			t.Errorf("%d elements:\n got %s\nwant %s", n, got, want)
		}
	}
}
