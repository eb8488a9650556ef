package lockfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

func TestParseProject(t *testing.T) {
	p, err := ParseProject([]byte(`{
  "marketplaces": {
    "acme": {"source": "https://git.acme.test/tools/market.git", "ref": "stable"},
    "gh": {"source": "https://github.com/acme/market"}
  },
  "plugins": {"lint@acme": false, "fmt@acme": true, "doc@gh": true}
}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Marketplaces) != 2 || p.Marketplaces[0].Name != "acme" || p.Marketplaces[0].Source.Ref != "stable" || p.Marketplaces[1].Source.Ref != "" {
		t.Errorf("marketplaces = %+v", p.Marketplaces)
	}
	want := []Wanted{{"fmt", "acme", true}, {"lint", "acme", false}, {"doc", "gh", true}}
	if len(p.Plugins) != len(want) {
		t.Fatalf("plugins = %+v", p.Plugins)
	}
	for i, w := range want {
		if p.Plugins[i] != w {
			t.Errorf("plugin %d = %+v, want %+v", i, p.Plugins[i], w)
		}
	}
}

func TestParseProjectRefuses(t *testing.T) {
	const m = `"marketplaces": {"acme": {"source": "https://github.com/acme/market"}}`
	for _, tc := range []struct{ name, doc, want string }{
		{"not JSON", `{`, "not valid JSON"},
		{"unknown field", `{"plugins": {}, "extra": 1}`, `unknown field "extra"`},
		{"repeated plugin", `{` + m + `, "plugins": {"fmt@acme": true, "fmt@acme": false}}`, `"fmt@acme" is given twice`},
		{"repeated marketplace", `{"marketplaces": {"a": {"source": "https://github.com/a/b"}, "a": {"source": "https://github.com/a/c"}}}`, `"a" is given twice`},
		{"no marketplace part", `{` + m + `, "plugins": {"fmt": true}}`, "say NAME@MARKETPLACE"},
		{"unlisted marketplace", `{` + m + `, "plugins": {"fmt@other": true}}`, `names marketplace "other"`},
		{"bad plugin name", `{` + m + `, "plugins": {"../x@acme": true}}`, `plugin name "../x"`},
		{"local marketplace", `{"marketplaces": {"here": {"source": "./market"}}}`, "remote repositories"},
		{"no source", `{"marketplaces": {"acme": {}}}`, "has no source"},
		{"credentials in source", `{"marketplaces": {"acme": {"source": "https://user:hunter2@git.acme.test/m.git"}}}`, "acme"},
		{"ref twice", `{"marketplaces": {"acme": {"source": "https://git.acme.test/m.git#main", "ref": "dev"}}}`, "names a ref twice"},
		{"bad ref", `{"marketplaces": {"acme": {"source": "https://git.acme.test/m.git", "ref": "a..b"}}}`, `ref "a..b"`},
		{"same name twice", `{"marketplaces": {"a": {"source": "https://github.com/a/b"}, "c": {"source": "https://github.com/a/c"}}, "plugins": {"fmt@a": true, "fmt@c": true}}`, "wanted from two marketplaces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseProject([]byte(tc.doc))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), ProjectFile) {
				t.Errorf("error = %q, want it to start with %s and say %q", err, ProjectFile, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error shows the password: %q", err)
			}
			if plugind.CodeOf(err) != plugind.CodeInvalidSource {
				t.Errorf("error %q is not %s", err, plugind.CodeInvalidSource)
			}
		})
	}
}

func TestFindProject(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	deep := filepath.Join(repo, "a", "b")
	must(t, os.MkdirAll(deep, 0o755))
	must(t, os.Mkdir(filepath.Join(repo, ".git"), 0o755))
	// Above the repository: never read from inside it.
	must(t, os.MkdirAll(filepath.Join(root, ".reasonix"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, ProjectFile), []byte(`{}`), 0o644))
	if _, err := FindProject(deep); plugind.CodeOf(err) != plugind.CodeNotFound || !strings.Contains(err.Error(), "repository's root "+repo) {
		t.Fatalf("FindProject above the repository root = %v", err)
	}
	must(t, os.MkdirAll(filepath.Join(repo, "a", ".reasonix"), 0o755))
	must(t, os.WriteFile(filepath.Join(repo, "a", ProjectFile), []byte(`{"plugins": {}}`), 0o644))
	p, err := FindProject(deep)
	if err != nil {
		t.Fatal(err)
	}
	if p.Dir != filepath.Join(repo, "a") || p.LockPath() != filepath.Join(repo, "a", FileName) {
		t.Errorf("found %s (lock %s)", p.Dir, p.LockPath())
	}
	// A broken file is an error, not a reason to look further up.
	must(t, os.WriteFile(filepath.Join(repo, "a", ProjectFile), []byte(`{"plugins": 1}`), 0o644))
	if _, err := FindProject(deep); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a broken project file = %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
