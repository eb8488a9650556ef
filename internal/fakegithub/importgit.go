package fakegithub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ImportGitDir serves an existing git repository at path (owner/name on a
// GitHub server, any depth on a plain-git one) with its real history: every
// ref and object of gitDir (bare or a work tree's .git) is copied as a
// mirror, so commit SHAs, branches and tags are the originals and a
// marketplace's pinned SHAs resolve as they do on GitHub. The default branch
// is the one gitDir's HEAD names. gitDir itself is only read.
//
// Copying, rather than serving gitDir in place, keeps the fake free to write
// (helpers such as Commit, ResetBranch) without touching the original; a
// local clone hard-links the packs when both live on one file system, so
// the copy is cheap.
func (s *Server) ImportGitDir(path, gitDir string) (*Repo, error) {
	src, err := filepath.Abs(gitDir)
	if err != nil {
		return nil, fmt.Errorf("import git %s: %w", gitDir, err)
	}
	if info, err := os.Stat(src); err != nil {
		return nil, fmt.Errorf("import git %s: %w", gitDir, err)
	} else if !info.IsDir() {
		return nil, fmt.Errorf("import git %s: not a directory", gitDir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	// Ask git itself what src is, so a work tree, a bare repository and a
	// directory that is neither are told apart before anything is created.
	out, err := s.runGit(ctx, "", nil, "-C", src, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return nil, fmt.Errorf("import git %s: not a git repository: %w", gitDir, err)
	}
	src = strings.TrimSpace(string(out))
	if err := s.checkRepoPath(path); err != nil {
		return nil, fmt.Errorf("import git %s: %w", gitDir, err)
	}
	r, err := s.reserveRepo(path)
	if err != nil {
		return nil, fmt.Errorf("import git %s: %w", gitDir, err)
	}
	branch, err := s.mirrorInto(ctx, src, r.gitDir)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		delete(s.repos, pathKey(path))
		os.RemoveAll(r.gitDir)
		return nil, fmt.Errorf("import git %s as %s: %w", gitDir, path, err)
	}
	r.defaultBranch = branch
	s.repos[pathKey(path)] = r
	return r, nil
}

// reserveRepo claims path in the server's table (as nil, so it answers 404
// until the caller publishes the repository) and returns the unpublished
// Repo, so two imports of one path cannot both write its directory.
func (s *Server) reserveRepo(path string) (*Repo, error) {
	r := &Repo{s: s, path: path, defaultBranch: "main",
		gitDir: filepath.Join(s.repoRoot, filepath.FromSlash(path)+".git")}
	r.Name = path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		r.Owner, r.Name = path[:i], path[i+1:]
	}
	key := pathKey(path)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.repos[key]; dup {
		return nil, fmt.Errorf("repository %s already exists", path)
	}
	s.repos[key] = nil
	return r, nil
}

// mirrorInto clones src as a bare mirror at dst and returns the default
// branch: the one src's HEAD names. A detached or dangling HEAD has no
// default branch to serve (GitHub never has one), so it is an error, checked
// on src itself because a clone would guess a branch for it.
func (s *Server) mirrorInto(ctx context.Context, src, dst string) (string, error) {
	out, err := s.runGit(ctx, src, nil, "symbolic-ref", "--quiet", "HEAD")
	if err != nil {
		return "", fmt.Errorf("HEAD is not a branch: %w", err)
	}
	head := strings.TrimSpace(string(out))
	branch, ok := strings.CutPrefix(head, "refs/heads/")
	if !ok || branch == "" {
		return "", fmt.Errorf("HEAD names %q, not a branch", head)
	}
	if _, err := s.runGit(ctx, src, nil, "rev-parse", "--quiet", "--verify", "--end-of-options", head+"^{commit}"); err != nil {
		var ge *gitError
		if errors.As(err, &ge) && ge.exitCode() > 0 {
			return "", fmt.Errorf("HEAD names branch %q, which does not exist", branch)
		}
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	if _, err := s.runGit(ctx, "", nil, "clone", "--mirror", "--quiet", "--template=", "--", src, dst); err != nil {
		return "", err
	}
	// clone copies HEAD as a symbolic ref already; setting it again keeps
	// the served default branch exactly src's.
	if _, err := s.runGit(ctx, dst, nil, "symbolic-ref", "HEAD", head); err != nil {
		return "", err
	}
	return branch, nil
}
