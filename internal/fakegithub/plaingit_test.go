package fakegithub_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/storage/memory"

	"reasonix.io/plugind/internal/fakegithub"
)

func TestPlainGitRepositories(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t, fakegithub.WithPlainGit())
	if !s.PlainGit() || s.APIURL != "" || s.Env() != nil {
		t.Fatalf("plain server: PlainGit %v, APIURL %q, Env %v", s.PlainGit(), s.APIURL, s.Env())
	}
	tests := []struct {
		path, owner, name string
	}{
		{"tools", "", "tools"},
		{"team/tools", "team", "tools"},
		{"group/sub/tools", "group/sub", "tools"},
		{"group/sub", "group", "sub"}, // a project beside a subgroup of the same name
	}
	for i, tt := range tests {
		r := s.CreateRepoAt(tt.path)
		if r.Owner != tt.owner || r.Name != tt.name || r.Path() != tt.path || r.CloneURL() != s.URL+"/"+tt.path+".git" {
			t.Fatalf("%s: owner %q name %q path %q url %q", tt.path, r.Owner, r.Name, r.Path(), r.CloneURL())
		}
		first := r.Commit("main", map[string]string{"README.md": tt.path + "\n"})
		head := r.Commit("main", map[string]string{"v2": "2\n"})
		r.Tag("v1.2", first)
		// Each repository is cloned through another spelling of its URL.
		url := []string{r.CloneURL(), s.URL + "/" + tt.path, s.URL + "/" + strings.ToUpper(tt.path) + ".git"}[i%3]
		dir := t.TempDir()
		mustGit(t, dir, "clone", "--quiet", url, "c")
		if got := mustGit(t, filepath.Join(dir, "c"), "rev-parse", "HEAD", "v1.2"); got != head+"\n"+first {
			t.Fatalf("clone %s: HEAD, v1.2 = %q", url, got)
		}
		if got := mustGit(t, filepath.Join(dir, "c"), "show", "HEAD:README.md"); got != tt.path {
			t.Fatalf("clone %s: README = %q, another repository's?", url, got)
		}
		if c := s.RepoCountsAt(strings.ToUpper(tt.path)); c.InfoRefs != 1 || c.UploadPack < 1 || c.Other != 0 {
			t.Fatalf("%s: repo counts = %+v", tt.path, c)
		}
		if s.RepoAt(strings.ToUpper(tt.path)) != r {
			t.Fatalf("RepoAt(%q) is not the repository", strings.ToUpper(tt.path))
		}
	}
	// Fetch by a reachable SHA works; an unreachable one is refused, as on
	// GitHub.
	r := s.RepoAt("group/sub/tools")
	dir := t.TempDir()
	mustGit(t, dir, "init", "--quiet", ".")
	mustGit(t, dir, "fetch", "--quiet", "--depth=1", r.CloneURL(), mustGit(t, r.Dir(), "rev-parse", "main^"))
	hidden := r.CommitUnreachable("", map[string]string{"x": "1"})
	if out, err := gitCLI(t, dir, "fetch", "--depth=1", r.CloneURL(), hidden); err == nil {
		t.Fatalf("fetched an unreachable commit: %s", out)
	}
	if s.Repo("team", "tools") != s.RepoAt("team/tools") || s.RepoCounts("team", "tools") != s.RepoCountsAt("team/tools") {
		t.Fatal("Repo/RepoCounts and RepoAt/RepoCountsAt disagree on owner/name")
	}

	// go-git, the product's client, clones a nested path too.
	repo, err := git.CloneContext(testCtx(t), memory.NewStorage(), nil, &git.CloneOptions{URL: s.URL + "/group/sub/tools"})
	if err != nil {
		t.Fatalf("go-git clone: %v", err)
	}
	if h, err := repo.Head(); err != nil || h.Name() != "refs/heads/main" {
		t.Fatalf("go-git HEAD = %v, %v", h, err)
	}
}

func TestPlainGitHasNoAPIOrArchives(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t, fakegithub.WithPlainGit())
	r := s.CreateRepoAt("team/tools")
	sha := r.Commit("main", map[string]string{"a": "1"})
	paths := []string{
		"/api/v3/repos/team/tools",
		"/api/v3/repos/team/tools/commits/main",
		"/api/v3/repos/team/tools/tarball/main",
		"/_archive/team/tools/" + sha + ".tar.gz",
		"/team/tools",
		"/team/tools.git/HEAD", // dumb HTTP
		"/team/../tools.git/info/refs",
	}
	for _, p := range paths {
		status, _, body := get(t, s.URL+p)
		if status != http.StatusNotFound || strings.Contains(string(body), "message") {
			t.Errorf("%s: %d %q, want a plain 404", p, status, body)
		}
	}
	if c := s.Counts(); c.Other != len(paths) || c.API() != 0 || c.Archive != 0 || c.Total != len(paths) {
		t.Fatalf("counts = %+v", c)
	}
	if status, _, _ := get(t, s.URL+"/missing/repo.git/info/refs?service=git-upload-pack"); status != http.StatusNotFound {
		t.Fatalf("unknown repository: %d", status)
	}
}

func TestPlainGitImportDirAt(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t, fakegithub.WithPlainGit())
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "reasonix-plugin.json"), "{}")
	r, sha, err := s.ImportDirAt("group/sub/tools", dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Head("main") != sha || treeOf(t, r, sha) != "reasonix-plugin.json={}" {
		t.Fatalf("imported %s: %q", sha, treeOf(t, r, sha))
	}
	if _, _, err := s.ImportDirAt("group/../x", dir); err == nil {
		t.Fatal("import at a path with .. succeeded")
	}
	gh := fakegithub.New(t)
	if _, _, err := gh.ImportDirAt("group/sub/tools", dir); err == nil {
		t.Fatal("a GitHub server accepted a nested path")
	}
	if _, _, err := gh.ImportDirAt("acme/tools", dir); err != nil {
		t.Fatalf("ImportDirAt(owner/name) on GitHub: %v", err)
	}
}

// Both hosts advertise HEAD as a symref to the default branch, in both
// protocols, as git does: a client without #REF follows it.
func TestHeadSymrefAdvertised(t *testing.T) {
	t.Parallel()
	for _, plain := range []bool{false, true} {
		var opts []fakegithub.Option
		if plain {
			opts = append(opts, fakegithub.WithPlainGit())
		}
		s := fakegithub.New(t, opts...)
		r := s.CreateRepoAt("team/tools")
		sha := r.Commit("main", map[string]string{"a": "1"})
		r.ResetBranch("trunk", sha)
		for _, branch := range []string{"main", "trunk"} {
			r.SetDefaultBranch(branch)
			for _, proto := range []string{"0", "2"} {
				out := mustGit(t, t.TempDir(), "-c", "protocol.version="+proto, "ls-remote", "--symref", r.CloneURL(), "HEAD")
				want := "ref: refs/heads/" + branch + "\tHEAD\n" + sha + "\tHEAD"
				if out != want {
					t.Errorf("plain=%v v%s default %s: ls-remote = %q, want %q", plain, proto, branch, out, want)
				}
			}
		}
	}
}
