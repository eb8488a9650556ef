package fakegithub_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-github/v62/github"

	"reasonix.io/plugind/internal/fakegithub"
)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// gitCLI runs the real git client isolated from the user's configuration.
func gitCLI(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
	}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitCLI(t, dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func ghClient(t *testing.T, s *fakegithub.Server) *github.Client {
	t.Helper()
	c, err := github.NewClient(nil).WithEnterpriseURLs(s.APIURL, s.APIURL)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// get performs a GET and returns status, headers and the whole body.
func get(t *testing.T, url string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", url, err)
	}
	return resp.StatusCode, resp.Header, body
}

// newToolsRepo makes acme/tools with two commits on main and returns them.
func newToolsRepo(t *testing.T, s *fakegithub.Server) (*fakegithub.Repo, string, string) {
	t.Helper()
	r := s.CreateRepo("acme", "tools")
	first := r.Commit("main", map[string]string{
		"README.md":                  "# tools\n",
		".claude-plugin/plugin.json": `{"name":"tools"}`,
		"bin/run":                    fakegithub.Executable("#!/bin/sh\necho hi\n"),
		"docs/link.md":               fakegithub.Symlink("../README.md"),
	})
	second := r.Commit("main", map[string]string{"CHANGELOG.md": "v2\n"})
	return r, first, second
}

func mustFiles(t *testing.T, tree *object.Tree) []*object.File {
	t.Helper()
	var files []*object.File
	err := tree.Files().ForEach(func(f *object.File) error {
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
