package plugind

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A local folder's links follow the archive rules (SPEC §8): a link to a
// folder is a copy of its files, links inside it followed too; a cycle or a
// link out of the folder is refused, naming the link.
func TestScanTreeFolderLinks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		links map[string]string // link → target
		want  []string          // listed paths, or
		err   []string          // the refusal's words
	}{
		{"folder link", map[string]string{"plugin/skills": "../shared/skills"}, []string{
			"README.md", "plugin/p.json", "plugin/skills/a/SKILL.md", "plugin/skills/readme", "shared/skills/a/SKILL.md", "shared/skills/readme",
		}, nil},
		{"chain", map[string]string{"x": "y", "y": "shared"}, []string{
			"README.md", "plugin/p.json", "shared/skills/a/SKILL.md", "shared/skills/readme",
			"x/skills/a/SKILL.md", "x/skills/readme", "y/skills/a/SKILL.md", "y/skills/readme",
		}, nil},
		{"link to its own folder", map[string]string{"plugin/self": "."}, nil, []string{"plugin/self", "cycle"}},
		{"links back and forth", map[string]string{"plugin/to-shared": "../shared", "shared/to-plugin": "../plugin"}, nil, []string{"cycle"}},
		{"link to the root", map[string]string{"plugin/root": ".."}, nil, []string{"plugin/root", "cycle"}},
		{"link out of the folder", map[string]string{"plugin/out": "../../elsewhere"}, nil, []string{"plugin/out", "outside"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			root := filepath.Join(base, "pkg")
			for p, body := range map[string]string{
				"README.md": "r", "plugin/p.json": "{}", "shared/skills/a/SKILL.md": "a", "../elsewhere/secret": "s",
			} {
				full := filepath.Join(root, filepath.FromSlash(p))
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			links := map[string]string{"shared/skills/readme": "../../README.md"}
			for k, v := range tc.links {
				links[k] = v
			}
			for l, target := range links {
				if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(l))); err != nil {
					t.Fatal(err)
				}
			}
			tree, err := ScanTree(root, DefaultBudget)
			if tc.err != nil {
				if err == nil || CodeOf(err) != CodeUnsafeArchive {
					t.Fatalf("err = %v, want unsafe_archive", err)
				}
				for _, w := range tc.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range tree.Files {
				got = append(got, f.Path)
				if filepath.IsAbs(f.Source) && !Within(root, f.Source) {
					t.Errorf("%s reads %s, outside the root", f.Path, f.Source)
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("files\n%v\nwant\n%v", got, tc.want)
			}
		})
	}
}

// ShortDigest cuts a digest as a commit is cut: its algorithm and 12 hex
// digits; anything shorter stays whole.
func TestShortDigest(t *testing.T) {
	for in, want := range map[string]string{
		"sha256:0123456789abcdef0123": "sha256:0123456789ab",
		"sha256:0123":                 "sha256:0123",
		"0123456789abcdef":            "0123456789ab",
		"":                            "",
	} {
		if got := ShortDigest(in); got != want {
			t.Errorf("ShortDigest(%q) = %q, want %q", in, got, want)
		}
	}
}
