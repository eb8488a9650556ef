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
	return s.URL + "/_archive/" + repo.Owner + "/" + repo.Name + "/" + sha + ".tar.gz"
}

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
// per commit and kept in memory (content at a SHA never changes).
func (s *Server) serveArchive(w http.ResponseWriter, r *http.Request, req request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	sha, ok := strings.CutSuffix(req.tail, ".tar.gz")
	repo := s.lookup(req.owner, req.name)
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
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%s-%s-%s.tar.gz", repo.Owner, repo.Name, sha[:7]))
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

func (s *Server) archive(ctx context.Context, repo *Repo, sha string) ([]byte, error) {
	key := repoKey(repo.Owner, repo.Name) + "@" + sha
	s.mu.Lock()
	data, ok := s.archives[key]
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
			return nil, fmt.Errorf("archive %s/%s@%s: %w", repo.Owner, repo.Name, sha, err)
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
