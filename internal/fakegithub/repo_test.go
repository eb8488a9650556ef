package fakegithub_test

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"

	"reasonix.io/plugind/internal/fakegithub"
)

// treeOf lists path=content of a commit in the bare repository.
func treeOf(t *testing.T, r *fakegithub.Repo, sha string) string {
	t.Helper()
	repo, err := git.PlainOpen(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range mustFiles(t, tree) {
		content, err := f.Contents()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f.Name+"="+content)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func TestCommitSemantics(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r := s.CreateRepo("acme", "tools")
	if h := r.Head("main"); h != "" {
		t.Fatalf("empty repo head = %q", h)
	}
	base := r.Commit("main", map[string]string{"a": "1", "dir/b": "2"})
	tests := []struct {
		name string
		do   func() string
		want string
	}{
		{"overlay", func() string { return r.Commit("main", map[string]string{"c": "3", "a": "1b"}) }, "a=1b c=3 dir/b=2"},
		{"deleted value", func() string { return r.Commit("main", map[string]string{"c": fakegithub.Deleted}) }, "a=1b dir/b=2"},
		{"Delete", func() string { return r.Delete("main", "dir/b") }, "a=1b"},
		{"replace", func() string {
			return r.CommitTree("main", []fakegithub.File{{Path: "only", Content: "x", Mode: 0o755}}, true)
		}, "only=x"},
		{"new branch starts at default head", func() string { return r.Commit("feature/x", map[string]string{"f": "4"}) }, "f=4 only=x"},
		{"odd paths", func() string {
			return r.CommitTree("odd", []fakegithub.File{{Path: "\"quoted\" name"}, {Path: "sp ace/\u00fcn\u00ef\\.txt", Content: "n"}}, true)
		}, "\"quoted\" name= sp ace/\u00fcn\u00ef\\.txt=n"},
	}
	prev := base
	for _, tt := range tests {
		sha := tt.do()
		if got := treeOf(t, r, sha); got != tt.want {
			t.Errorf("%s: tree = %q, want %q", tt.name, got, tt.want)
		}
		if sha == prev {
			t.Errorf("%s: no new commit", tt.name)
		}
		prev = sha
	}
	if got := r.Head("feature/x"); got == "" || got == r.Head("main") {
		t.Fatalf("feature/x head = %q", got)
	}
}

func TestDeterministicSHAs(t *testing.T) {
	t.Parallel()
	build := func() []string {
		s := fakegithub.New(t)
		r := s.CreateRepo("acme", "tools")
		a := r.Commit("main", map[string]string{"x": "1", "run": fakegithub.Executable("#!/bin/sh\n")})
		b := r.Commit("main", map[string]string{"x": "1"}) // same tree: still a new commit
		r.AnnotatedTag("v1", a, "v1\n")
		c := r.Commit("dev", map[string]string{"y": "2"})
		return []string{a, b, c}
	}
	one, two := build(), build()
	if strings.Join(one, ",") != strings.Join(two, ",") {
		t.Fatalf("SHAs differ between runs: %v vs %v", one, two)
	}
	if one[0] == one[1] {
		t.Fatal("two commits share a SHA")
	}
}

func TestRefsHelpers(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r, first, head := newToolsRepo(t, s)

	r.SetDefaultBranch("stable")
	r.ResetBranch("stable", first)
	repo, err := git.CloneContext(testCtx(t), memory.NewStorage(), nil, &git.CloneOptions{URL: r.CloneURL()})
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := repo.Head(); h.Name() != "refs/heads/stable" || h.Hash().String() != first {
		t.Fatalf("clone HEAD = %v, want stable at %s", h, first)
	}

	r.ResetBranch("main", first) // a force push backwards
	if got := r.Head("main"); got != first {
		t.Fatalf("main after reset = %s", got)
	}
	r.DeleteBranch("stable")
	if got := r.Head("stable"); got != "" {
		t.Fatalf("deleted branch head = %s", got)
	}
	r.Tag("v1", head)
	r.DeleteTag("v1")
	refs, err := git.PlainOpen(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := refs.Reference("refs/tags/v1", false); err == nil {
		t.Fatal("tag v1 still present")
	}
	// The orphaned commit stays fetchable by SHA, as on GitHub.
	if status, _, body := get(t, s.APIURL+"/repos/acme/tools/commits/"+head, "Accept", "application/vnd.github.sha"); status != 200 || string(body) != head {
		t.Fatalf("unreachable commit via API: %d %q", status, body)
	}
	if s.Repo("ACME", "TOOLS") != r {
		t.Fatal("Repo lookup is not case-insensitive")
	}
}

func TestImportDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for p, c := range map[string]string{"reasonix-plugin.json": "{}", "skills/a/SKILL.md": "# a", ".git/config": "ignored"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "hook.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := fakegithub.New(t)
	r, sha, err := s.ImportDir("acme", "tools", dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := treeOf(t, r, sha); got != "hook.sh=#!/bin/sh\n reasonix-plugin.json={} skills/a/SKILL.md=# a" {
		t.Fatalf("imported tree = %q", got)
	}
	if r.Head("main") != sha {
		t.Fatal("import is not main's head")
	}
	if _, _, err := s.ImportDir("acme", "tools", dir); err == nil {
		t.Fatal("second import of the same repo succeeded")
	}
	if _, _, err := s.ImportDir("acme", "bad name", dir); err == nil {
		t.Fatal("import under an invalid name succeeded")
	}
}

// BenchmarkCreateRepoAndCommit is what a marketplace test pays per
// repository: one git init and one fast-import.
func BenchmarkCreateRepoAndCommit(b *testing.B) {
	s := fakegithub.New(b)
	for i := 0; b.Loop(); i++ {
		r := s.CreateRepo("acme", "repo"+strconv.Itoa(i))
		r.Commit("main", map[string]string{"reasonix-plugin.json": "{}", "skills/a/SKILL.md": "# a\n"})
	}
}
