package fakegithub

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/cgi"
	"strconv"
	"strings"
)

// maxUploadPackRequest bounds the buffered want/have negotiation body; real
// requests are a few KiB.
const maxUploadPackRequest = 32 << 20

// serveGit answers git smart HTTP (upload-pack only, like anonymous GitHub)
// through the real git http-backend.
func (s *Server) serveGit(w http.ResponseWriter, r *http.Request, req request) {
	s.mu.Lock()
	refuseGit, policy := s.refuseGit, s.wantPolicy()
	s.mu.Unlock()
	if refuseGit {
		http.Error(w, "fakegithub: git over HTTP is refused", http.StatusForbidden)
		return
	}
	if !s.authorized(r) {
		realm := "GitHub"
		if s.plain {
			realm = "fakegithub plain git"
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="`+realm+`"`)
		http.Error(w, "Invalid username or token.", http.StatusUnauthorized)
		return
	}
	repo := s.lookup(req.repo)
	if repo == nil {
		http.Error(w, "Repository not found.", http.StatusNotFound)
		return
	}
	var body []byte // an upload-pack request's
	switch req.tail {
	case "info/refs":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		// Dumb HTTP and push are not GitHub's anonymous surface either.
		if r.URL.Query().Get("service") != "git-upload-pack" {
			http.Error(w, "fakegithub serves only service=git-upload-pack", http.StatusForbidden)
			return
		}
	case "git-upload-pack":
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		var err error
		if body, err = readRequestBody(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if bytes.Contains(body, []byte("filter tree:1\n")) {
			s.commitRead(req)
		}
		sha, err := repo.refusedWant(r.Context(), body, policy)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if sha != "" {
			writeUploadPackError(w, "upload-pack: not our ref "+sha)
			return
		}
		if pack := s.craftedPackOf(repo); pack != nil {
			writeCraftedPack(w, body, pack)
			return
		}
		// net/http/cgi refuses chunked bodies (git sends those for large
		// negotiations), so hand it the buffered, decoded body instead.
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.TransferEncoding = nil
		r.Header.Del("Content-Encoding")
	default:
		http.Error(w, "fakegithub does not accept pushes", http.StatusForbidden)
		return
	}
	s.gitCache.serve(w, r, repo, req.tail+"\x00"+strconv.Itoa(int(policy))+"\x00"+string(body), func(w http.ResponseWriter) {
		s.runBackend(w, r, repo, req.tail, policy)
	})
}

func (s *Server) runBackend(w http.ResponseWriter, r *http.Request, repo *Repo, tail string, policy wantPolicy) {
	// The capabilities advertised to protocol v0 clients follow the policy
	// (refusedWant enforces it for every protocol). allowAnySHA1InWant is
	// set only when wanted: setting it false would clear the tip and
	// reachable bits along with it.
	allow := strconv.FormatBool(policy != wantTips)
	config := [][2]string{
		{"uploadpack.allowTipSHA1InWant", allow},
		{"uploadpack.allowReachableSHA1InWant", allow},
		{"uploadpack.allowFilter", "true"},
	}
	if policy == wantAny {
		config = append(config, [2]string{"uploadpack.allowAnySHA1InWant", "true"})
	}
	var stderr bytes.Buffer
	h := &cgi.Handler{
		Path:   s.backend,
		Dir:    s.repoRoot,
		Env:    s.gitEnv(config, "GIT_PROJECT_ROOT="+s.repoRoot, "GIT_HTTP_EXPORT_ALL=1"),
		Logger: log.New(io.Discard, "", 0),
		Stderr: &stderr,
	}
	if s.log != nil {
		h.Logger = slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)
	}
	// PATH_INFO names the repository as it lies on disk, whatever case or
	// ".git" suffix the client used.
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + repo.path + ".git/" + tail
	r2.URL.RawPath = ""
	h.ServeHTTP(w, r2)
	if s.log != nil && stderr.Len() > 0 {
		s.log.Warn("git http-backend stderr", "repo", repo.path, "stderr", strings.TrimSpace(stderr.String()))
	}
}

func readRequestBody(r *http.Request) ([]byte, error) {
	var src io.Reader = r.Body
	switch enc := strings.ToLower(r.Header.Get("Content-Encoding")); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, fmt.Errorf("read gzip request body: %w", err)
		}
		defer zr.Close()
		src = zr
	default:
		return nil, fmt.Errorf("unsupported Content-Encoding %q", enc)
	}
	body, err := io.ReadAll(io.LimitReader(src, maxUploadPackRequest+1))
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	if len(body) > maxUploadPackRequest {
		return nil, fmt.Errorf("request body over %d bytes", maxUploadPackRequest)
	}
	return body, nil
}

// writeUploadPackError answers as upload-pack does when it dies on a bad
// want: HTTP 200 carrying an ERR pkt-line.
func writeUploadPackError(w http.ResponseWriter, msg string) {
	line := "ERR " + msg + "\n"
	w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
	w.Header().Set("Cache-Control", "no-cache, max-age=0, must-revalidate")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "%04x%s", len(line)+4, line)
}
