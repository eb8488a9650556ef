package fakegithub_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"

	"reasonix.io/plugind/internal/fakegithub"
)

// A submodule committed with Gitlink is a gitlink in the tree (what a
// clone's `git ls-tree` shows), and the contents API names the commit it
// pins, as GitHub's does; files and folders answer as GitHub's do.
func TestContentsAPIAndGitlinks(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	pinned := strings.Repeat("ab", 20)
	r := s.CreateRepo("acme", "tools")
	sha := r.Commit("main", map[string]string{
		".gitmodules":     "[submodule \"vendor/lib\"]\n\tpath = vendor/lib\n\turl = ../lib.git\n",
		"vendor/lib":      fakegithub.Gitlink(pinned),
		"docs/readme.md":  "hello\n",
		"docs/link.md":    fakegithub.Symlink("readme.md"),
		"plugin/tool.txt": "t\n",
	})
	gh := ghClient(t, s)
	ctx := testCtx(t)

	dir := t.TempDir()
	mustGit(t, dir, "clone", "-q", r.CloneURL(), "clone")
	if got := mustGit(t, dir+"/clone", "ls-tree", "HEAD", "vendor/lib"); got != "160000 commit "+pinned+"\tvendor/lib" {
		t.Fatalf("ls-tree = %q", got)
	}

	opt := &github.RepositoryContentGetOptions{Ref: sha}
	fc, _, _, err := gh.Repositories.GetContents(ctx, "acme", "tools", "vendor/lib", opt)
	if err != nil || fc.GetType() != "submodule" || fc.GetSHA() != pinned {
		t.Fatalf("submodule: %+v %v", fc, err)
	}
	fc, _, _, err = gh.Repositories.GetContents(ctx, "acme", "tools", "docs/readme.md", opt)
	if err != nil || fc.GetType() != "file" {
		t.Fatalf("file: %+v %v", fc, err)
	}
	if body, err := fc.GetContent(); err != nil || body != "hello\n" {
		t.Fatalf("file content %q %v", body, err)
	}
	fc, _, _, err = gh.Repositories.GetContents(ctx, "acme", "tools", "docs/link.md", &github.RepositoryContentGetOptions{Ref: "main"})
	if err != nil || fc.GetType() != "symlink" || fc.GetTarget() != "readme.md" {
		t.Fatalf("symlink: %+v %v", fc, err)
	}
	_, list, _, err := gh.Repositories.GetContents(ctx, "acme", "tools", "docs", opt)
	if err != nil || len(list) != 2 || list[0].GetName() != "link.md" || list[1].GetType() != "file" {
		t.Fatalf("folder: %v %v", list, err)
	}
	_, _, resp, err := gh.Repositories.GetContents(ctx, "acme", "tools", "vendor/none", opt)
	if err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("missing path: %v", err)
	}
	_, _, resp, err = gh.Repositories.GetContents(ctx, "acme", "tools", "docs", &github.RepositoryContentGetOptions{Ref: "no-such-branch"})
	if err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("missing ref: %v", err)
	}
	if c := s.Counts(); c.APIContents != 6 || c.API() != 6 {
		t.Fatalf("counts = %+v", c)
	}
}
