package installer

import (
	"fmt"
	"testing"
)

// Find answers the same whether the entries are in the order Save writes
// (by name: a binary search) or not (appended, hand-edited: a scan).
func TestFindInAnyOrder(t *testing.T) {
	t.Parallel()
	for _, names := range [][]string{
		{"a", "b", "c", "d", "e"},
		{"e", "d", "c", "b", "a"},
		{"c", "a", "e", "b", "d"},
		{"a", "b", "d", "e", "c"}, // sorted but for one appended
		{},
	} {
		r := &Registry{}
		for _, n := range names {
			r.Plugins = append(r.Plugins, Entry{Name: n, Version: "v-" + n})
		}
		for _, want := range []string{"a", "b", "c", "d", "e", "f", ""} {
			e, ok := r.Find(want)
			listed := len(names) > 0 && want != "f" && want != ""
			if ok != listed || (ok && (e.Name != want || e.Version != "v-"+want)) {
				t.Errorf("%v: Find(%q) = %v, %v", names, want, e, ok)
			}
			if ok {
				e.Description = fmt.Sprint("found ", want) // the entry itself, not a copy
				if got, _ := r.Find(want); got.Description != e.Description {
					t.Errorf("%v: Find(%q) returned a copy", names, want)
				}
			}
		}
	}
}
