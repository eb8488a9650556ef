package mirror

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"reasonix.io/plugind"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/objects"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/resolver/source"
)

// The HTTP API (every /v1 route and /metrics need "Authorization: Bearer
// TOKEN"; /healthz and /readyz do not, for load balancers' probes):
//
//	GET /healthz                                  200 "ok": the process answers
//	GET /readyz                                   200, or 503 naming what is down (PostgreSQL, the object store)
//	GET /metrics                                  Prometheus text format
//	GET /v1/refs?repo=URL                         {"head", "commits": {name: sha}}
//	GET /v1/resolve?repo=URL&ref=REF              {"sha", "ref"}, ETag "<sha>"; If-None-Match it: 304
//	GET /v1/reachable?repo=URL&sha=SHA[&hint=REF] 204 when on a branch or tag
//	GET /v1/snapshot?repo=URL&sha=SHA[&path=P…]   the tree (or folders P) as tar.gz; X-Reasonix-Digest: its tree digest
//	GET /v1/marketplace?repo=URL&sha=SHA[&path=P] a marketplace document stored from that commit
//
// repo is the repository's HTTPS URL as sources name it
// (https://github.com/o/r.git, https://git.example.test/team/tools.git);
// ref "" is the default branch. Errors are JSON {"error", "errorCode",
// "kind"?, "rule"?}: 400 bad request, 401 no or bad token, 403
// install.blocked (rule: the policy rule), 404 not found (kind: repo, ref,
// commit, unreachable, path), 422 refused content (budget, unsafe tree),
// 502/503/504 upstream or the mirror itself failing (the client may fail
// over and fall back).

// Response headers of GET /v1/snapshot.
const (
	HeaderDigest   = "X-Reasonix-Digest"   // the tree digest of the archive's content
	HeaderVerified = "X-Reasonix-Verified" // "true": the commit is proven on a branch or tag
	HeaderFiles    = "X-Reasonix-Files"
	HeaderBytes    = "X-Reasonix-Bytes" // file content bytes
)

// maxPaths bounds the folders one snapshot request may name.
const maxPaths = 1000

type clientKey struct{}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", s.instrument("healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})))
	mux.Handle("GET /readyz", s.instrument("readyz", http.HandlerFunc(s.readyz)))
	mux.Handle("GET /metrics", s.instrument("metrics", s.auth(promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{}))))
	mux.Handle("GET /v1/refs", s.instrument("refs", s.auth(http.HandlerFunc(s.handleRefs))))
	mux.Handle("GET /v1/resolve", s.instrument("resolve", s.auth(http.HandlerFunc(s.handleResolve))))
	mux.Handle("GET /v1/reachable", s.instrument("reachable", s.auth(http.HandlerFunc(s.handleReachable))))
	mux.Handle("GET /v1/snapshot", s.instrument("snapshot", s.auth(http.HandlerFunc(s.handleSnapshot))))
	mux.Handle("GET /v1/marketplace", s.instrument("marketplace", s.auth(http.HandlerFunc(s.handleMarketplace))))
	mux.Handle("/", s.instrument("other", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{Status: http.StatusNotFound, Code: plugind.CodeInvalidSource, Msg: "no such route: " + r.Method + " " + r.URL.Path})
	})))
	return mux
}

// statusWriter remembers the status for metrics and logs.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Server) instrument(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		d := time.Since(start)
		s.m.requests.WithLabelValues(route, strconv.Itoa(sw.status)).Inc()
		s.m.duration.WithLabelValues(route).Observe(d.Seconds())
		level := slog.LevelDebug
		if sw.status >= 500 {
			level = slog.LevelWarn
		}
		s.log.Log(r.Context(), level, "request", "route", route, "status", sw.status, "ms", d.Milliseconds(), "client", clientOf(r.Context()))
	})
}

func clientOf(ctx context.Context) string {
	c, _ := ctx.Value(clientKey{}).(string)
	return c
}

// auth admits requests bearing a live client token.
func (s *Server) auth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		token = strings.TrimSpace(token)
		if !ok || token == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="reasonix-mirror"`)
			writeError(w, &apiError{Status: http.StatusUnauthorized, Code: plugind.CodeSourceUnreadable, Msg: "the mirror needs a token: set REASONIX_MIRROR_TOKEN (an operator makes one with: reasonix mirror token create)"})
			return
		}
		name, ok, err := s.cfg.DB.Authenticate(r.Context(), token)
		if err != nil {
			s.log.Warn("token check failed", "err", err)
			writeError(w, &apiError{Status: http.StatusServiceUnavailable, Code: plugind.CodeSourceUnreadable, Msg: "the mirror cannot check tokens right now (its database is unreachable)"})
			return
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="reasonix-mirror", error="invalid_token"`)
			writeError(w, &apiError{Status: http.StatusUnauthorized, Code: plugind.CodeSourceUnreadable, Msg: "the mirror refused REASONIX_MIRROR_TOKEN: unknown or revoked"})
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, name)))
	})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	status := map[string]string{"postgres": "ok", "objects": "ok"}
	code := http.StatusOK
	if err := s.cfg.DB.Ping(ctx); err != nil {
		s.log.Warn("not ready: PostgreSQL", "err", err)
		status["postgres"], code = "unreachable", http.StatusServiceUnavailable
	}
	if err := s.cfg.Objects.Ping(ctx); err != nil {
		s.log.Warn("not ready: object store", "err", err)
		status["objects"], code = "unreachable", http.StatusServiceUnavailable
	}
	writeJSON(w, code, status)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, e *apiError) { writeJSON(w, e.Status, e) }

// audit appends to the audit log; a failure to is logged, not the
// request's: the answer is already decided.
func (s *Server) audit(ctx context.Context, e meta.Entry) {
	e.Replica = s.cfg.ReplicaID
	if e.Client == "" {
		e.Client = clientOf(ctx)
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := s.cfg.DB.Audit(actx, e); err != nil {
		s.log.Warn("audit log", "err", err)
	}
}

// request is what every /v1 route reads first: the repository, checked
// against the policy.
func (s *Server) request(w http.ResponseWriter, r *http.Request, action string) (source.Source, *meta.Entry, bool) {
	q := r.URL.Query()
	e := &meta.Entry{Action: action, Ref: q.Get("ref"), SHA: q.Get("sha")}
	raw := q.Get("repo")
	src, err := parseRepo(raw)
	if err != nil {
		e.Repo = source.Display(raw)
		s.fail(w, r, e, err)
		return source.Source{}, nil, false
	}
	e.Repo = src.Key()
	if sha := q.Get("sha"); sha != "" || action == "reachable" || action == "snapshot" || action == "marketplace" {
		if !source.IsSHA(sha) {
			s.fail(w, r, e, badRequest("sha %q is not a 40-hex lower-case commit id", sha))
			return source.Source{}, nil, false
		}
	}
	if err := s.allowed(src.Key()); err != nil {
		s.fail(w, r, e, err)
		return source.Source{}, nil, false
	}
	return src, e, true
}

// parseRepo reads a repository URL with the source grammar's checks.
func parseRepo(raw string) (source.Source, error) {
	if raw == "" {
		return source.Source{}, badRequest("repo is required (the repository's https URL)")
	}
	src, err := source.ParseRepoURL(raw, false)
	if err != nil {
		return source.Source{}, badRequest("repo: %v", err)
	}
	if !src.IsRemote() || src.Ref != "" || src.Subdir != "" {
		return source.Source{}, badRequest("repo %q is not a repository URL", source.Display(raw))
	}
	return src, nil
}

// fail answers err and audits it.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, e *meta.Entry, err error) {
	ae := toAPI(err)
	switch {
	case ae.Code == plugind.CodeBlocked:
		e.Outcome, e.Detail = "blocked", ae.Rule
		if e.Detail == "" {
			e.Detail = ae.Msg
		}
		s.log.Info("blocked by policy", "repo", e.Repo, "rule", ae.Rule, "client", clientOf(r.Context()))
	case ae.Status == http.StatusNotFound:
		e.Outcome, e.Detail = "not_found", ae.Msg
	default:
		e.Outcome, e.Detail = "error", ae.Msg
	}
	s.audit(r.Context(), *e)
	writeError(w, ae)
}

func (s *Server) handleRefs(w http.ResponseWriter, r *http.Request) {
	src, e, ok := s.request(w, r, "refs")
	if !ok {
		return
	}
	l, outcome, err := s.refs(r.Context(), src)
	if err != nil {
		s.fail(w, r, e, err)
		return
	}
	s.hit("refs", outcome)
	e.Outcome = outcome
	s.audit(r.Context(), *e)
	writeJSON(w, http.StatusOK, RefsResponse{Head: l.Head, Commits: l.Commits})
}

// RefsResponse is GET /v1/refs's answer.
type RefsResponse struct {
	Head    string            `json:"head"`
	Commits map[string]string `json:"commits"`
}

// ResolveResponse is GET /v1/resolve's answer.
type ResolveResponse struct {
	SHA string `json:"sha"`
	Ref string `json:"ref"`
}

// ETag is the mirror's validator for a resolved ref: the commit itself.
func ETag(sha string) string { return `"` + sha + `"` }

func (s *Server) handleResolve(w http.ResponseWriter, r *http.Request) {
	src, e, ok := s.request(w, r, "resolve")
	if !ok {
		return
	}
	ref := r.URL.Query().Get("ref")
	if ref != "" && ref != host.HeadRef {
		if err := source.CheckRef(ref); err != nil {
			s.fail(w, r, e, badRequest("ref: %v", err))
			return
		}
	}
	if ref == host.HeadRef {
		ref = ""
	}
	got, outcome, err := s.resolve(r.Context(), src, ref)
	if err != nil {
		s.fail(w, r, e, err)
		return
	}
	s.hit("resolve", outcome)
	e.SHA, e.Outcome = got.SHA, outcome
	etag := ETag(got.SHA)
	w.Header().Set("ETag", etag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && (inm == etag || inm == "W/"+etag) {
		e.Outcome += ",not_modified"
		s.audit(r.Context(), *e)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	s.audit(r.Context(), *e)
	writeJSON(w, http.StatusOK, ResolveResponse{SHA: got.SHA, Ref: got.Ref})
}

func (s *Server) handleReachable(w http.ResponseWriter, r *http.Request) {
	src, e, ok := s.request(w, r, "reachable")
	if !ok {
		return
	}
	q := r.URL.Query()
	hint := q.Get("hint")
	if hint != "" && source.CheckRef(hint) != nil {
		hint = "" // only a hint
	}
	outcome, err := s.reachable(r.Context(), src, q.Get("sha"), hint)
	if err != nil {
		s.fail(w, r, e, err)
		return
	}
	s.hit("reachable", outcome)
	e.Outcome = outcome
	s.audit(r.Context(), *e)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) hit(op, outcome string) {
	if outcome == outcomeHit {
		s.m.cache.WithLabelValues(op, "hit").Inc()
	}
}

// checkPaths validates the requested folders.
func checkPaths(raw []string) ([]string, error) {
	if len(raw) > maxPaths {
		return nil, badRequest("%d paths: at most %d per request", len(raw), maxPaths)
	}
	out := make([]string, 0, len(raw))
	for _, p := range raw {
		if p == "" || p == "." {
			out = append(out, "")
			continue
		}
		clean, err := plugind.LocalPath(p)
		if err != nil || clean != p {
			return nil, badRequest("path %q is not a clean relative folder path", p)
		}
		out = append(out, clean)
	}
	return out, nil
}

func (s *Server) handleSnapshot(w http.ResponseWriter, r *http.Request) {
	src, e, ok := s.request(w, r, "snapshot")
	if !ok {
		return
	}
	q := r.URL.Query()
	sha := q.Get("sha")
	paths, err := checkPaths(q["path"])
	if err != nil {
		s.fail(w, r, e, err)
		return
	}
	e.Paths = pathsKey(paths)
	var o meta.Object
	var outcome string
	var body io.ReadCloser
	var size int64
	for attempt := 0; ; attempt++ {
		o, outcome, err = s.snapshot(r.Context(), src, sha, paths)
		if err != nil {
			s.fail(w, r, e, err)
			return
		}
		body, size, err = s.cfg.Objects.Get(r.Context(), o.Digest)
		if err == nil {
			break
		}
		if errors.Is(err, objects.ErrMissing) && attempt == 0 {
			// Deleted from the store behind the mirror's back: forget it
			// and store it again.
			s.log.Warn("an archive the database names is missing from the object store; fetching it again", "digest", o.Digest)
			if ferr := s.cfg.DB.ForgetObject(r.Context(), o.Digest); ferr != nil {
				s.fail(w, r, e, ferr)
				return
			}
			continue
		}
		s.fail(w, r, e, err)
		return
	}
	defer body.Close()
	s.hit("fetch", outcome)
	e.Outcome, e.Digest = outcome, o.Digest
	s.audit(r.Context(), *e)
	h := w.Header()
	h.Set("Content-Type", "application/gzip")
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	h.Set(HeaderDigest, o.Digest)
	h.Set(HeaderVerified, "true") // the mirror stores only commits it proved reachable
	h.Set(HeaderFiles, strconv.Itoa(o.Files))
	h.Set(HeaderBytes, strconv.FormatInt(o.Bytes, 10))
	w.WriteHeader(http.StatusOK)
	// The archive is streamed as it comes: clients check the tree digest
	// themselves. Its hash is checked on the way, so an object altered in
	// the store is refused by this client and gone for the next one.
	h256 := sha256.New()
	n, err := io.Copy(w, io.TeeReader(body, h256))
	s.m.served.Add(float64(n))
	switch {
	case err != nil && r.Context().Err() == nil:
		s.log.Warn("snapshot download cut short", "digest", o.Digest, "sent", n, "of", size, "err", err)
	case err == nil && hex.EncodeToString(h256.Sum(nil)) != o.ArchiveSHA256:
		hctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 30*time.Second)
		defer cancel()
		if herr := s.heal(hctx, o.Digest); herr != nil {
			s.log.Error("heal an altered archive", "digest", o.Digest, "err", herr)
		}
	}
}

func (s *Server) handleMarketplace(w http.ResponseWriter, r *http.Request) {
	src, e, ok := s.request(w, r, "marketplace")
	if !ok {
		return
	}
	q := r.URL.Query()
	p, doc, found, err := s.cfg.DB.Marketplace(r.Context(), src.Key(), q.Get("sha"), q.Get("path"))
	if err == nil && !found {
		err = &apiError{Status: http.StatusNotFound, Code: plugind.CodeNotFound, Kind: "path",
			Msg: fmt.Sprintf("the mirror holds no marketplace document of %s at %s (it keeps those of trees it fetched whole)", src.Key(), host.Short(q.Get("sha")))}
	}
	if err != nil {
		s.fail(w, r, e, err)
		return
	}
	e.Outcome, e.Paths = outcomeHit, p
	s.audit(r.Context(), *e)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Reasonix-Path", p)
	_, _ = w.Write(doc)
}
