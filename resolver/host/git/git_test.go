package git

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/resolver/source"
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
// serves fork-network commits, is refused over git.
func TestFetchUnreachable(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(t)
	r := fake.CreateRepo("acme", "tools")
	r.Commit("main", map[string]string{"a": "1"})
	hidden := r.Commit("tmp", map[string]string{"evil": "x"})
	r.DeleteBranch("tmp")
	repo := newRepo(t, fake, "acme", "tools")
	_, err := repo.Fetch(context.Background(), hidden, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{Verify: true})
	if !errors.Is(err, host.ErrUnreachable) || plugind.CodeOf(err) != plugind.CodeNotFound {
		t.Fatalf("unreachable commit: %v", err)
	}
	if err := repo.Reachable(context.Background(), hidden, ""); !errors.Is(err, host.ErrUnreachable) {
		t.Errorf("Reachable = %v", err)
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
	tests := []struct {
		name    string
		entries []rawEntry
	}{
		{"symlink beside folder", []rawEntry{
			{mode: "120000", name: "a", content: outside},
			{mode: "040000", name: "a", entries: []rawEntry{{mode: "100644", name: "pwned", content: "x"}}},
		}},
		{"case collision", []rawEntry{{mode: "100644", name: "README.md", content: "1"}, {mode: "100644", name: "readme.md", content: "2"}}},
		{"kelvin sign", []rawEntry{{mode: "100644", name: "k.md", content: "1"}, {mode: "100644", name: "\u212a.md", content: "2"}}},
		{"dot dot", []rawEntry{{mode: "100644", name: "..", content: "1"}}},
		{"escaping link", []rawEntry{{mode: "120000", name: "l", content: "../../etc/passwd"}}},
		{"absolute link", []rawEntry{{mode: "120000", name: "l", content: "/etc/passwd"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakegithub.New(t)
			r := fake.CreateRepo("acme", "tools")
			r.Commit("main", map[string]string{"ok": "1"})
			sha := rawCommit(t, r.Dir(), "main", tt.entries)
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

type rawEntry struct {
	mode, name, content string
	entries             []rawEntry
}

// rawCommit builds a tree verbatim (git hash-object --literally, which
// checks nothing) and commits it on branch.
func rawCommit(t *testing.T, gitDir, branch string, entries []rawEntry) string {
	t.Helper()
	tree := rawTree(t, gitDir, entries)
	sha := gitOut(t, gitDir, nil, "commit-tree", tree, "-m", "hostile")
	gitOut(t, gitDir, nil, "update-ref", "refs/heads/"+branch, sha)
	return sha
}

func rawTree(t *testing.T, gitDir string, entries []rawEntry) string {
	var buf []byte
	for _, e := range entries {
		var h string
		if e.mode == "040000" {
			h = rawTree(t, gitDir, e.entries)
		} else {
			h = gitOut(t, gitDir, strings.NewReader(e.content), "hash-object", "-w", "--stdin")
		}
		buf = append(buf, []byte(e.mode[strings.IndexFunc(e.mode, func(r rune) bool { return r != '0' }):]+" "+e.name+"\x00")...)
		buf = append(buf, hexBytes(t, h)...)
	}
	return gitOut(t, gitDir, strings.NewReader(string(buf)), "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
}

func gitOut(t *testing.T, gitDir string, stdin *strings.Reader, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir=" + gitDir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if stdin != nil {
		cmd.Stdin = stdin
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func hexBytes(t *testing.T, h string) []byte {
	out := make([]byte, len(h)/2)
	for i := range out {
		var b byte
		for _, c := range h[2*i : 2*i+2] {
			b <<= 4
			switch {
			case c >= '0' && c <= '9':
				b |= byte(c - '0')
			case c >= 'a' && c <= 'f':
				b |= byte(c - 'a' + 10)
			default:
				t.Fatalf("bad hex %q", h)
			}
		}
		out[i] = b
	}
	return out
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
