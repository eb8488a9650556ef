package tarball

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

// gitRepo makes a small repository with real git and returns its worktree
// and HEAD commit.
func gitRepo(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"README.md":                     "# acme tools\n",
		".claude-plugin/plugin.json":    `{"name":"acme-tools"}` + "\n",
		"skills/lint/SKILL.md":          "---\nname: lint\ndescription: lints\n---\nbody\n",
		"bin/acme":                      "#!/bin/sh\necho acme\n",
		"commands/Deploy.md":            "deploy\n",
		"docs/very/deep/nested/file.md": "deep\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(name, "bin/") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../README.md", filepath.Join(dir, "docs", "README.md")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "initial")
	return dir, strings.TrimSpace(git(t, dir, "rev-parse", "HEAD"))
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_DATE=2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2024-01-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// A real `git archive` in GitHub's layout extracts, pinned to its commit,
// into the same tree as the worktree it came from.
func TestGitArchive(t *testing.T) {
	t.Parallel()
	repo, sha := gitRepo(t)
	root := "acme-tools-" + sha[:7]
	want, _, err := plugind.TreeDigest(repo, plugind.DefaultBudget)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"tar.gz", "zip"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			archive := filepath.Join(dir, "archive."+format)
			git(t, repo, "archive", "--format="+format, "--prefix="+root+"/", "-o", archive, "HEAD")
			extract := func(dest, expect string) (*Result, error) {
				opts := Options{StripRoot: true, ExpectCommit: expect}
				if format == "zip" {
					return ExtractZipFile(context.Background(), archive, dest, opts)
				}
				f, err := os.Open(archive)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				return ExtractTarGz(context.Background(), f, dest, opts)
			}

			dest := filepath.Join(dir, "out")
			res, err := extract(dest, sha)
			if err != nil {
				t.Fatal(err)
			}
			if res.Root != root || res.Commit != sha || res.Files != 7 {
				t.Errorf("result = %+v, want root %s, commit %s, 7 files", *res, root, sha)
			}
			got, _, err := plugind.TreeDigest(dest, plugind.DefaultBudget)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("extracted tree digest %s, worktree %s", got, want)
			}
			if info, err := os.Lstat(filepath.Join(dest, "docs", "README.md")); err != nil || !info.Mode().IsRegular() {
				t.Errorf("docs/README.md should be a materialized regular file: %v %v", info, err)
			}

			// Same sha7, different commit: the comment gives it away.
			other := sha[:7] + strings.Repeat("0", 33)
			if other == sha {
				other = sha[:7] + strings.Repeat("1", 33)
			}
			_, err = extract(filepath.Join(dir, "wrong-comment"), other)
			wantErr(t, err, plugind.CodeUnsafeArchive, "expected "+other)
			// A different commit altogether (the comment, which comes
			// first, already disagrees).
			_, err = extract(filepath.Join(dir, "wrong-root"), strings.Repeat("f", 40))
			wantErr(t, err, plugind.CodeUnsafeArchive, strings.Repeat("f", 40))
			for _, p := range []string{"wrong-comment", "wrong-root"} {
				if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
					t.Errorf("%s left behind: %v", p, err)
				}
			}
		})
	}
}
