package fakegithub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

func (s *Server) archiveURL(repo *Repo, sha string) string {
	return s.URL + "/_archive/" + repo.path + "/" + sha + ".tar.gz"
}

// ArchiveURL is where the REST tarball route redirects for commit sha (the
// fake's stand-in for codeload.github.com).
func (r *Repo) ArchiveURL(sha string) string { return r.s.archiveURL(r, sha) }

// SetArchive makes the archive route serve tgz, byte for byte, as the
// archive of sha instead of what git archive would make: hostile archives
// (entries with "../" or absolute names, devices, hard links, duplicates, a
// wrong root directory, a corrupt gzip stream) that no git repository can
// produce. sha must be a 40-hex id; for the REST tarball route to redirect
// to it, it must also name a commit here (any commit, even an unreachable
// one). A later SetArchive replaces it. Only GitHub-mode servers have
// archives.
func (r *Repo) SetArchive(sha string, tgz []byte) {
	r.s.helper()
	switch {
	case r.s.plain:
		r.s.fail(fmt.Errorf("%s: SetArchive: a plain-git server serves no archives", r.path))
		return
	case !isHex40(sha):
		r.s.fail(fmt.Errorf("%s: SetArchive: %q is not a 40-hex commit id", r.path, sha))
		return
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.s.craftedArchive[archiveKey(r, sha)] = bytes.Clone(tgz)
}

func archiveKey(repo *Repo, sha string) string { return pathKey(repo.path) + "@" + sha }

// ArchivePrefix is the root directory GitHub gives a tarball of sha:
// "owner-repo-<sha7>/".
func (r *Repo) ArchivePrefix(sha string) string {
	short := sha
	if len(short) > 7 {
		short = short[:7]
	}
	return r.Owner + "-" + r.Name + "-" + short + "/"
}

// serveArchive serves the tarball of one commit, made by git archive once
// per commit and kept in memory (content at a SHA never changes), unless
// SetArchive gave one. git archive refuses some hostile trees (entries named
// ".", "..", ".git" in any case, or ""): those answer 500 with git's error.
func (s *Server) serveArchive(w http.ResponseWriter, r *http.Request, req request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	sha, ok := strings.CutSuffix(req.tail, ".tar.gz")
	repo := s.lookup(req.repo)
	if !ok || !isHex40(sha) || repo == nil {
		http.NotFound(w, r)
		return
	}
	data, err := s.archive(r.Context(), repo, sha)
	if errors.Is(err, errNoRef) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-gzip")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%s.tar.gz", strings.TrimSuffix(repo.ArchivePrefix(sha), "/")))
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

func (s *Server) archive(ctx context.Context, repo *Repo, sha string) ([]byte, error) {
	key := archiveKey(repo, sha)
	s.mu.Lock()
	data, ok := s.craftedArchive[key]
	if !ok {
		data, ok = s.archives[key]
	}
	s.mu.Unlock()
	if ok {
		return data, nil
	}
	// Shared by concurrent downloads, so one client giving up must not
	// cancel the others' archive.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	v, err, _ := s.archiveFlight.Do(key, func() (any, error) {
		if _, err := repo.commitOf(ctx, sha); err != nil {
			return nil, err
		}
		out, err := s.runGit(ctx, repo.gitDir, nil, "archive", "--format=tar.gz", "--prefix="+repo.ArchivePrefix(sha), sha)
		if err != nil {
			return nil, fmt.Errorf("archive %s@%s: %w", repo.path, sha, err)
		}
		s.mu.Lock()
		s.archives[key] = out
		s.mu.Unlock()
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}
