package fakegithub_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// realRepo builds a work tree with a history of its own (default branch
// "trunk", an executable file, an annotated tag, a side branch) the way a
// fetched public repository has one, and returns its directory with the
// SHAs of its first and last commit on trunk.
func realRepo(t *testing.T) (dir, first, head string) {
	t.Helper()
	dir = t.TempDir()
	mustGit(t, dir, "init", "--quiet", "--initial-branch=trunk", ".")
	mustGit(t, dir, "config", "user.name", "Someone Real")
	mustGit(t, dir, "config", "user.email", "someone@example.test")
	write := func(name, content string, mode os.FileMode) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("plugins/a/README.md", "first\n", 0o644)
	mustGit(t, dir, "add", "-A")
	mustGit(t, dir, "commit", "--quiet", "-m", "first")
	first = mustGit(t, dir, "rev-parse", "HEAD")
	mustGit(t, dir, "tag", "-a", "v1.0.0", "-m", "release", first)
	mustGit(t, dir, "checkout", "--quiet", "-b", "side")
	write("side.txt", "side\n", 0o644)
	mustGit(t, dir, "add", "-A")
	mustGit(t, dir, "commit", "--quiet", "-m", "side")
	mustGit(t, dir, "checkout", "--quiet", "trunk")
	write("plugins/a/run.sh", "#!/bin/sh\necho hi\n", 0o755)
	mustGit(t, dir, "add", "-A")
	mustGit(t, dir, "commit", "--quiet", "-m", "second")
	head = mustGit(t, dir, "rev-parse", "HEAD")
	return dir, first, head
}

func TestImportGitDirKeepsHistory(t *testing.T) {
	t.Parallel()
	src, first, head := realRepo(t)
	bare := filepath.Join(t.TempDir(), "bare.git")
	mustGit(t, t.TempDir(), "clone", "--quiet", "--bare", src, bare)
	tests := []struct{ name, path, gitDir string }{
		{"work tree", "acme/worktree", src},
		{"bare repository", "acme/bare", bare},
		{"a work tree's .git", "acme/dotgit", filepath.Join(src, ".git")},
	}
	s := fakegithub.New(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := s.ImportGitDir(tt.path, tt.gitDir)
			if err != nil {
				t.Fatal(err)
			}
			if r.DefaultBranch() != "trunk" || r.Head("trunk") != head || r.Path() != tt.path {
				t.Fatalf("default %q, trunk %q, path %q; want trunk, %s", r.DefaultBranch(), r.Head("trunk"), r.Path(), head)
			}
			// The REST API answers with the real default branch and the real
			// SHAs, old commits included.
			var repo struct {
				DefaultBranch string `json:"default_branch"`
			}
			getJSON(t, s.APIURL+"/repos/"+tt.path, &repo)
			var commit struct {
				SHA string `json:"sha"`
			}
			getJSON(t, s.APIURL+"/repos/"+tt.path+"/commits/"+first, &commit)
			if repo.DefaultBranch != "trunk" || commit.SHA != first {
				t.Fatalf("API: default_branch %q, commits/%s → %q", repo.DefaultBranch, first, commit.SHA)
			}
			// A git client sees every branch and tag with its SHA, the
			// executable bit, and may fetch a pinned older commit by SHA.
			dir := t.TempDir()
			mustGit(t, dir, "clone", "--quiet", r.CloneURL(), "c")
			c := filepath.Join(dir, "c")
			if got := mustGit(t, c, "rev-parse", "HEAD", "v1.0.0^{commit}", "origin/side"); got != head+"\n"+first+"\n"+mustGit(t, src, "rev-parse", "side") {
				t.Fatalf("clone: HEAD, v1.0.0, side = %q", got)
			}
			if info, err := os.Stat(filepath.Join(c, "plugins/a/run.sh")); err != nil || info.Mode()&0o111 == 0 {
				t.Fatalf("run.sh lost its executable bit: %v %v", info, err)
			}
			pin := t.TempDir()
			mustGit(t, pin, "init", "--quiet", ".")
			mustGit(t, pin, "fetch", "--quiet", "--depth=1", r.CloneURL(), first)
			if got := mustGit(t, pin, "rev-parse", "FETCH_HEAD"); got != first {
				t.Fatalf("fetch by SHA: FETCH_HEAD %q, want %s", got, first)
			}
		})
	}
	// The fake writes to its copy, never to the original.
	s.Repo("acme", "worktree").Commit("trunk", map[string]string{"new": "x"})
	if got := mustGit(t, src, "rev-parse", "trunk"); got != head {
		t.Fatalf("the source moved to %s after a commit on the fake's copy", got)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func TestImportGitDirRefuses(t *testing.T) {
	t.Parallel()
	src, _, head := realRepo(t)
	detached, _, _ := realRepo(t)
	mustGit(t, detached, "checkout", "--quiet", "--detach", "HEAD")
	unborn := t.TempDir()
	mustGit(t, unborn, "init", "--quiet", "--initial-branch=main", ".")
	notGit := t.TempDir()
	file := filepath.Join(notGit, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := fakegithub.New(t)
	if _, err := s.ImportGitDir("acme/taken", src); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path, gitDir, want string }{
		{"missing directory", "acme/a", filepath.Join(notGit, "nope"), "no such file"},
		{"a file", "acme/b", file, "not a directory"},
		{"not a repository", "acme/c", notGit, "not a git repository"},
		{"nested path on GitHub", "group/sub/tools", src, "not a valid GitHub owner/name"},
		{"path taken", "ACME/taken", src, "already exists"},
		{"detached HEAD", "acme/detached", detached, "HEAD is not a branch"},
		{"no commit yet", "acme/unborn", unborn, `HEAD names branch "main", which does not exist`},
	}
	for _, tt := range tests {
		_, err := s.ImportGitDir(tt.path, tt.gitDir)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.gitDir) {
			t.Errorf("%s: ImportGitDir(%q, %q) = %v; want an error naming the directory and %q", tt.name, tt.path, tt.gitDir, err, tt.want)
		}
	}
	// A failed import leaves its path free and nothing served there.
	if s.Repo("acme", "detached") != nil {
		t.Fatal("a failed import left a repository behind")
	}
	mustGit(t, detached, "checkout", "--quiet", "trunk")
	if r, err := s.ImportGitDir("acme/detached", detached); err != nil || r.Head("trunk") == "" {
		t.Fatalf("re-import after a failure: %v", err)
	}
	if s.Repo("acme", "taken").Head("trunk") != head {
		t.Fatal("a refused duplicate import changed the first one")
	}
}
