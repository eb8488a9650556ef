package cache

import (
	"errors"
	"fmt"
	"testing"
)

func TestDecoded(t *testing.T) {
	t.Parallel()
	decodes := 0
	decode := func(v string) func() (*string, error) {
		return func() (*string, error) { decodes++; return &v, nil }
	}
	key := func(k string) func() string { return func() string { return k } }

	d := NewDecoded(3)
	first, _ := Remember(d, key("a"), decode("A"))
	again, _ := Remember(d, key("a"), decode("other"))
	if again != first || decodes != 1 {
		t.Fatalf("the same key was decoded %d times", decodes)
	}
	if _, err := Remember(d, key("bad"), func() (*string, error) { return nil, errors.New("bad") }); err == nil {
		t.Fatal("the decode error was lost")
	}
	if d.Has("bad") {
		t.Fatal("an error was remembered")
	}
	// Another type under a key is decoded, not handed out as the wrong type.
	if n, _ := Remember(d, key("a"), func() (int, error) { return 7, nil }); n != 7 {
		t.Fatalf("another type under a key: %d", n)
	}
	// Bounded, least recently used out first.
	d = NewDecoded(3)
	for i := range 3 {
		_, _ = Remember(d, key(fmt.Sprint(i)), decode("v"))
	}
	_, _ = Remember(d, key("0"), decode("v")) // used: 1 is now the oldest
	_, _ = Remember(d, key("3"), decode("v"))
	if !d.Has("0") || d.Has("1") || !d.Has("3") {
		t.Fatalf("after a fourth entry: 0 %v, 1 %v, 3 %v; want 0 and 3 kept, 1 dropped", d.Has("0"), d.Has("1"), d.Has("3"))
	}
	// No Decoded: every call decodes, and the key is not even asked for.
	var none *Decoded
	before := decodes
	for range 2 {
		_, _ = Remember(none, func() string { t.Fatal("key asked for with nothing to keep"); return "" }, decode("v"))
	}
	if decodes != before+2 || none.Has("0") {
		t.Fatal("a nil Decoded remembered")
	}
}
