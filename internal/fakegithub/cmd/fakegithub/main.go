// Command fakegithub serves the test fake GitHub for people trying reasonix
// by hand:
//
//	go run ./internal/fakegithub/cmd/fakegithub -repo acme/tools=./my-plugin
//	eval "$(…the printed export lines…)"
//	reasonix plugin install git:github.com/acme/tools --dry-run
//
// Each -repo directory becomes one commit on main of that repository. The
// server listens on loopback only, logs every request and runs until
// interrupted.
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

// run serves until ctx ends. The export lines go to stdout so a shell can
// eval them; everything else is logged.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("fakegithub", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address; loopback only")
	dir := fs.String("dir", "", "directory for the bare repositories (default: a temporary directory removed on exit)")
	var repos repoFlags
	fs.Var(&repos, "repo", "OWNER/NAME=DIR: serve DIR's files as one commit on main (repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	root := *dir
	if root == "" {
		tmp, err := os.MkdirTemp("", "fakegithub-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		root = tmp
	}
	s, err := fakegithub.Start(root, fakegithub.WithAddr(*addr), fakegithub.WithLogger(logger))
	if err != nil {
		return err
	}
	defer s.Close()
	for _, r := range repos {
		repo, sha, err := s.ImportDir(r.owner, r.name, r.dir)
		if err != nil {
			return fmt.Errorf("-repo %s/%s=%s: %w", r.owner, r.name, r.dir, err)
		}
		logger.Info("imported", "repo", repo.Owner+"/"+repo.Name, "dir", r.dir, "branch", "main", "commit", sha)
	}
	for _, kv := range s.Env() {
		fmt.Fprintf(stdout, "export %s\n", kv)
	}
	for _, r := range repos {
		fmt.Fprintf(stdout, "# try: reasonix plugin install git:github.com/%s/%s --dry-run\n", r.owner, r.name)
	}
	logger.Info("serving; interrupt to stop", "url", s.URL, "api", s.APIURL, "repos", root)
	<-ctx.Done()
	return nil
}
