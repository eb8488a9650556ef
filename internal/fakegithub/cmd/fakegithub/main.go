// Command fakegithub serves the test fake GitHub for people trying reasonix
// by hand and for scripts:
//
//	go run ./internal/fakegithub/cmd/fakegithub -repo acme/tools=./my-plugin
//	eval "$(…the printed export lines…)"
//	reasonix plugin install git:github.com/acme/tools --dry-run
//
// Each -repo directory becomes one commit on main of that repository.
// With -plain-git the server stands in for any other git host (GitLab,
// Gitea, Gerrit): smart HTTP only, no REST API or archives, and -git-repo
// serves a directory at a path of any depth:
//
//	fakegithub -plain-git -git-repo team/tools=./dir -git-repo group/sub/tools=./other
//	git clone http://127.0.0.1:PORT/group/sub/tools.git
//
// -bare serves an existing git repository with its real history (every
// branch, tag and commit SHA as they are), so a real marketplace whose
// entries pin commits of other real repositories can be served with those
// pins intact:
//
//	fakegithub -bare anthropics/claude-plugins-official=/path/to/repo.git \
//	           -bare obra/superpowers=/path/to/superpowers/.git
//
// A partial clone (git clone --filter=blob:none, as Claude Code makes of a
// git-subdir entry's repository) fetches trees and blobs by SHA later, which
// GitHub serves; the fake by default serves commits only, as git's
// allowReachableSHA1InWant does. -serve-any-wants serves any object it has
// by SHA, so such clients work against it:
//
//	fakegithub -serve-any-wants -bare amd/skills=/path/to/skills.git
//
// -api-budget N enforces GitHub's REST budget for requests without a token:
// N requests per -api-budget-window (default an hour, GitHub's 60 an hour
// being -api-budget 60), archives' REST links included, git not; once spent,
// REST answers 403 with X-RateLimit-Remaining: 0 and X-RateLimit-Reset until
// the window ends:
//
//	fakegithub -api-budget 60 -repo acme/tools=./my-plugin
//
// Once every repository is served the command prints, as its last line on
// stdout, "fakegithub: listening on http://127.0.0.1:PORT", and with
// -ready-file writes that URL (and a newline) to the file, atomically, so a
// script can wait for either instead of sleeping; the file is removed on
// exit. The server listens on loopback only, logs every request to stderr
// and runs until interrupted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"reasonix.io/plugind/internal/fakegithub"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, logger)
	var usage usageError
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case errors.As(err, &usage):
		fmt.Fprintln(os.Stderr, "fakegithub:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "fakegithub:", err)
		os.Exit(1)
	}
}

type usageError struct{ error }

type repoSpec struct{ owner, name, dir string }

type repoFlags []repoSpec

func (f *repoFlags) String() string { return fmt.Sprint(*f) }

func (f *repoFlags) Set(v string) error {
	full, dir, ok := strings.Cut(v, "=")
	owner, name, ok2 := strings.Cut(full, "/")
	if !ok || !ok2 || owner == "" || name == "" || dir == "" {
		return fmt.Errorf("want OWNER/NAME=DIR, got %q", v)
	}
	*f = append(*f, repoSpec{owner: owner, name: name, dir: dir})
	return nil
}

// gitRepoSpec is a -git-repo PATH=DIR; the server checks PATH for its mode.
type gitRepoSpec struct{ path, dir string }

type gitRepoFlags []gitRepoSpec

func (f *gitRepoFlags) String() string { return fmt.Sprint(*f) }

func (f *gitRepoFlags) Set(v string) error {
	path, dir, ok := strings.Cut(v, "=")
	if !ok || path == "" || dir == "" {
		return fmt.Errorf("want PATH=DIR, got %q", v)
	}
	*f = append(*f, gitRepoSpec{path: path, dir: dir})
	return nil
}

// run serves until ctx ends. The export lines go to stdout so a shell can
// eval them, then the ready line; everything else is logged.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("fakegithub", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address; loopback only")
	dir := fs.String("dir", "", "directory for the bare repositories (default: a temporary directory removed on exit)")
	plain := fs.Bool("plain-git", false, "serve a plain git host (no REST API, no archives, repository paths of any depth) instead of GitHub")
	anyWants := fs.Bool("serve-any-wants", false, "serve any object by SHA over git, trees and blobs too (git's uploadpack.allowAnySHA1InWant), as GitHub does for partial clones")
	readyFile := fs.String("ready-file", "", "once serving, write the server URL to this file (removed on exit)")
	apiBudget := fs.Int("api-budget", 0, "REST requests without a token allowed per -api-budget-window, as GitHub counts them (archive links included, git not); then 403 with X-RateLimit-Remaining: 0 until the window ends (0: no budget)")
	apiWindow := fs.Duration("api-budget-window", time.Hour, "the window of -api-budget")
	var repos repoFlags
	fs.Var(&repos, "repo", "OWNER/NAME=DIR: serve DIR's files as one commit on main (repeatable)")
	var gitRepos gitRepoFlags
	fs.Var(&gitRepos, "git-repo", "PATH=DIR: serve DIR's files as one commit on main at PATH, e.g. group/sub/tools with -plain-git, OWNER/NAME otherwise (repeatable)")
	var bares gitRepoFlags
	fs.Var(&bares, "bare", "PATH=GITDIR: serve the git repository GITDIR (bare, or a work tree) at PATH with its real history, refs and default branch (repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	switch {
	case *apiBudget < 0:
		return usageError{fmt.Errorf("-api-budget %d: want 0 (none) or more", *apiBudget)}
	case *apiWindow <= 0:
		return usageError{fmt.Errorf("-api-budget-window %s: want a positive duration", *apiWindow)}
	case *apiBudget > 0 && *plain:
		return usageError{errors.New("-api-budget goes with GitHub mode; a -plain-git host has no REST API")}
	}
	root := *dir
	if root == "" {
		tmp, err := os.MkdirTemp("", "fakegithub-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		root = tmp
	} else if err := os.MkdirAll(root, 0o755); err != nil {
		// A -dir that does not exist yet is made (kept on exit), rather
		// than failing later with git's "chdir: no such file".
		return fmt.Errorf("-dir %s: %w", root, err)
	}
	opts := []fakegithub.Option{fakegithub.WithAddr(*addr), fakegithub.WithLogger(logger), fakegithub.WithAPIBudget(*apiBudget, *apiWindow)}
	if *plain {
		opts = append(opts, fakegithub.WithPlainGit())
	}
	s, err := fakegithub.Start(root, opts...)
	if err != nil {
		return err
	}
	defer s.Close()
	s.ServeUnreachableWants(*anyWants)
	all := make([]gitRepoSpec, 0, len(repos)+len(gitRepos))
	for _, r := range repos {
		all = append(all, gitRepoSpec{path: r.owner + "/" + r.name, dir: r.dir})
	}
	all = append(all, gitRepos...)
	served := make([]*fakegithub.Repo, 0, len(all)+len(bares))
	for _, r := range all {
		repo, sha, err := s.ImportDirAt(r.path, r.dir)
		if err != nil {
			return fmt.Errorf("%s=%s: %w", r.path, r.dir, err)
		}
		logger.Info("imported", "repo", repo.Path(), "dir", r.dir, "branch", "main", "commit", sha)
		served = append(served, repo)
	}
	for _, b := range bares {
		repo, err := s.ImportGitDir(b.path, b.dir)
		if err != nil {
			return fmt.Errorf("-bare %s=%s: %w", b.path, b.dir, err)
		}
		logger.Info("imported git", "repo", repo.Path(), "gitdir", b.dir, "default_branch", repo.DefaultBranch())
		served = append(served, repo)
	}
	if *readyFile != "" {
		if err := writeAtomic(*readyFile, s.URL+"\n"); err != nil {
			return fmt.Errorf("-ready-file: %w", err)
		}
		defer os.Remove(*readyFile)
	}
	for _, kv := range s.Env() {
		fmt.Fprintf(stdout, "export %s\n", kv)
	}
	for _, repo := range served {
		if *plain {
			fmt.Fprintf(stdout, "# try: git clone %s\n", repo.CloneURL())
		} else {
			fmt.Fprintf(stdout, "# try: reasonix plugin install git:github.com/%s --dry-run\n", repo.Path())
		}
	}
	fmt.Fprintf(stdout, "fakegithub: listening on %s\n", s.URL)
	logger.Info("serving; interrupt to stop", "url", s.URL, "api", s.APIURL, "plain_git", *plain, "repos", root)
	<-ctx.Done()
	return nil
}

// writeAtomic writes data to path through a rename, so a script polling for
// the file never reads a partial URL.
func writeAtomic(path, data string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
