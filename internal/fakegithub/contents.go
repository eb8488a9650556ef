package fakegithub

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
)

// contentJSON is one entry of the contents API.
type contentJSON struct {
	Type     string `json:"type"` // file, dir, symlink, submodule
	Name     string `json:"name"`
	Path     string `json:"path"`
	SHA      string `json:"sha"`
	Size     int64  `json:"size"`
	URL      string `json:"url"`
	Encoding string `json:"encoding,omitempty"`
	Content  string `json:"content,omitempty"`
	Target   string `json:"target,omitempty"`
}

// treeEntry is one line of git ls-tree -l -z.
type treeEntry struct {
	mode, typ, sha string
	size           int64
	path           string
}

// apiContents serves contents/{path}?ref=REF as GitHub does for the cases
// the resolver asks about: a submodule is an object of type "submodule"
// whose sha is the commit its gitlink pins (what an archive, which holds it
// as an empty folder, cannot say); a file carries its content in base64; a
// folder is the list of its entries.
func (s *Server) apiContents(w http.ResponseWriter, r *http.Request, repo *Repo, p string) {
	ref := r.URL.Query().Get("ref")
	commit, err := repo.resolve(r.Context(), ref)
	if err != nil {
		s.refError(w, r, repo, ref, err, http.StatusNotFound)
		return
	}
	p = strings.Trim(p, "/")
	entries, err := s.lsTree(r, repo, commit, p)
	if err != nil {
		writeAPIError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if len(entries) != 1 || entries[0].path != p {
		writeAPIError(w, http.StatusNotFound, "Not Found")
		return
	}
	e := entries[0]
	if e.typ == "tree" {
		children, err := s.lsTree(r, repo, commit, p+"/")
		if err != nil {
			writeAPIError(w, http.StatusInternalServerError, err.Error())
			return
		}
		list := make([]contentJSON, 0, len(children))
		for _, c := range children {
			list = append(list, s.contentOf(repo, c, ref))
		}
		writeJSON(w, http.StatusOK, list)
		return
	}
	out := s.contentOf(repo, e, ref)
	if e.typ == "blob" {
		data, err := s.runGit(r.Context(), repo.gitDir, nil, "cat-file", "blob", e.sha)
		if err != nil {
			writeAPIError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if out.Type == "symlink" {
			out.Target = string(data)
		} else {
			out.Encoding, out.Content = "base64", base64.StdEncoding.EncodeToString(data)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) contentOf(repo *Repo, e treeEntry, ref string) contentJSON {
	c := contentJSON{Name: e.path[strings.LastIndex(e.path, "/")+1:], Path: e.path, SHA: e.sha, Size: e.size,
		URL: s.repoAPIURL(repo) + "/contents/" + e.path + "?ref=" + ref}
	switch {
	case e.mode == "160000":
		c.Type = "submodule"
	case e.mode == "120000":
		c.Type = "symlink"
	case e.typ == "tree":
		c.Type = "dir"
	default:
		c.Type = "file"
	}
	return c
}

// lsTree lists the entry at p (or, with a trailing "/", the entries of
// folder p) in commit.
func (s *Server) lsTree(r *http.Request, repo *Repo, commit, p string) ([]treeEntry, error) {
	args := []string{"ls-tree", "-l", "-z", commit}
	if p != "" {
		args = append(args, "--", p) // an empty pathspec is an error; none lists the root
	}
	out, err := s.runGit(r.Context(), repo.gitDir, nil, args...)
	if err != nil {
		return nil, err
	}
	var entries []treeEntry
	for _, rec := range strings.Split(string(out), "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		if len(f) != 4 {
			continue
		}
		size, _ := strconv.ParseInt(f[3], 10, 64) // "-" for trees and submodules
		entries = append(entries, treeEntry{mode: f[0], typ: f[1], sha: f[2], size: size, path: path})
	}
	return entries, nil
}
