package resolver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/source"
)

// fetchGit writes the tree of commit sha into dest (which must not exist):
// a depth-1 fetch of exactly that SHA, falling back to a fetch of every
// branch and tag when the server refuses SHA wants. Either way the commit
// must be reachable from the remote's branches or tags (GitHub's
// reachable-SHA rule; the fallback checks it by construction). The object
// store lives in scratch, beside dest, and is thrown away.
func (s *Sources) fetchGit(ctx context.Context, r *source.Remote, sha, scratch, dest string) error {
	gitDir := filepath.Join(scratch, "git")
	st := filesystem.NewStorage(osfs.New(gitDir), cache.NewObjectLRUDefault())
	repo, err := git.Init(st, nil)
	if err != nil {
		return fmt.Errorf("init scratch repository: %w", err)
	}
	rem, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{s.gitURL(r)}})
	if err != nil {
		return err
	}
	pin := plumbing.ReferenceName("refs/pin/" + sha)
	err = rem.FetchContext(ctx, &git.FetchOptions{
		RefSpecs: []config.RefSpec{config.RefSpec(sha + ":" + pin.String())},
		Depth:    1,
		Tags:     git.NoTags,
		Auth:     s.gitAuth(),
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.cfg.Log.Info("fetch by SHA refused; fetching branches and tags", "repo", remoteKey(r), "err", err)
		err = rem.FetchContext(ctx, &git.FetchOptions{
			RefSpecs: []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"},
			Tags:     git.NoTags,
			Auth:     s.gitAuth(),
		})
		if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
			return fmt.Errorf("git fetch %s: %w", remoteKey(r), err)
		}
	}
	commit, err := repo.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		return plugind.Errorf(plugind.CodeNotFound, "commit %s is not reachable from any branch or tag of %s", sha, remoteKey(r))
	}
	tree, err := commit.Tree()
	if err != nil {
		return fmt.Errorf("read tree of %s: %w", sha, err)
	}
	return writeTree(ctx, tree, dest, s.cfg.Budget)
}

// writeTree materializes a git tree. Symlinks are written as symlinks; the
// store then materializes in-tree ones and refuses escaping ones, exactly as
// for archives. Submodules are not part of a snapshot.
func writeTree(ctx context.Context, tree *object.Tree, dest string, budget plugind.Budget) error {
	if err := os.Mkdir(dest, 0o755); err != nil {
		return err
	}
	var files int
	var bytes int64
	buf := make([]byte, 256<<10)
	return tree.Files().ForEach(func(f *object.File) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		name, err := plugind.LocalPath(f.Name)
		if err != nil || name == "." {
			return plugind.Errorf(plugind.CodeUnsafeArchive, "refusing tree entry %q: %v", f.Name, err)
		}
		files++
		bytes += f.Size
		if err := budget.Check(files, bytes); err != nil {
			return err
		}
		target := filepath.Join(dest, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		switch f.Mode {
		case filemode.Symlink:
			link, err := f.Contents()
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case filemode.Regular, filemode.Executable, filemode.Deprecated:
			mode := os.FileMode(0o644)
			if f.Mode == filemode.Executable {
				mode = 0o755
			}
			rd, err := f.Reader()
			if err != nil {
				return err
			}
			defer rd.Close()
			out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
			if err != nil {
				return err
			}
			if _, err := io.CopyBuffer(out, rd, buf); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		default:
			return nil
		}
	})
}
