package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

// layout writes files (slash path → content) under a fresh temp dir and
// creates symlinks (slash path → target, used verbatim). It returns the
// package root.
func layout(t *testing.T, files map[string]string, links map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if strings.HasSuffix(rel, "/") { // a directory
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for rel, target := range links {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// outsideDir is a directory with a file in it, outside any package root.
func outsideDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "evil"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"secret.md", "evil/SKILL.md"} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(f)), []byte("---\ndescription: outside\n---\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// wantError checks err is a CodeInvalidSource error mentioning every want.
func wantError(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one mentioning %q", wants)
	}
	if code := plugind.CodeOf(err); code != plugind.CodeInvalidSource {
		t.Errorf("code = %q, want %q (err: %v)", code, plugind.CodeInvalidSource, err)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func hasWarning(p *Package, sub string) bool {
	for _, w := range p.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}
