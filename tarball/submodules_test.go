package tarball

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

const (
	libCommit   = "1111111111111111111111111111111111111111"
	innerCommit = "2222222222222222222222222222222222222222"
)

const gitmodulesLib = "[submodule \"lib\"]\n\tpath = vendor/lib\n\turl = ../lib.git\n"

// fakeSubmodules is a SubmoduleFunc serving the submodule "lib" from an
// archive of its own, as a host would, and recording what it was asked.
type fakeSubmodules struct {
	lib   []byte // the submodule's archive
	asked []Submodule
	fail  error
}

func newFakeSubmodules(t *testing.T, fail error) *fakeSubmodules {
	return &fakeSubmodules{fail: fail, lib: tarGz(t,
		ent{name: "skills/s/SKILL.md", body: "skill"},
		ent{name: "README.md", body: "lib"},
	)}
}

func (f *fakeSubmodules) fetch(ctx context.Context, sm Submodule, dest string, budget plugind.Budget) (*SubmoduleTree, error) {
	f.asked = append(f.asked, sm)
	if f.fail != nil {
		return nil, f.fail
	}
	res, err := ExtractTarGz(ctx, bytes.NewReader(f.lib), dest, Options{Budget: budget, Paths: sm.Paths, Hash: true})
	if err != nil {
		return nil, err
	}
	return &SubmoduleTree{URL: "https://github.com/acme/lib", Files: res.Tree, Dirs: res.Dirs,
		Submodules: []plugind.Submodule{{Path: "inner", URL: "https://github.com/acme/inner", Commit: innerCommit}}}, nil
}

// writeTree feeds a Writer as the git host does: files, links and gitlinks.
func writeTree(t *testing.T, opts Options, build func(w *Writer) error) (string, *Result, error) {
	t.Helper()
	dest := filepath.Join(t.TempDir(), "out")
	w, err := NewWriter(context.Background(), dest, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := build(w); err != nil {
		return dest, nil, w.Abort(err)
	}
	res, err := w.Finish()
	if err != nil {
		return dest, nil, w.Abort(err)
	}
	return dest, res, nil
}

func file(w *Writer, name, body string) error {
	return w.File(name, false, int64(len(body)), strings.NewReader(body))
}

// A gitlink's commit is fetched into its folder before links are made, so
// a link may lead into it; its files are hashed and counted as the tree's.
func TestSubmoduleOverGit(t *testing.T) {
	t.Parallel()
	subs := newFakeSubmodules(t, nil)
	dest, res, err := writeTree(t, Options{Budget: small, Hash: true, Submodules: subs.fetch}, func(w *Writer) error {
		for _, err := range []error{
			file(w, ".gitmodules", gitmodulesLib),
			w.Gitlink("vendor/lib", strings.ToUpper(libCommit)),
			w.Symlink("plugin/skills", "../vendor/lib/skills"),
			file(w, "plugin/p.json", "{}"),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := readFiles(t, dest)
	if got["vendor/lib/skills/s/SKILL.md"] != "skill" || got["plugin/skills/s/SKILL.md"] != "skill" || got["vendor/lib/README.md"] != "lib" {
		t.Fatalf("files %v", got)
	}
	if len(subs.asked) != 1 || subs.asked[0].URL != "../lib.git" || subs.asked[0].Commit != libCommit || subs.asked[0].Paths != nil {
		t.Fatalf("asked %+v", subs.asked)
	}
	want := []plugind.Submodule{
		{Path: "vendor/lib", URL: "https://github.com/acme/lib", Commit: libCommit},
		{Path: "vendor/lib/inner", URL: "https://github.com/acme/inner", Commit: innerCommit},
	}
	if len(res.Submodules) != 2 || res.Submodules[0] != want[0] || res.Submodules[1] != want[1] {
		t.Fatalf("submodules %+v", res.Submodules)
	}
	if res.Files != len(got) {
		t.Errorf("result counts %d files, %d on disk", res.Files, len(got))
	}
	onDisk, _, err := plugind.TreeDigest(dest, small)
	if err != nil {
		t.Fatal(err)
	}
	if d := plugind.DigestFiles(res.Tree); d != onDisk {
		t.Errorf("reported digest %s, on disk %s", d, onDisk)
	}
}

// An archive holds a submodule as an empty folder: FindGitlinks says which
// .gitmodules folders are gitlinks, and the same content follows. Only
// folders the kept paths need are asked about, and a kept path inside the
// submodule fetches only that part of it.
func TestSubmoduleInArchive(t *testing.T) {
	t.Parallel()
	data := tarGz(t,
		ent{name: ".gitmodules", body: gitmodulesLib + "[submodule \"gone\"]\n\tpath = old\n\turl = https://example.test/old.git\n"},
		ent{name: "vendor/lib/", typ: tar.TypeDir},
		ent{name: "old/", typ: tar.TypeDir},
		ent{name: "plugin/p.json", body: "{}"},
	)
	for _, tc := range []struct {
		name      string
		paths     []string
		asked     string   // folders FindGitlinks is asked about
		subPaths  []string // what the submodule fetch keeps
		wantFiles []string
	}{
		{"whole tree", nil, "old vendor/lib", nil, []string{".gitmodules", "plugin/p.json", "vendor/lib/README.md", "vendor/lib/skills/s/SKILL.md"}},
		{"a folder inside the submodule", []string{"vendor/lib/skills"}, "vendor/lib", []string{"skills"}, []string{"vendor/lib/skills/s/SKILL.md"}},
		{"no submodule kept", []string{"plugin"}, "", nil, []string{"plugin/p.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			subs := newFakeSubmodules(t, nil)
			var asked []string
			find := func(_ context.Context, paths []string) (map[string]string, error) {
				asked = append(asked, paths...)
				return map[string]string{"vendor/lib": libCommit}, nil
			}
			dest, res, err := run(t, "tar.gz", data, Options{Budget: small, Hash: true, Paths: tc.paths, Submodules: subs.fetch, FindGitlinks: find})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(asked, " "); got != tc.asked {
				t.Errorf("asked about %q, want %q", got, tc.asked)
			}
			files := slices.Sorted(maps.Keys(readFiles(t, dest)))
			if strings.Join(files, " ") != strings.Join(tc.wantFiles, " ") {
				t.Errorf("files %v, want %v", files, tc.wantFiles)
			}
			if tc.asked != "" && (len(subs.asked) != 1 || strings.Join(subs.asked[0].Paths, ",") != strings.Join(tc.subPaths, ",") || len(res.Submodules) != 2) {
				t.Errorf("asked %+v, result %+v", subs.asked, res.Submodules)
			}
		})
	}
}

// What is refused: a .gitmodules path that escapes or that two entries
// claim, a gitlink whose folder the tree also fills, a gitlink with no URL,
// a tree with submodules where nothing can fetch them; a submodule that
// cannot be fetched fails the tree with its path (and the fetcher's error,
// which names the URL).
func TestSubmoduleRefusals(t *testing.T) {
	t.Parallel()
	down := errors.New("from https://git.example.test/lib.git: connection refused")
	tests := []struct {
		name    string
		modules string
		extra   func(w *Writer) error
		fetch   error
		noHook  bool
		code    plugind.Code
		want    []string
	}{
		{"escaping path", "[submodule \"x\"]\n\tpath = ../x\n\turl = https://example.test/x.git\n", nil, nil, false, plugind.CodeUnsafeArchive, []string{".gitmodules", `"../x"`}},
		{"two claim one folder", gitmodulesLib + "[submodule \"again\"]\n\tpath = Vendor/Lib\n\turl = https://example.test/x.git\n", nil, nil, false, plugind.CodeUnsafeArchive, []string{"both claim"}},
		{"no url", "[submodule \"lib\"]\n\tpath = vendor/lib\n", nil, nil, false, plugind.CodeSourceUnreadable, []string{`"vendor/lib"`, "no URL"}},
		{"tree entries inside it", gitmodulesLib, func(w *Writer) error { return file(w, "vendor/lib/planted", "x") }, nil, false, plugind.CodeUnsafeArchive, []string{"collides", "vendor/lib/planted"}},
		{"no fetcher", gitmodulesLib, nil, nil, true, plugind.CodeSourceUnreadable, []string{"does not follow submodules", "../lib.git"}},
		{"host down", gitmodulesLib, nil, plugind.Errorf(plugind.CodeSourceUnreadable, "%w", down), false, plugind.CodeSourceUnreadable, []string{`submodule "vendor/lib"`, "https://git.example.test/lib.git", "connection refused"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			subs := newFakeSubmodules(t, tc.fetch)
			opts := Options{Budget: small, Hash: true, Submodules: subs.fetch}
			if tc.noHook {
				opts.Submodules = nil
			}
			dest, _, err := writeTree(t, opts, func(w *Writer) error {
				if err := file(w, ".gitmodules", tc.modules); err != nil {
					return err
				}
				if err := w.Gitlink("vendor/lib", libCommit); err != nil {
					return err
				}
				if tc.extra != nil {
					return tc.extra(w)
				}
				return nil
			})
			wantErr(t, err, tc.code, tc.want...)
			if tc.fetch != nil {
				if p, ok := PathOf(err); !ok || p != "vendor/lib" {
					t.Errorf("PathOf = %q %v", p, ok)
				}
				if errors.Is(err, down) {
					t.Error("the submodule's own sentinel reaches the parent's error")
				}
			}
			assertNothingLeft(t, filepath.Dir(dest))
		})
	}
}

// A link into a submodule this pass did not fetch needs it: the next pass,
// keeping that path, fetches it.
func TestLinkIntoUnfetchedSubmodule(t *testing.T) {
	t.Parallel()
	build := func(w *Writer) error {
		for _, err := range []error{
			file(w, ".gitmodules", gitmodulesLib),
			w.Gitlink("vendor/lib", libCommit),
			w.Symlink("plugin/skills", "../vendor/lib/skills"),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	}
	subs := newFakeSubmodules(t, nil)
	_, _, err := writeTree(t, Options{Budget: small, Paths: []string{"plugin"}, Submodules: subs.fetch}, build)
	var need *NeedsPathsError
	if !errors.As(err, &need) || strings.Join(need.Paths, " ") != "vendor/lib/skills" || len(subs.asked) != 0 {
		t.Fatalf("err = %v, asked %v", err, subs.asked)
	}
	dest, _, err := writeTree(t, Options{Budget: small, Paths: []string{"plugin", "vendor/lib/skills"}, Submodules: subs.fetch}, build)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFiles(t, dest); got["plugin/skills/s/SKILL.md"] != "skill" {
		t.Fatalf("files %v", got)
	}
}
