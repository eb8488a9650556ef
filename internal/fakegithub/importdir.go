package fakegithub

import (
	"fmt"
	"os"

	"reasonix.io/plugind"
)

// ImportDir creates owner/name holding dir's files as one commit on "main"
// and returns the repository and the commit's SHA. The directory is read
// like any package tree (plugind.ScanTree with the default budget): .git is
// skipped, in-tree symlinks to files are materialized, anything unsafe is
// refused.
func (s *Server) ImportDir(owner, name, dir string) (*Repo, string, error) {
	if !validOwner(owner) || !validName(name) || hasGitSuffix(name) {
		return nil, "", fmt.Errorf("import %s: %q/%q is not a valid GitHub owner/name", dir, owner, name)
	}
	return s.ImportDirAt(owner+"/"+name, dir)
}

// ImportDirAt is ImportDir for a repository path, of any depth on a
// plain-git server (see CreateRepoAt).
func (s *Server) ImportDirAt(path, dir string) (*Repo, string, error) {
	tree, err := plugind.ScanTree(dir, plugind.DefaultBudget)
	if err != nil {
		return nil, "", fmt.Errorf("import %s: %w", dir, err)
	}
	files := make([]File, 0, len(tree.Files))
	for _, f := range tree.Files {
		data, err := os.ReadFile(f.Source)
		if err != nil {
			return nil, "", fmt.Errorf("import %s: %w", dir, err)
		}
		mode := os.FileMode(0o644)
		if f.Executable {
			mode = 0o755
		}
		files = append(files, File{Path: f.Path, Content: string(data), Mode: mode})
	}
	repo, err := s.createRepoAt(path)
	if err != nil {
		return nil, "", err
	}
	sha, err := repo.commit("main", change{files: files, replace: true})
	if err != nil {
		return nil, "", err
	}
	return repo, sha, nil
}
