package github_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/resolver/host/github"
	"reasonix.io/plugind/source"
)

// fakeEnv is acme/tools on a fake GitHub (real git, the REST routes the
// host uses): c1 an older commit on main, c2 main's tip, off a commit no
// branch or tag reaches (a fork's, as GitHub serves them).
type fakeEnv struct {
	gh     *fakegithub.Server
	repo   *fakegithub.Repo
	c1, c2 string
	off    string
	cfg    github.Config
	gitURL string // "": git off
}

func newFakeEnv(t *testing.T) *fakeEnv {
	t.Helper()
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "tools")
	c1 := repo.Commit("main", map[string]string{"README.md": "v1", "plugins/a/x.txt": "a", "plugins/b/y.txt": "b"})
	c2 := repo.Commit("main", map[string]string{"README.md": "v2"})
	off := repo.CommitUnreachable(c1, map[string]string{"README.md": "fork"})
	return &fakeEnv{gh: gh, repo: repo, c1: c1, c2: c2, off: off, cfg: github.Config{
		APIURL: gh.APIURL, REST: restClient(http.DefaultTransport),
	}, gitURL: gh.URL}
}

// open opens acme/tools; each Repo keeps its own git advertisement, so
// every test opens its own.
func (e *fakeEnv) open(t *testing.T) host.Repo {
	t.Helper()
	e.gh.ResetCounts()
	return openWith(t, e.cfg, e.gitURL)
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSplit: which transport each operation takes — ref listings and
// whole trees over git, resolving and reachability over the API, some
// folders from the archive — counted on the fake's routes.
func TestSplit(t *testing.T) {
	t.Parallel()
	e := newFakeEnv(t)
	ctx := context.Background()

	r := e.open(t)
	refs, err := r.Refs(ctx)
	if err != nil || refs.Head != "main" || refs.Commits["main"] != e.c2 || refs.Commits[host.HeadRef] != e.c2 {
		t.Fatalf("refs %+v, %v", refs, err)
	}
	if c := e.gh.Counts(); c.InfoRefs != 1 || c.API() != 0 {
		t.Errorf("refs: %+v, want one ref advertisement and no API call", c)
	}

	r = e.open(t)
	pin, err := r.Resolve(ctx, "main", nil)
	if err != nil || pin.SHA != e.c2 || pin.Warning != "" {
		t.Fatalf("resolve %+v, %v", pin, err)
	}
	if c := e.gh.Counts(); c.APICommits != 1 || c.Git() != 0 {
		t.Errorf("resolve: %+v, want one API call and no git", c)
	}
	if again, err := r.Resolve(ctx, "main", &pin); err != nil || !again.NotModified || e.gh.Counts().APICommits304 != 1 {
		t.Errorf("an unchanged ref: %+v, %v, %+v", again, err, e.gh.Counts())
	}

	r = e.open(t)
	dest := filepath.Join(t.TempDir(), "tree")
	got, err := r.Fetch(ctx, e.c2, dest, host.FetchOptions{})
	if err != nil || got.Transport != "git" || readFile(t, filepath.Join(dest, "README.md")) != "v2" {
		t.Fatalf("whole tree: %+v, %v", got, err)
	}
	if c := e.gh.Counts(); c.UploadPack == 0 || c.Archive != 0 || c.API() != 0 {
		t.Errorf("whole tree: %+v, want git alone", c)
	}

	r = e.open(t)
	dest = filepath.Join(t.TempDir(), "tree")
	got, err = r.Fetch(ctx, e.c1, dest, host.FetchOptions{Paths: []string{"plugins/a"}})
	if err != nil || got.Transport != "archive" || got.Files != 1 || readFile(t, filepath.Join(dest, "plugins/a/x.txt")) != "a" {
		t.Fatalf("some folders: %+v, %v", got, err)
	}
	// The archive is proven against the commit's tree, read over git (the
	// commit and its root tree alone): no REST request but the archive's.
	if c := e.gh.Counts(); c.Archive != 1 || c.CommitReads != 1 || c.UploadPack != 0 || c.API() != 1 {
		t.Errorf("some folders: %+v, want the archive, and the commit over git", c)
	}
	if got.Proof != host.ProofGitTree || got.GitTrees["plugins/a"] != e.repo.TreeID(e.c1, "plugins/a") {
		t.Errorf("some folders: proof %q, trees %v", got.Proof, got.GitTrees)
	}
}

// TestSplitVerify: a branch tip is proven by git's advertisement, which
// the fetch needs anyway; any other commit by the API before anything is
// downloaded; and a commit no branch or tag reaches is refused — before
// the download, or, when git refuses it unasked, explained by the API.
func TestSplitVerify(t *testing.T) {
	t.Parallel()
	e := newFakeEnv(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		sha         func() string
		verify      bool
		wantErr     error
		wantCompare bool
	}{
		{"a tip", func() string { return e.c2 }, true, nil, false},
		{"an older commit", func() string { return e.c1 }, true, nil, true},
		{"a fork's commit", func() string { return e.off }, true, host.ErrUnreachable, true},
		{"a fork's commit, unasked", func() string { return e.off }, false, host.ErrUnreachable, true},
	} {
		r := e.open(t)
		got, err := r.Fetch(ctx, tc.sha(), filepath.Join(t.TempDir(), "tree"), host.FetchOptions{Verify: tc.verify})
		c := e.gh.Counts()
		switch {
		case tc.wantErr == nil && (err != nil || !got.Verified):
			t.Errorf("%s: %+v, %v, want it verified", tc.name, got, err)
		case tc.wantErr != nil && (!errors.Is(err, tc.wantErr) || errors.Is(err, host.ErrCommitNotFound)):
			t.Errorf("%s: %v, want only %v", tc.name, err, tc.wantErr)
		case (c.APICompare > 0) != tc.wantCompare:
			t.Errorf("%s: %d compares", tc.name, c.APICompare)
		case tc.wantErr != nil && c.Archive != 0:
			t.Errorf("%s: the archive was downloaded", tc.name)
		}
		if tc.verify && tc.wantErr != nil && c.UploadPack != 0 {
			t.Errorf("%s: downloaded before the commit was checked", tc.name)
		}
	}
}

// TestSplitFallbacks: when one transport fails the other serves, saying
// so: git for a ref when the API is down, the archive for a tree when git
// is refused.
func TestSplitFallbacks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("the API down", func(t *testing.T) {
		t.Parallel()
		e := newFakeEnv(t)
		e.gh.Fault(fakegithub.RouteAPI, fakegithub.Fault{Status: http.StatusInternalServerError})
		pin, err := e.open(t).Resolve(ctx, "main", nil)
		if err != nil || pin.SHA != e.c2 {
			t.Fatalf("%+v, %v", pin, err)
		}
		if !strings.Contains(pin.Warning, "over the GitHub API failed") || !strings.Contains(pin.Warning, "used the git remote") {
			t.Errorf("warning %q", pin.Warning)
		}
	})
	t.Run("git refused", func(t *testing.T) {
		t.Parallel()
		e := newFakeEnv(t)
		e.gh.RefuseGit(true)
		got, err := e.open(t).Fetch(ctx, e.c2, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{})
		if err != nil || got.Transport != "archive" {
			t.Fatalf("%+v, %v", got, err)
		}
		if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "over git failed") || !strings.Contains(got.Warnings[0], "used the archive") {
			t.Errorf("warnings %q", got.Warnings)
		}
	})
	t.Run("git off", func(t *testing.T) {
		t.Parallel()
		e := newFakeEnv(t)
		e.gitURL = ""
		r := e.open(t)
		if _, err := r.Refs(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := r.Fetch(ctx, e.c2, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{Verify: true})
		if err != nil || got.Transport != "archive" || !got.Verified {
			t.Fatalf("%+v, %v", got, err)
		}
		if c := e.gh.Counts(); c.Git() != 0 {
			t.Errorf("git was used: %+v", c)
		}
	})
}

// TestSplitToken: the token goes to GitHub's API and git alike; a wrong
// one is refused, and said without being shown.
func TestSplitToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newFakeEnv(t)
	e.gh.RequireToken(token)
	e.cfg.Token = token
	r := e.open(t)
	if _, err := r.Refs(ctx); err != nil {
		t.Fatalf("refs with the token: %v", err)
	}
	if _, err := r.Resolve(ctx, "main", nil); err != nil {
		t.Fatalf("resolve with the token: %v", err)
	}
	if _, err := r.Fetch(ctx, e.c1, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{Verify: true}); err != nil {
		t.Fatalf("fetch with the token: %v", err)
	}

	e.cfg.Token = token + "-wrong"
	r = e.open(t)
	for name, call := range map[string]func() error{
		"refs":    func() error { _, err := r.Refs(ctx); return err },
		"resolve": func() error { _, err := r.Resolve(ctx, "main", nil); return err },
		"fetch": func() error {
			_, err := r.Fetch(ctx, e.c2, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{})
			return err
		},
	} {
		err := call()
		if err == nil {
			t.Errorf("%s with a wrong token succeeded", name)
			continue
		}
		noToken(t, err)
		if !strings.Contains(err.Error(), "401") && !strings.Contains(err.Error(), "credentials") {
			t.Errorf("%s: %v does not say the credentials were refused", name, err)
		}
	}
}

// TestOpenRefusesOtherHosts: the GitHub host opens GitHub sources only.
func TestOpenRefusesOtherHosts(t *testing.T) {
	t.Parallel()
	h, err := github.New(github.Config{REST: restClient(http.DefaultTransport)})
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.Parse("https://git.example.test/team/tools.git")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := h.Open(src, nil); err == nil || !strings.Contains(err.Error(), "not a GitHub source") {
		t.Fatalf("%v, %v", r, err)
	}
}
