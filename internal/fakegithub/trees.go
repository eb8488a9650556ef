package fakegithub

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// gitTreeJSON is GET /repos/{o}/{r}/git/trees/{sha}: one tree's entries,
// not recursive (what a client walking down to a path asks).
type gitTreeJSON struct {
	SHA       string           `json:"sha"`
	URL       string           `json:"url"`
	Tree      []gitTreeEntJSON `json:"tree"`
	Truncated bool             `json:"truncated"`
}

type gitTreeEntJSON struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
	Type string `json:"type"`
	SHA  string `json:"sha"`
	Size *int64 `json:"size,omitempty"`
	URL  string `json:"url,omitempty"`
}

// apiGitTree answers git/trees/{sha}: the tree object sha (a commit's id
// gives its tree, as GitHub does), 404 when there is none.
func (s *Server) apiGitTree(w http.ResponseWriter, r *http.Request, repo *Repo, sha string) {
	if !isHex40(sha) {
		writeAPIError(w, http.StatusNotFound, "Not Found")
		return
	}
	if _, err := s.runGit(r.Context(), repo.gitDir, nil, "cat-file", "-e", sha+"^{tree}"); err != nil {
		writeAPIError(w, http.StatusNotFound, "Not Found")
		return
	}
	entries, err := s.lsTree(r, repo, sha+"^{tree}", "")
	if err != nil {
		writeAPIError(w, http.StatusInternalServerError, err.Error())
		return
	}
	base := s.repoAPIURL(repo) + "/git/"
	out := gitTreeJSON{SHA: sha, URL: base + "trees/" + sha, Tree: []gitTreeEntJSON{}}
	for _, e := range entries {
		ent := gitTreeEntJSON{Path: strings.TrimPrefix(e.path, "/"), Mode: e.mode, Type: e.typ, SHA: e.sha}
		switch e.typ {
		case "blob":
			size := e.size
			ent.Size, ent.URL = &size, base+"blobs/"+e.sha
		case "tree":
			ent.URL = base + "trees/" + e.sha
		}
		out.Tree = append(out.Tree, ent)
	}
	writeJSON(w, http.StatusOK, out)
}

// gitCommitJSON is GET /repos/{o}/{r}/git/commits/{sha}: the commit
// object, without the diff the commits/{ref} route computes.
type gitCommitJSON struct {
	SHA     string   `json:"sha"`
	URL     string   `json:"url"`
	Tree    shaURL   `json:"tree"`
	Parents []shaURL `json:"parents"`
	Message string   `json:"message"`
}

// apiGitCommit answers git/commits/{sha} for a commit of the repository
// (any, reachable or not, as GitHub does), 404 otherwise.
func (s *Server) apiGitCommit(w http.ResponseWriter, r *http.Request, repo *Repo, sha string) {
	if !isHex40(sha) {
		writeAPIError(w, http.StatusNotFound, "Not Found")
		return
	}
	out, err := s.runGit(r.Context(), repo.gitDir, nil, "cat-file", "commit", sha)
	if err != nil {
		writeAPIError(w, http.StatusNotFound, "Not Found")
		return
	}
	base := s.repoAPIURL(repo) + "/git/"
	c := gitCommitJSON{SHA: sha, URL: base + "commits/" + sha, Parents: []shaURL{}}
	head, msg, _ := strings.Cut(string(out), "\n\n")
	c.Message = msg
	for _, line := range strings.Split(head, "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "tree":
			c.Tree = shaURL{SHA: v, URL: base + "trees/" + v}
		case "parent":
			c.Parents = append(c.Parents, shaURL{SHA: v, URL: base + "commits/" + v})
		}
	}
	writeJSON(w, http.StatusOK, c)
}

// TreeID is the git id of the tree at folder p of commit sha ("" its
// root): what a fetch of that folder is proven against.
func (r *Repo) TreeID(sha, p string) string {
	r.s.helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	out, err := r.s.runGit(ctx, r.gitDir, nil, "rev-parse", "--verify", "--end-of-options", sha+":"+p)
	if err != nil {
		r.s.fail(fmt.Errorf("%s: TreeID(%s, %q): %w", r.path, sha, p, err))
		return ""
	}
	return strings.TrimSpace(string(out))
}
