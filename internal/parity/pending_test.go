package parity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writePending(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pending.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestJudge(t *testing.T) {
	t.Parallel()
	p, err := LoadPending(writePending(t, `{"about": "x", "pending": [
		{"marketplace": "m", "plugin": "listed", "cause": "nested agents", "differences": ["b", "a"]},
		{"marketplace": "m", "plugin": "fixed", "cause": "displayName", "differences": ["a"]},
		{"marketplace": "m", "plugin": "changed", "cause": "bare hooks", "differences": ["a"]},
		{"marketplace": "m", "plugin": "gone", "cause": "bare hooks", "differences": ["a"]},
		{"marketplace": "other", "plugin": "elsewhere", "cause": "bare hooks", "differences": ["a"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	v := p.Judge("m", []Result{
		{Plugin: "listed", Differences: []string{"a", "b"}},
		{Plugin: "fixed"},
		{Plugin: "changed", Differences: []string{"a", "c"}},
		{Plugin: "new", Differences: []string{"x"}},
		{Plugin: "same"},
		{Plugin: "allowed", Allowed: []string{"rule: y"}},
	})
	if v.Equal != 1 || len(v.Pending) != 2 || len(v.Allowed) != 1 {
		t.Errorf("equal %d pending %q allowed %q", v.Equal, v.Pending, v.Allowed)
	}
	want := []string{
		"changed: differs from Claude Code: a; c; the pending list says: a",
		"fixed: now matches Claude Code; remove it from the pending list (was: a)",
		"gone: on the pending list but not compared (no golden, or not an entry any more)",
		"new: differs from Claude Code: x",
	}
	if strings.Join(v.Failures, "\n") != strings.Join(want, "\n") {
		t.Errorf("failures\n%s\nwant\n%s", strings.Join(v.Failures, "\n"), strings.Join(want, "\n"))
	}
}

func TestLoadPendingRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, doc, err string }{
		{"no cause", `{"pending": [{"marketplace": "m", "plugin": "p", "differences": ["a"]}]}`, "no cause"},
		{"no differences", `{"pending": [{"marketplace": "m", "plugin": "p", "cause": "c", "differences": []}]}`, "no differences"},
		{"no plugin", `{"pending": [{"marketplace": "m", "cause": "c", "differences": ["a"]}]}`, "required"},
		{"twice", `{"pending": [{"marketplace": "m", "plugin": "p", "cause": "c", "differences": ["a"]},
			{"marketplace": "m", "plugin": "p", "cause": "c", "differences": ["b"]}]}`, "twice"},
		{"unknown field", `{"pending": [], "allowed": []}`, "unknown field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := LoadPending(writePending(t, tc.doc)); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
		})
	}
}
