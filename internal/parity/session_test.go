package parity

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSession(t *testing.T) {
	t.Parallel()
	// The init message as Claude Code 2.1.197 writes it (trimmed), then the
	// messages a failed API call adds.
	out := `{"type":"system","subtype":"hook_started","hook_name":"SessionStart:startup"}
{"type":"system","subtype":"init","cwd":"/p","agents":["claude","Explore","nest:My Agent","nest:sub:custom","nest:sub:deeper:bar","other:a"],"slash_commands":["deep-research","nest:grp:cmd","nest:top","clear"]}
{"type":"result","is_error":true}
`
	got, err := ParseSession([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*Session{
		"nest":  {Agents: []string{"My Agent", "sub:custom", "sub:deeper:bar"}, Commands: []string{"grp:cmd", "top"}},
		"other": {Agents: []string{"a"}, Commands: []string{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, bad := range []struct{ out, want string }{
		{"", "no system/init message"},
		{`{"type":"result"}`, "no system/init message"},
		{"Invalid API key\n", "not a JSON message"},
	} {
		if _, err := ParseSession([]byte(bad.out)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseSession(%q) = %v, want an error saying %q", bad.out, err, bad.want)
		}
	}
}
