package tarball

import (
	"archive/tar"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

// readFiles is every regular file below dest, by slash path; anything
// else but a folder fails the test (nothing on disk is ever a link).
func readFiles(t *testing.T, dest string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			t.Errorf("%s is a %v on disk", p, d.Type())
			return nil
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dest, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Links to folders become copies of the folder's files, whatever the
// archive order, through chains and links inside the folder; links outside
// the kept folders are never followed, and refuse nothing.
func TestFolderLinks(t *testing.T) {
	t.Parallel()
	sym := func(name, target string) ent { return ent{name: name, typ: tar.TypeSymlink, link: target} }
	file := func(name, body string) ent { return ent{name: name, body: body} }
	tests := []struct {
		name    string
		entries []ent
		paths   []string
		want    map[string]string // files on disk
	}{
		{"link listed before its folder", []ent{
			sym("skills", "shared/skills"),
			file("shared/skills/a/SKILL.md", "a"),
			file("shared/skills/b.md", "b"),
		}, nil, map[string]string{
			"shared/skills/a/SKILL.md": "a", "shared/skills/b.md": "b",
			"skills/a/SKILL.md": "a", "skills/b.md": "b",
		}},
		{"tool folder linking up, outside every plugin", []ent{
			file("skills/x/SKILL.md", "x"),
			sym(".cursor/skills", "../skills"),
		}, nil, map[string]string{"skills/x/SKILL.md": "x", ".cursor/skills/x/SKILL.md": "x"}},
		{"chain of links to a folder", []ent{
			sym("a", "b"), sym("b", "c/"), file("c/f", "f"),
		}, nil, map[string]string{"c/f": "f", "a/f": "f", "b/f": "f"}},
		{"links inside the copied folder", []ent{
			file("README.md", "r"),
			file("lib/x", "x"),
			sym("lib/readme", "../README.md"),
			sym("lib/self-file", "x"),
			sym("plugin/lib", "../lib"),
		}, nil, map[string]string{
			"README.md": "r", "lib/x": "x", "lib/readme": "r", "lib/self-file": "x",
			"plugin/lib/x": "x", "plugin/lib/readme": "r", "plugin/lib/self-file": "x",
		}},
		{"dotdot after a folder link goes where the link leads", []ent{
			file("deep/er/f", "f"), file("deep/g", "g"), file("g", "root g"),
			sym("d", "deep/er"), sym("a", "d/../g"),
		}, nil, map[string]string{"deep/er/f": "f", "deep/g": "g", "g": "root g", "d/f": "f", "a": "g"}},
		{"escaping and looping links outside the kept folder", []ent{
			file("plugin/a.md", "a"),
			sym("tools/evil", "../../etc/passwd"),
			sym("tools/loop", "."),
			sym("tools/abs", "/etc"),
		}, []string{"plugin"}, map[string]string{"plugin/a.md": "a"}},
		{"kept folder reached through a folder link", []ent{
			sym("plugins", "packages"),
			file("packages/a/p.md", "a"), file("packages/b/p.md", "b"),
		}, []string{"plugins/a", "packages/a"}, map[string]string{"packages/a/p.md": "a", "plugins/a/p.md": "a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, format := range []string{"tar.gz", "zip"} {
				var data []byte
				if format == "zip" {
					data = zipBytes(t, "", tc.entries...)
				} else {
					data = tarGz(t, tc.entries...)
				}
				dest, res, err := run(t, format, data, Options{Budget: small, Paths: tc.paths, Hash: true})
				if err != nil {
					t.Fatalf("%s: %v", format, err)
				}
				got := readFiles(t, dest)
				if !maps.Equal(got, tc.want) {
					t.Errorf("%s: files %v, want %v", format, got, tc.want)
				}
				if res.Files != len(tc.want) {
					t.Errorf("%s: result counts %d files, %d on disk", format, res.Files, len(tc.want))
				}
				want, _, err := plugind.TreeDigest(dest, small)
				if err != nil {
					t.Fatal(err)
				}
				if d := plugind.DigestFiles(res.Tree); d != want {
					t.Errorf("%s: reported digest %s, on disk %s", format, d, want)
				}
			}
		})
	}
}

// A kept link that leads outside the kept folders says everything it
// needs at once; kept as well, the tree completes.
func TestFolderLinkNeedsPaths(t *testing.T) {
	t.Parallel()
	data := tarGz(t,
		ent{name: "plugin/skills", typ: tar.TypeSymlink, link: "../shared/skills"},
		ent{name: "plugin/readme", typ: tar.TypeSymlink, link: "../docs/README.md"},
		ent{name: "plugin/p.json", body: "{}"},
		ent{name: "shared/skills/a.md", body: "a"},
		ent{name: "shared/skills/deep/b.md", body: "b"},
		ent{name: "docs/README.md", body: "r"},
		ent{name: "other/x", body: "x"},
	)
	_, _, err := run(t, "tar.gz", data, Options{Budget: small, Paths: []string{"plugin"}})
	var need *NeedsPathsError
	if !errors.As(err, &need) || !errors.Is(err, ErrNeedsFull) {
		t.Fatalf("err = %v, want NeedsPathsError", err)
	}
	if got := strings.Join(need.Paths, " "); got != "docs/README.md shared/skills" {
		t.Fatalf("needs %q", got)
	}
	dest, _, err := run(t, "tar.gz", data, Options{Budget: small, Paths: append([]string{"plugin"}, need.Paths...)})
	if err != nil {
		t.Fatal(err)
	}
	got := readFiles(t, dest)
	if got["plugin/skills/deep/b.md"] != "b" || got["plugin/readme"] != "r" || got["other/x"] != "" {
		t.Fatalf("files %v", got)
	}
}

// A folder link's copies count against the budget, file by file.
func TestFolderLinkBudget(t *testing.T) {
	t.Parallel()
	entries := []ent{{name: "big/a", body: strings.Repeat("x", 600)}, {name: "big/b", body: strings.Repeat("y", 600)}}
	for i := 0; i < 3; i++ {
		entries = append(entries, ent{name: "copy" + string(rune('0'+i)), typ: tar.TypeSymlink, link: "big"})
	}
	_, _, err := run(t, "tar.gz", tarGz(t, entries...), Options{Budget: plugind.Budget{MaxBytes: 4000, MaxFiles: 100}})
	wantErr(t, err, plugind.CodeBudgetExceeded, "size budget", `"copy`)
	_, _, err = run(t, "tar.gz", tarGz(t, entries...), Options{Budget: plugind.Budget{MaxBytes: 1 << 20, MaxFiles: 7}})
	wantErr(t, err, plugind.CodeBudgetExceeded, "file-count budget")
	if _, _, err := run(t, "tar.gz", tarGz(t, entries...), Options{Budget: plugind.Budget{MaxBytes: 4800, MaxFiles: 8}}); err != nil {
		t.Fatalf("exactly at the budget: %v", err)
	}
}

// A refusal names the entry's path (EntryError), so a caller fetching
// several folders can tell which one it spoils.
func TestRefusalNamesItsPath(t *testing.T) {
	t.Parallel()
	data := tarGz(t,
		ent{name: "a/ok.md", body: "a"},
		ent{name: "b/evil", typ: tar.TypeSymlink, link: "../../outside"},
	)
	_, _, err := run(t, "tar.gz", data, Options{Budget: small, Paths: []string{"a", "b"}})
	wantErr(t, err, plugind.CodeUnsafeArchive, `"b/evil"`, "escapes")
	if p, ok := PathOf(err); !ok || p != "b/evil" {
		t.Fatalf("PathOf = %q, %v", p, ok)
	}
	if _, _, err := run(t, "tar.gz", data, Options{Budget: small, Paths: []string{"a"}}); err != nil {
		t.Fatalf("without the refused folder: %v", err)
	}
}

// The selection Options.Paths makes.
func TestSelection(t *testing.T) {
	t.Parallel()
	s := newSelection([]string{"plugins/a", "docs"})
	for _, c := range []struct {
		rel                 string
		keeps, leads, wants bool
	}{
		{"plugins/a", true, false, true},
		{"plugins/a/x", true, false, true},
		{"plugins", false, true, true},
		{"plugins/ab", false, false, false},
		{"docs/x/y", true, false, true},
		{"other", false, false, false},
	} {
		if s.keeps(c.rel) != c.keeps || s.leadsTo(c.rel) != c.leads || s.wants(c.rel) != c.wants {
			t.Errorf("%s: keeps %v leads %v wants %v", c.rel, s.keeps(c.rel), s.leadsTo(c.rel), s.wants(c.rel))
		}
	}
	if got := s.under("plugins"); !slices.Equal(got, []string{"a"}) {
		t.Errorf("under(plugins) = %v", got)
	}
	if got := s.under("docs/x"); got != nil {
		t.Errorf("under a kept folder = %v, want all", got)
	}
	if newSelection([]string{"a", "."}).all() != true || Keeps(nil) != nil {
		t.Error("\".\" or no paths keep everything")
	}
}
