package marketplace

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// decoderKeys is the obvious json.Decoder version orderedKeys must agree
// with on every valid object.
func decoderKeys(raw []byte) []string {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		if k, _ := t.(string); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

func TestOrderedKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want []string
	}{
		{`{}`, nil},
		{` { "b" : 1 , "a":2 }`, []string{"b", "a"}},
		{`{"a":1,"a":2,"b":3}`, []string{"a", "b"}},
		{`{"n":{"x":[1,{"y":"}]"}],"z":"\""},"m":[[],{}],"t":true,"f":false,"u":null,"e":-1.5e3}`, []string{"n", "m", "t", "f", "u", "e"}},
		{`{"esc\"aped":1,"\u00e9":2,"back\\":"\\"}`, []string{`esc"aped`, "é", `back\`}},
		{"{\"ws\"\n:\t\"v\"\r\n,\"x\":0}", []string{"ws", "x"}},
		{`[1,2]`, nil},
		{`"s"`, nil},
		{``, nil},
	}
	for _, tc := range tests {
		got := orderedKeys(json.RawMessage(tc.raw))
		if !slices.Equal(got, tc.want) {
			t.Errorf("orderedKeys(%s) = %q, want %q", tc.raw, got, tc.want)
		}
		if json.Valid([]byte(tc.raw)) {
			if dk := decoderKeys([]byte(tc.raw)); !slices.Equal(got, dk) {
				t.Errorf("orderedKeys(%s) = %q, json.Decoder says %q", tc.raw, got, dk)
			}
		}
	}
}

func FuzzOrderedKeys(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":{"b":[1,"]"]},"c":"\"}"}`, `{"x":null,"x":true}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := orderedKeys(json.RawMessage(raw)) // must not panic on anything
		if !json.Valid([]byte(raw)) {
			return
		}
		if want := decoderKeys([]byte(raw)); !slices.Equal(got, want) {
			t.Fatalf("orderedKeys(%q) = %q, json.Decoder says %q", raw, got, want)
		}
	})
}

func TestDecodeString(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{`""`, `"plain"`, `"with \"escape\""`, `"é"`, `"\u00e9\n"`, "\"bad \xff utf8\"", `"tab\tin"`, `"/path/ok"`} {
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got := decodeString([]byte(raw)); got != want {
			t.Errorf("decodeString(%s) = %q, encoding/json says %q", raw, got, want)
		}
	}
}
