package fakegithub

import (
	"fmt"
	"strings"
)

// WithPlainGit makes the server stand in for any other git host (GitLab,
// Gitea, Gerrit, a bare http-backend): smart HTTP only, no REST API and no
// archives (those paths answer 404 and count as Other), and repositories at
// paths of any depth made with CreateRepoAt ("team/tools",
// "group/sub/tools"), served at /<path>.git/… and /<path>/… alike, as
// GitLab does.
func WithPlainGit() Option { return func(o *options) { o.plainGit = true } }

// PlainGit reports whether the server was started WithPlainGit.
func (s *Server) PlainGit() bool { return s.plain }

// maxPathSegments bounds nested repository paths; GitLab allows 20 levels
// of subgroups.
const maxPathSegments = 21

// checkRepoPath validates a repository path for the server's mode: GitHub's
// owner/name rules, or for a plain git host one or more segments of GitHub's
// name characters. No segment may end in ".git", so "/x.git/…" always means
// repository x, and none may be "." or "..", so a path stays below the
// repository root on disk.
func (s *Server) checkRepoPath(path string) error {
	bad := func(why string) error { return fmt.Errorf("repository path %q: %s", path, why) }
	segs := strings.Split(path, "/")
	if !s.plain {
		if len(segs) != 2 || !validOwner(segs[0]) || !validName(segs[1]) || hasGitSuffix(segs[1]) {
			return bad("not a valid GitHub owner/name (nested paths need WithPlainGit)")
		}
		return nil
	}
	if len(segs) > maxPathSegments {
		return bad(fmt.Sprintf("more than %d segments", maxPathSegments))
	}
	for _, seg := range segs {
		if !validName(seg) || hasGitSuffix(seg) {
			return bad(fmt.Sprintf("segment %q is empty, \".\", \"..\", ends in \".git\" or has characters outside [A-Za-z0-9._-]", seg))
		}
	}
	return nil
}

func hasGitSuffix(s string) bool { return strings.HasSuffix(strings.ToLower(s), ".git") }

// classifyPlainGit routes a plain git host: the path ends in a smart-HTTP
// endpoint and everything before it (minus an optional ".git") is the
// repository path. Anything else, /api/v3 and /_archive included, is Other.
func classifyPlainGit(p string) request {
	for _, tail := range []string{"info/refs", "git-upload-pack", "git-receive-pack"} {
		repo, ok := strings.CutSuffix(p, "/"+tail)
		if !ok {
			continue
		}
		repo = strings.TrimSuffix(strings.TrimPrefix(repo, "/"), ".git")
		if repo == "" {
			return request{}
		}
		for _, seg := range strings.Split(repo, "/") {
			if !validName(seg) {
				return request{}
			}
		}
		return request{kind: RouteGit, counter: gitCounter(tail), repo: repo, tail: tail}
	}
	return request{}
}
