package marketplace

import (
	"reflect"
	"testing"
)

// TestRenamesFollow follows chains as Claude Code does (KEt in its
// loader): a name the map does not hold is not renamed; a chain ends at a
// listed name that the map does not hold, or at null; a cycle, a target
// neither listed nor renamed, and a chain of more than 16 names do not
// resolve.
func TestRenamesFollow(t *testing.T) {
	t.Parallel()
	name := func(s string) *string { return &s }
	long := Renames{}
	for i := range 17 {
		long[string(rune('a'+i))] = name(string(rune('a' + i + 1)))
	}
	fifteen := Renames{}
	for i := range 15 {
		fifteen[string(rune('a'+i))] = name(string(rune('a' + i + 1)))
	}
	listed := map[string]bool{"new": true, "c": true, "kept": true, "r": true, "p": true}
	tests := []struct {
		name    string
		renames Renames
		from    string
		want    Rename
	}{
		{"not renamed", Renames{"x": name("new")}, "kept", Rename{}},
		{"simple", Renames{"old": name("new")}, "old", Rename{Kind: Renamed, To: "new", Chain: []string{"old", "new"}}},
		{"chain", Renames{"a": name("b"), "b": name("c")}, "a", Rename{Kind: Renamed, To: "c", Chain: []string{"a", "b", "c"}}},
		{"removed", Renames{"gone": nil}, "gone", Rename{Kind: RenameRemoved, Chain: []string{"gone"}}},
		{"chain to removed", Renames{"a": name("b"), "b": nil}, "a", Rename{Kind: RenameRemoved, Chain: []string{"a", "b"}}},
		{"target missing", Renames{"lost": name("ghost")}, "lost", Rename{Kind: RenameUnresolved, Chain: []string{"lost", "ghost"}, Reason: `"ghost" is neither a listed plugin nor renamed`}},
		{"cycle", Renames{"a": name("b"), "b": name("a")}, "a", Rename{Kind: RenameUnresolved, Chain: []string{"a", "b", "a"}, Reason: "a cycle"}},
		// A listed name that is renamed further is followed on, as in Claude.
		{"listed but renamed on", Renames{"a": name("new"), "new": name("kept")}, "a", Rename{Kind: Renamed, To: "kept", Chain: []string{"a", "new", "kept"}}},
		{"fifteen steps resolve", fifteen, "a", Rename{Kind: Renamed, To: "p", Chain: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"}}},
		{"too deep", long, "a", Rename{Kind: RenameUnresolved, Chain: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"}, Reason: "chain too deep"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.renames.Follow(tt.from, func(n string) bool { return listed[n] })
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Follow(%q) = %+v, want %+v", tt.from, got, tt.want)
			}
		})
	}
}

// TestParseKeepsRenames: the parsed document holds its renames map; a map
// that is not one of names and nulls is ignored when read (Claude Code's
// .catch), as validate reports it.
func TestParseKeepsRenames(t *testing.T) {
	t.Parallel()
	doc := func(renames string) []byte {
		return []byte(`{"name":"m","owner":{"name":"o"},"plugins":[{"name":"new","source":"./new"}],"renames":` + renames + `}`)
	}
	m, err := Parse(doc(`{"old":"new","gone":null}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Renames.Follow("old", func(n string) bool { return n == "new" }); r.Kind != Renamed || r.To != "new" {
		t.Fatalf("renames = %v; old follows to %+v", m.Renames, r)
	}
	if _, ok := m.Renames["gone"]; !ok || m.Renames["gone"] != nil {
		t.Fatalf("gone: %v", m.Renames)
	}
	for _, bad := range []string{`["old"]`, `{"old":1}`, `"old"`} {
		m, err := Parse(doc(bad), Options{})
		if err != nil || m.Renames != nil {
			t.Errorf("renames %s: %v, %v", bad, m.Renames, err)
		}
	}
}

// TestSelectNamesTheRename: asking for a plugin by a name the marketplace
// renamed (or removed) says so.
func TestSelectNamesTheRename(t *testing.T) {
	t.Parallel()
	m, err := Parse([]byte(`{"name":"m","owner":{"name":"o"},"plugins":[{"name":"new","source":"./new"}],"renames":{"old":"new","gone":null}}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"old":  `no plugin named "old" in marketplace "m", which lists 1 entries (it renamed "old" to "new")`,
		"gone": `no plugin named "gone" in marketplace "m", which lists 1 entries (its renames map says "gone" was removed)`,
	} {
		if _, err := m.Select(name); err == nil || err.Error() != want {
			t.Errorf("Select(%q) = %v, want %s", name, err, want)
		}
	}
}
