package marketplace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFind: Claude's document first, then Codex's (SPEC §7); a root with
// both reads Claude's and says the other is not read; a folder or a link
// out of the root is no document.
func TestFind(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "marketplace.json")
	if err := os.WriteFile(outside, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		files map[string]string
		links map[string]string
		want  string // the document's path; "" when none
		also  bool
	}{
		{name: "claude", files: map[string]string{ClaudeDocument.Path: "{}"}, want: ClaudeDocument.Path},
		{name: "codex", files: map[string]string{CodexDocument.Path: "{}"}, want: CodexDocument.Path},
		{name: "both", files: map[string]string{ClaudeDocument.Path: "{}", CodexDocument.Path: "{}"}, want: ClaudeDocument.Path, also: true},
		{name: "plugin only", files: map[string]string{".claude-plugin/plugin.json": "{}"}},
		{name: "directory, not file", files: map[string]string{ClaudeDocument.Path + "/x": ""}},
		{name: "link out", links: map[string]string{ClaudeDocument.Path: outside}},
		{name: "nothing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			for rel, content := range tc.files {
				p := filepath.Join(root, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for rel, target := range tc.links {
				p := filepath.Join(root, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, p); err != nil {
					t.Fatal(err)
				}
			}
			found, ok := Find(root)
			if ok != (tc.want != "") || found.Path != tc.want || Has(root) != ok {
				t.Fatalf("Find = %+v, %v; want %q", found, ok, tc.want)
			}
			if note := found.Note(); (note != "") != tc.also || (tc.also && !strings.Contains(note, CodexDocument.Path)) {
				t.Errorf("note %q", note)
			}
		})
	}
}
