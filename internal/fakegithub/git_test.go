package fakegithub_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"

	"reasonix.io/plugind/internal/fakegithub"
)

func TestGoGitClone(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	_, _, head := newToolsRepo(t, s)
	for _, url := range []string{s.URL + "/acme/tools", s.URL + "/acme/tools.git", s.URL + "/ACME/Tools.git"} {
		repo, err := git.CloneContext(testCtx(t), memory.NewStorage(), nil, &git.CloneOptions{URL: url, Tags: git.NoTags})
		if err != nil {
			t.Fatalf("clone %s: %v", url, err)
		}
		ref, err := repo.Head()
		if err != nil {
			t.Fatal(err)
		}
		if ref.Hash().String() != head || ref.Name() != "refs/heads/main" {
			t.Fatalf("clone %s: HEAD = %s %s, want refs/heads/main %s", url, ref.Name(), ref.Hash(), head)
		}
		c, err := repo.CommitObject(ref.Hash())
		if err != nil {
			t.Fatal(err)
		}
		tree, err := c.Tree()
		if err != nil {
			t.Fatal(err)
		}
		modes := map[string]filemode.FileMode{}
		for _, e := range mustFiles(t, tree) {
			modes[e.Name] = e.Mode
		}
		want := map[string]filemode.FileMode{
			"README.md": filemode.Regular, ".claude-plugin/plugin.json": filemode.Regular,
			"bin/run": filemode.Executable, "docs/link.md": filemode.Symlink, "CHANGELOG.md": filemode.Regular,
		}
		if len(modes) != len(want) {
			t.Fatalf("files = %v, want %v", modes, want)
		}
		for p, m := range want {
			if modes[p] != m {
				t.Errorf("%s: mode %v, want %v", p, modes[p], m)
			}
		}
	}
	c := s.RepoCounts("acme", "tools")
	if c.InfoRefs != 3 || c.UploadPack != 3 || c.Git() != 6 || c.Content() != 3 || c.Total != 6 {
		t.Fatalf("repo counts = %+v, want 3 info/refs and 3 upload-packs", c)
	}
}

func TestGoGitDepth1FetchBySHA(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	_, first, _ := newToolsRepo(t, s)

	st := memory.NewStorage()
	repo, err := git.Init(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{s.URL + "/acme/tools"}})
	if err != nil {
		t.Fatal(err)
	}
	// first is not a ref tip: this needs SHA wants, which GitHub allows.
	err = remote.FetchContext(testCtx(t), &git.FetchOptions{
		RefSpecs: []config.RefSpec{config.RefSpec("+" + first + ":refs/heads/x")},
		Depth:    1,
		Tags:     git.NoTags,
	})
	if err != nil {
		t.Fatalf("depth-1 fetch of %s: %v", first, err)
	}
	c, err := repo.CommitObject(plumbing.NewHash(first))
	if err != nil {
		t.Fatalf("fetched commit missing: %v", err)
	}
	if _, err := c.File("bin/run"); err != nil {
		t.Fatalf("fetched tree incomplete: %v", err)
	}
	shallow, err := st.Shallow()
	if err != nil {
		t.Fatal(err)
	}
	if len(shallow) != 1 || shallow[0].String() != first {
		t.Fatalf("shallow = %v, want [%s]", shallow, first)
	}
	if got := s.Counts().UploadPack; got != 1 {
		t.Fatalf("upload-packs = %d, want 1", got)
	}
}

func TestGoGitRefuseSHAWants(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	_, first, head := newToolsRepo(t, s)
	s.RefuseSHAWants(true)

	repo, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{s.URL + "/acme/tools"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, sha := range []string{first, head} {
		err = remote.FetchContext(testCtx(t), &git.FetchOptions{
			RefSpecs: []config.RefSpec{config.RefSpec("+" + sha + ":refs/heads/x")}, Depth: 1, Tags: git.NoTags,
		})
		if !errors.Is(err, git.ErrExactSHA1NotSupported) {
			t.Fatalf("fetch by SHA %s with SHA wants refused: err = %v, want ErrExactSHA1NotSupported", sha, err)
		}
	}
	// The resolver's fallback, fetching the branch, still works.
	err = remote.FetchContext(testCtx(t), &git.FetchOptions{
		RefSpecs: []config.RefSpec{"+refs/heads/main:refs/remotes/origin/main"}, Tags: git.NoTags,
	})
	if err != nil {
		t.Fatalf("branch fetch: %v", err)
	}
	if _, err := repo.CommitObject(plumbing.NewHash(first)); err != nil {
		t.Fatalf("full fetch lacks %s: %v", first, err)
	}

	s.RefuseSHAWants(false)
	err = remote.FetchContext(testCtx(t), &git.FetchOptions{
		RefSpecs: []config.RefSpec{config.RefSpec("+" + first + ":refs/heads/y")}, Depth: 1, Tags: git.NoTags,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		t.Fatalf("fetch by SHA after switching back: %v", err)
	}
}

func TestGitCLI(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	_, first, head := newToolsRepo(t, s)
	for _, proto := range []string{"0", "2"} {
		t.Run("protocol-v"+proto, func(t *testing.T) {
			dir := t.TempDir()
			cfg := "protocol.version=" + proto
			mustGit(t, dir, "-c", cfg, "clone", "--quiet", s.URL+"/acme/tools.git", "clone")
			clone := filepath.Join(dir, "clone")
			if got := mustGit(t, clone, "rev-parse", "HEAD"); got != head {
				t.Fatalf("clone HEAD = %s, want %s", got, head)
			}
			if got := mustGit(t, clone, "cat-file", "-p", "HEAD:bin/run"); !strings.Contains(got, "echo hi") {
				t.Fatalf("bin/run = %q", got)
			}

			shallow := filepath.Join(dir, "shallow")
			mustGit(t, dir, "init", "--quiet", shallow)
			mustGit(t, shallow, "-c", cfg, "fetch", "--quiet", "--depth=1", s.URL+"/acme/tools", first)
			if got := mustGit(t, shallow, "rev-parse", "FETCH_HEAD"); got != first {
				t.Fatalf("FETCH_HEAD = %s, want %s", got, first)
			}
		})
	}
}

func TestGitCLIRefuseSHAWants(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	_, first, head := newToolsRepo(t, s)
	s.RefuseSHAWants(true)
	for _, proto := range []string{"0", "2"} {
		t.Run("protocol-v"+proto, func(t *testing.T) {
			dir := t.TempDir()
			cfg := "protocol.version=" + proto
			mustGit(t, dir, "init", "--quiet", ".")
			out, err := gitCLI(t, dir, "-c", cfg, "fetch", "--depth=1", s.URL+"/acme/tools", first)
			// v0 clients see the missing capability and refuse by themselves;
			// v2 clients ask and the server answers "not our ref".
			if err == nil || !(strings.Contains(out, "not our ref") || strings.Contains(out, "unadvertised object")) {
				t.Fatalf("fetch of non-tip %s: err = %v, output %q; want a refusal", first, err, out)
			}
			// A tip is an advertised ref: still allowed.
			mustGit(t, dir, "-c", cfg, "fetch", "--quiet", "--depth=1", s.URL+"/acme/tools", head)
		})
	}
}

func TestRefuseGit(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	newToolsRepo(t, s)
	s.RefuseGit(true)
	_, err := git.CloneContext(testCtx(t), memory.NewStorage(), nil, &git.CloneOptions{URL: s.URL + "/acme/tools"})
	if err == nil {
		t.Fatal("clone succeeded with git refused")
	}
	if status, _, _ := get(t, s.URL+"/acme/tools.git/info/refs?service=git-upload-pack"); status != http.StatusForbidden {
		t.Fatalf("info/refs status = %d, want 403", status)
	}
	if status, _, _ := get(t, s.APIURL+"/repos/acme/tools"); status != http.StatusOK {
		t.Fatalf("API status with git refused = %d, want 200", status)
	}
	s.RefuseGit(false)
	if _, err := git.CloneContext(testCtx(t), memory.NewStorage(), nil, &git.CloneOptions{URL: s.URL + "/acme/tools"}); err != nil {
		t.Fatalf("clone after RefuseGit(false): %v", err)
	}
	if c := s.Counts(); c.InfoRefs != 3 || c.UploadPack != 1 {
		t.Fatalf("counts = %+v: refused requests are still counted", c)
	}
}

func TestGitUnknownAndEmptyRepos(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	s.CreateRepo("acme", "empty")
	_, err := git.CloneContext(testCtx(t), memory.NewStorage(), nil, &git.CloneOptions{URL: s.URL + "/acme/missing"})
	if !errors.Is(err, transport.ErrRepositoryNotFound) {
		t.Fatalf("clone of missing repo: %v, want ErrRepositoryNotFound", err)
	}
	_, err = git.CloneContext(testCtx(t), memory.NewStorage(), nil, &git.CloneOptions{URL: s.URL + "/acme/empty"})
	if !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		t.Fatalf("clone of empty repo: %v, want ErrEmptyRemoteRepository", err)
	}
	if status, _, _ := get(t, s.URL+"/acme/empty.git/info/refs"); status != http.StatusForbidden {
		t.Fatalf("dumb-HTTP info/refs status = %d, want 403", status)
	}
}

func TestRequireToken(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	newToolsRepo(t, s)
	s.RequireToken("s3cret")
	if status, _, _ := get(t, s.APIURL+"/repos/acme/tools"); status != http.StatusUnauthorized {
		t.Fatalf("API without token = %d, want 401", status)
	}
	if status, _, _ := get(t, s.APIURL+"/repos/acme/tools", "Authorization", "Bearer s3cret"); status != http.StatusOK {
		t.Fatalf("API with token = %d, want 200", status)
	}
	_, err := git.CloneContext(testCtx(t), memory.NewStorage(), nil, &git.CloneOptions{URL: s.URL + "/acme/tools"})
	if !errors.Is(err, transport.ErrAuthenticationRequired) {
		t.Fatalf("clone without token: %v, want ErrAuthenticationRequired", err)
	}
	_, err = git.CloneContext(testCtx(t), memory.NewStorage(), nil, &git.CloneOptions{
		URL: s.URL + "/acme/tools", Auth: &githttp.BasicAuth{Username: "x-access-token", Password: "s3cret"},
	})
	if err != nil {
		t.Fatalf("clone with token: %v", err)
	}
}

func TestUploadPackV0RefusesUnadvertisedWant(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	_, first, _ := newToolsRepo(t, s)
	s.RefuseSHAWants(true)
	// A v0 client that ignores the missing capability, as old clients do.
	want := "want " + first + " side-band-64k\n"
	body := fmt.Sprintf("%04x%s0000%04xdone\n", len(want)+4, want, len("done\n")+4)
	resp, err := http.Post(s.URL+"/acme/tools.git/git-upload-pack", "application/x-git-upload-pack-request", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), "ERR upload-pack: not our ref "+first) {
		t.Fatalf("got %d %q", resp.StatusCode, got)
	}
}

func TestFaultTruncatedGitFetch(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	newToolsRepo(t, s)
	s.Fault(fakegithub.PathPrefix("/acme/tools/git-upload-pack"), fakegithub.Fault{Truncate: true, Times: 1})
	clone := func() error {
		_, err := git.CloneContext(testCtx(t), memory.NewStorage(), nil, &git.CloneOptions{URL: s.URL + "/acme/tools"})
		return err
	}
	if err := clone(); err == nil {
		t.Fatal("clone succeeded with a truncated pack")
	}
	if err := clone(); err != nil {
		t.Fatalf("clone after the truncation: %v", err)
	}
}
