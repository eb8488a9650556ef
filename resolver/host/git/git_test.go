package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

func newRepo(t *testing.T, fake *fakegithub.Server, owner, name string) *Repo {
	t.Helper()
	src, err := source.Parse("git:github.com/" + owner + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return New(src, Config{URL: fake.URL + "/" + owner + "/" + name + ".git"})
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			t.Errorf("%s is a symlink: the writer must never create one", p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, _ := d.Info()
		if info.Mode()&0o111 != 0 {
			rel += "*"
		}
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRefsAndResolve(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(t)
	r := fake.CreateRepo("acme", "tools")
	c1 := r.Commit("main", map[string]string{"a.txt": "one"})
	r.Tag("v1", c1)
	c2 := r.Commit("release/v2", map[string]string{"a.txt": "two"})
	r.AnnotatedTag("v2", c2, "release two")
	repo := newRepo(t, fake, "acme", "tools")
	ctx := context.Background()
	refs, err := repo.Refs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if refs.Head != "main" || refs.Commits["HEAD"] != c1 || refs.Commits["release/v2"] != c2 || refs.Commits["v2"] != c2 || refs.Commits["v1"] != c1 {
		t.Errorf("refs = %+v", refs)
	}
	for ref, want := range map[string]string{"": c1, "main": c1, "v2": c2, "release/v2": c2, c2: c2} {
		pin, err := repo.Resolve(ctx, ref, nil)
		if err != nil || pin.SHA != want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", ref, pin.SHA, err, want)
		}
	}
	_, err = repo.Resolve(ctx, "nope", nil)
	if !errors.Is(err, host.ErrRefNotFound) || plugind.CodeOf(err) != plugind.CodeNotFound {
		t.Errorf("missing ref: %v", err)
	}
	missing := newRepo(t, fake, "acme", "missing")
	_, err = missing.Refs(ctx)
	if !errors.Is(err, host.ErrRepoNotFound) || plugind.CodeOf(err) != plugind.CodeNotFound {
		t.Errorf("missing repo: %v", err)
	}
}

func TestFetch(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(t)
	r := fake.CreateRepo("acme", "tools")
	first := r.Commit("main", map[string]string{
		"README.md":         "hello",
		"bin/run":           fakegithub.Executable("#!/bin/sh\n"),
		"plugins/x/a.md":    "x",
		"plugins/x/link.md": fakegithub.Symlink("../../README.md"),
		"plugins/y/b.md":    "y",
	})
	r.Commit("main", map[string]string{"README.md": "changed"})
	repo := newRepo(t, fake, "acme", "tools")
	ctx := context.Background()

	dest := filepath.Join(t.TempDir(), "tree")
	got, err := repo.Fetch(ctx, first, dest, host.FetchOptions{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Verified || got.Transport != "git" || got.Files != 5 {
		t.Errorf("fetched = %+v", got)
	}
	want := map[string]string{"README.md": "hello", "bin/run*": "#!/bin/sh\n", "plugins/x/a.md": "x", "plugins/x/link.md": "hello", "plugins/y/b.md": "y"}
	if tree := readTree(t, dest); !equal(tree, want) {
		t.Errorf("tree = %v, want %v", tree, want)
	}
	if _, err := os.Stat(dest + ".git"); !os.IsNotExist(err) {
		t.Errorf("scratch object store left behind: %v", err)
	}

	// Only one folder: the rest is name-checked, not written.
	dest2 := filepath.Join(t.TempDir(), "tree")
	if _, err := repo.Fetch(ctx, first, dest2, host.FetchOptions{Paths: []string{"plugins/y"}}); err != nil {
		t.Fatal(err)
	}
	if tree := readTree(t, dest2); !equal(tree, map[string]string{"plugins/y/b.md": "y"}) {
		t.Errorf("partial tree = %v", tree)
	}
}

// A commit in the object store that no branch or tag reaches, as GitHub
// serves fork-network commits, is refused — whether the server refuses to
// send it or, like git's protocol v2 and hosts that serve any object by id,
// sends it anyway.
func TestFetchUnreachable(t *testing.T) {
	t.Parallel()
	for _, serves := range []bool{false, true} {
		t.Run(fmt.Sprintf("server serves it %v", serves), func(t *testing.T) {
			t.Parallel()
			fake := fakegithub.New(t)
			fake.ServeUnreachableWants(serves)
			r := fake.CreateRepo("acme", "tools")
			old := r.Commit("main", map[string]string{"a": "1"})
			r.Commit("main", map[string]string{"a": "2"})
			hidden := r.CommitUnreachable("", map[string]string{"evil": "x"})
			repo := newRepo(t, fake, "acme", "tools")
			ctx := context.Background()
			_, err := repo.Fetch(ctx, hidden, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{Verify: true})
			if !errors.Is(err, host.ErrUnreachable) || plugind.CodeOf(err) != plugind.CodeNotFound {
				t.Fatalf("unreachable commit: %v", err)
			}
			if err := repo.Reachable(ctx, hidden, ""); !errors.Is(err, host.ErrUnreachable) {
				t.Errorf("Reachable(hidden) = %v", err)
			}
			// An ancestor of a branch is reachable, though not a tip.
			if err := repo.Reachable(ctx, old, ""); err != nil {
				t.Errorf("Reachable(old) = %v", err)
			}
			got, err := repo.Fetch(ctx, old, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{Verify: true})
			if err != nil || !got.Verified {
				t.Errorf("Fetch(old) = %+v, %v", got, err)
			}
		})
	}
}

// Plain git hosts (GitLab, Gitea…: no REST, repositories at any depth).
func TestPlainGitHost(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(t, fakegithub.WithPlainGit())
	r := fake.CreateRepoAt("group/sub/tools")
	c1 := r.Commit("main", map[string]string{"plugin/a.md": "v1"})
	r.Tag("v1.2", c1)
	r.Commit("main", map[string]string{"plugin/a.md": "v2"})
	src, err := source.Parse("https://git.example.test/group/sub/tools.git#v1.2")
	if err != nil {
		t.Fatal(err)
	}
	repo := New(src, Config{URL: fake.URL + "/group/sub/tools.git"})
	ctx := context.Background()
	pin, err := repo.Resolve(ctx, src.Ref, nil)
	if err != nil || pin.SHA != c1 {
		t.Fatalf("Resolve(v1.2) = %v, %v; want %s", pin.SHA, err, c1)
	}
	dest := filepath.Join(t.TempDir(), "tree")
	if _, err := repo.Fetch(ctx, c1, dest, host.FetchOptions{Verify: true}); err != nil {
		t.Fatal(err)
	}
	if tree := readTree(t, dest); tree["plugin/a.md"] != "v1" {
		t.Errorf("tree = %v", tree)
	}
	if c := fake.RepoCountsAt("group/sub/tools"); c.API() != 0 || c.Archive != 0 {
		t.Errorf("plain git host asked for REST or archives: %+v", c)
	}
}

// A server that allows no SHA wants gets every branch and tag with history,
// which proves reachability by construction.
func TestFetchWithoutSHAWants(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(t)
	fake.RefuseSHAWants(true)
	r := fake.CreateRepo("acme", "tools")
	old := r.Commit("main", map[string]string{"a": "1"})
	r.Commit("main", map[string]string{"a": "2"})
	hidden := r.Commit("tmp", map[string]string{"a": "3"})
	r.DeleteBranch("tmp")
	repo := newRepo(t, fake, "acme", "tools")
	dest := filepath.Join(t.TempDir(), "tree")
	if _, err := repo.Fetch(context.Background(), old, dest, host.FetchOptions{Verify: true}); err != nil {
		t.Fatal(err)
	}
	if tree := readTree(t, dest); tree["a"] != "1" {
		t.Errorf("tree = %v", tree)
	}
	if _, err := repo.Fetch(context.Background(), hidden, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{}); !errors.Is(err, host.ErrUnreachable) {
		t.Errorf("hidden commit: %v", err)
	}
}

func TestFetchBudget(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(t)
	r := fake.CreateRepo("acme", "tools")
	sha := r.Commit("main", map[string]string{"big.bin": strings.Repeat("z", 300<<10), "plugin/a.md": "a"})
	repo := newRepo(t, fake, "acme", "tools")
	budget := plugind.Budget{MaxBytes: 100 << 10, MaxFiles: 100}
	parent := t.TempDir()
	_, err := repo.Fetch(context.Background(), sha, filepath.Join(parent, "tree"), host.FetchOptions{Budget: budget})
	if plugind.CodeOf(err) != plugind.CodeBudgetExceeded {
		t.Fatalf("over budget: %v", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
	// The plugin's own folder fits: only it counts.
	dest := filepath.Join(t.TempDir(), "tree")
	if _, err := repo.Fetch(context.Background(), sha, dest, host.FetchOptions{Budget: budget, Paths: []string{"plugin"}}); err != nil {
		t.Fatalf("plugin folder within budget: %v", err)
	}
}

// Hostile trees that honest git never makes: a symlink "a" beside a folder
// "a/" (the write-through attack), names that collide by case or Unicode
// folding, "..". Each is refused as unsafe and nothing is written anywhere.
func TestFetchHostileTrees(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	type raw = fakegithub.RawEntry
	tests := []struct {
		name    string
		entries []raw
	}{
		{"symlink beside folder", []raw{
			{Mode: "120000", Name: "a", Content: outside},
			{Mode: "040000", Name: "a", Entries: []raw{{Mode: "100644", Name: "pwned", Content: "x"}}},
		}},
		{"relative symlink beside folder", []raw{
			{Mode: "120000", Name: "a", Content: "../../../../../../../../../.." + outside},
			{Mode: "040000", Name: "a", Entries: []raw{{Mode: "100644", Name: "pwned", Content: "x"}}},
		}},
		{"case collision", []raw{{Mode: "100644", Name: "README.md", Content: "1"}, {Mode: "100644", Name: "readme.md", Content: "2"}}},
		{"kelvin sign", []raw{{Mode: "100644", Name: "k.md", Content: "1"}, {Mode: "100644", Name: "\u212a.md", Content: "2"}}},
		{"nfd and nfc", []raw{{Mode: "100644", Name: "caf\u00e9", Content: "1"}, {Mode: "100644", Name: "cafe\u0301", Content: "2"}}},
		{"duplicate", []raw{{Mode: "100644", Name: "x", Content: "1"}, {Mode: "100644", Name: "x", Content: "2"}}},
		{"dot dot", []raw{{Mode: "100644", Name: "..", Content: "1"}}},
		{"slash in name", []raw{{Mode: "100644", Name: "../escape", Content: "1"}}},
		{"escaping link", []raw{{Mode: "120000", Name: "l", Content: "../../etc/passwd"}}},
		{"absolute link", []raw{{Mode: "120000", Name: "l", Content: "/etc/passwd"}}},
		{"link to its own folder", []raw{{Mode: "120000", Name: "l", Content: "."}, {Mode: "040000", Name: "d", Entries: []raw{{Mode: "100644", Name: "f", Content: "1"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakegithub.New(t)
			r := fake.CreateRepo("acme", "tools")
			r.Commit("main", map[string]string{"ok": "1"})
			sha := r.CommitRawTree("main", tt.entries)
			repo := newRepo(t, fake, "acme", "tools")
			parent := t.TempDir()
			_, err := repo.Fetch(context.Background(), sha, filepath.Join(parent, "tree"), host.FetchOptions{})
			if plugind.CodeOf(err) != plugind.CodeUnsafeArchive {
				t.Fatalf("code = %q (%v), want unsafe_archive", plugind.CodeOf(err), err)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("left behind: %v", ents)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Errorf("written outside: %v", ents)
			}
		})
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
