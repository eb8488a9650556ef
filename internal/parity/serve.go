package parity

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"reasonix.io/plugind/internal/fakegithub"
)

// Serve commits skeletons into a fake GitHub as the repositories they
// stand for: in each repository the skeleton of its HEAD on the default
// branch, every other one on a branch of its own, and the refs entries
// name pointing at theirs. corpus is the marketplace's corpus folder
// (for files a skeleton refers to). It returns the served commit of each
// original commit, for RewritePins.
func Serve(gh *fakegithub.Server, skeletons []*Skeleton, corpus string) (map[string]string, error) {
	byRepo := map[string][]*Skeleton{}
	for _, s := range skeletons {
		byRepo[s.Repo] = append(byRepo[s.Repo], s)
	}
	repos := make([]string, 0, len(byRepo))
	for r := range byRepo {
		repos = append(repos, r)
	}
	sort.Strings(repos)
	served := map[string]string{}
	for _, name := range repos {
		owner, repoName, ok := strings.Cut(name, "/")
		if !ok {
			return nil, fmt.Errorf("serve skeleton: repository %q is not OWNER/NAME", name)
		}
		repo := gh.CreateRepo(owner, repoName)
		sks := byRepo[name]
		// The HEAD skeleton first, on main; the others on branches.
		sort.SliceStable(sks, func(i, j int) bool { return sks[i].Head && !sks[j].Head })
		for i, s := range sks {
			files, err := s.Materialize(corpus)
			if err != nil {
				return nil, err
			}
			list := make([]fakegithub.File, 0, len(files))
			for p, f := range files {
				list = append(list, fakegithub.File{Path: p, Content: f.Content, Symlink: f.Symlink})
			}
			sort.Slice(list, func(a, b int) bool { return list[a].Path < list[b].Path })
			branch := "main"
			if i > 0 {
				branch = "parity-" + s.Commit[:min(12, len(s.Commit))]
			}
			sha := repo.CommitTree(branch, list, true)
			served[s.Commit] = sha
			for _, ref := range s.Refs {
				if ref != branch {
					repo.ResetBranch(ref, sha)
				}
			}
		}
	}
	return served, nil
}

// RewritePins replaces, in a marketplace document, every pinned commit
// that was served under another SHA (a skeleton's commit is not the
// original's).
func RewritePins(doc []byte, served map[string]string) []byte {
	for orig, now := range served {
		if orig != now && len(orig) == 40 {
			doc = bytes.ReplaceAll(doc, []byte(orig), []byte(now))
		}
	}
	return doc
}
