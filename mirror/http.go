package mirror

import (
	"cmp"
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

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/httpstatus"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/objects"
	"reasonix.io/plugind/resolver/host"
	wire "reasonix.io/plugind/resolver/host/mirror"
)

// The HTTP API (every /v1 and /log route and /metrics need "Authorization: Bearer
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
//	GET /v1/policy                                {"runtime"}: the rule clients apply to run-time fetches (policyroute.go)
//	GET /log/latest, /log/lookup/…, /log/tile/…   the checksum log (loghttp.go), with --log-key
//
// repo is the repository's HTTPS URL as sources name it
// (https://github.com/o/r.git, https://git.example.test/team/tools.git);
// ref "" is the default branch. Errors are JSON {"error", "errorCode",
// "kind"?, "rule"?}: 400 bad request, 401 no or bad token, 403
// install.blocked (rule: the policy rule; no rule: outside the token's
// scopes, which the message names), 404 not found (kind: repo, ref,
// commit, unreachable, path), 422 refused content (budget, unsafe tree),
// 502/503/504 upstream or the mirror itself failing (the client may fail
// over and fall back). Every parameter is checked before use (query.go);
// every answer, refusals included, is given only once its audit row is
// written; and the mirror's own failures (PostgreSQL, the object store,
// the audit log) are answered with an incident name, their details in the
// log only.
//
// A token's scopes (policy RULEs, meta.Token) are checked on every route
// that takes a repository, after the policy and before anything is looked
// up, as the policy's allow rules match (case-insensitive, IDNA hosts,
// ".git" dropped, whole segments). A snapshot is asked for by (repo, sha,
// paths), never by tree digest alone: a token learns a digest only from
// an answer about a repository its scopes cover, and the only way to the
// bytes is through such a repository again. Because a snapshot holds its
// submodules' content, fetched with the mirror's own credentials, their
// repositories must be inside the scopes too (submoduleOutOfScope). The
// mirror reaches upstream with its own environment's credentials
// (app.Upstream); nothing a client sends (its token, a URL's userinfo,
// which the source grammar refuses) is ever passed upstream.

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
	mux.Handle("GET /metrics", s.instrument("metrics", s.auth(s.m)))
	for route, h := range map[string]http.HandlerFunc{"refs": s.handleRefs, "resolve": s.handleResolve,
		"reachable": s.handleReachable, "snapshot": s.handleSnapshot, "marketplace": s.handleMarketplace} {
		mux.Handle("GET /v1/"+route, s.instrument(route, s.auth(h)))
	}
	mux.Handle("GET /v1/policy", s.instrument("policy", s.auth(http.HandlerFunc(s.handlePolicy))))
	if s.cfg.LogKey != nil {
		s.logRoutes(mux)
	}
	mux.Handle("/", s.instrument("other", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{Status: http.StatusNotFound, Code: plugind.CodeInvalidSource, Msg: "no such route: " + r.Method + " " + r.URL.Path})
	})))
	return mux
}

func (s *Server) instrument(route string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := httpstatus.Record(w)
		h.ServeHTTP(sw, r)
		status := sw.Status()
		d := time.Since(start)
		s.m.add(requestsTotal, 1, "code", strconv.Itoa(status), "route", route)
		s.m.add(requestSeconds, d.Seconds(), "route", route)
		level := slog.LevelDebug
		if status >= 500 {
			level = slog.LevelWarn
		}
		s.log.Log(r.Context(), level, "request", "route", route, "status", status, "ms", d.Milliseconds(), "client", clientOf(r.Context()))
	})
}

// clientOf names the request's token ("" before auth admitted it).
func clientOf(ctx context.Context) string { return tokenOf(ctx).Name }

// tokenOf is the request's live token, put there by auth.
func tokenOf(ctx context.Context) meta.Token {
	t, _ := ctx.Value(clientKey{}).(meta.Token)
	return t
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
		tok, ok, err := s.cfg.DB.Authenticate(r.Context(), token)
		if errors.Is(err, meta.ErrTokenScopes) {
			// Fail closed: a token whose scopes cannot be read is not one
			// without scopes.
			s.log.Warn("token refused", "err", err)
			writeError(w, &apiError{Status: http.StatusForbidden, Code: plugind.CodeSourceUnreadable, Msg: "the mirror cannot read the scopes of REASONIX_MIRROR_TOKEN; its operator must make it again (reasonix mirror token create)"})
			return
		}
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
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, tok)))
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

// audit appends e to the audit log. An answer is never given without its
// row: a caller that gets an error answers unaudited instead.
func (s *Server) audit(ctx context.Context, e meta.Entry) error {
	e.Replica = s.cfg.ReplicaID
	e.Client = cmp.Or(e.Client, clientOf(ctx))
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return s.cfg.DB.Audit(actx, e)
}

// answer audits e and, once its row is written, lets respond write the
// answer; when the row cannot be written, the request fails instead.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, e *meta.Entry, respond func()) {
	if err := s.audit(r.Context(), *e); err != nil {
		writeError(w, s.incident(r, "audit log", err, http.StatusServiceUnavailable, "the mirror cannot write its audit log, so it does not answer"))
		return
	}
	respond()
}

// request is what every /v1 route reads first: its parameters, checked
// (readQuery), and the repository, checked against the policy and then
// the token's scopes (permitted) before anything is looked up, so a refusal
// says nothing of what the mirror holds.
func (s *Server) request(w http.ResponseWriter, r *http.Request, action string) (query, *meta.Entry, bool) {
	e := &meta.Entry{Action: action}
	q, err := readQuery(r.URL.Query(), action, e)
	if err == nil {
		err = s.allowed(q.src)
	}
	if err != nil {
		s.fail(w, r, e, err)
		return query{}, nil, false
	}
	if miss := s.outOfScope(r.Context(), q.src); miss != nil {
		s.refuseScope(w, r, e, miss)
		return query{}, nil, false
	}
	return q, e, true
}

// refuseScope answers a request outside its token's scopes, audited as
// outcomeOutOfScope (the operator finds them with mirror audit --outcome).
func (s *Server) refuseScope(w http.ResponseWriter, r *http.Request, e *meta.Entry, miss *apiError) {
	e.Outcome, e.Detail = outcomeOutOfScope, miss.Msg
	s.log.Info("outside the token's scopes", "repo", e.Repo, "client", clientOf(r.Context()))
	s.answer(w, r, e, func() { writeError(w, miss) })
}

// fail answers err and audits it.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, e *meta.Entry, err error) {
	ae := s.toAPI(r, err)
	switch {
	case ae.Code == plugind.CodeBlocked:
		e.Outcome, e.Detail = "blocked", cmp.Or(ae.Rule, ae.Msg)
		s.log.Info("blocked by policy", "repo", e.Repo, "rule", ae.Rule, "client", clientOf(r.Context()))
	case ae.Status == http.StatusNotFound:
		e.Outcome, e.Detail = "not_found", ae.Msg
	default:
		e.Outcome, e.Detail = "error", ae.Msg
	}
	s.answer(w, r, e, func() { writeError(w, ae) })
}

func (s *Server) handleRefs(w http.ResponseWriter, r *http.Request) {
	var l *host.Refs
	if _, e, ok := s.run(w, r, "refs", func(ctx context.Context, repo host.Repo, _ query) (err error) {
		l, err = s.refs(ctx, repo)
		return err
	}); ok {
		s.answer(w, r, e, func() { writeJSON(w, http.StatusOK, l) })
	}
}

func (s *Server) handleResolve(w http.ResponseWriter, r *http.Request) {
	var got host.Pin
	q, e, ok := s.run(w, r, "resolve", func(ctx context.Context, repo host.Repo, q query) (err error) {
		got, err = repo.Resolve(ctx, q.ref, nil)
		return err
	})
	if !ok {
		return
	}
	e.SHA = got.SHA
	etag := wire.ETag(got.SHA)
	if inm := r.Header.Get("If-None-Match"); inm != "" && (inm == etag || inm == "W/"+etag) {
		e.Outcome += ",not_modified"
		s.answer(w, r, e, func() {
			w.Header().Set("ETag", etag)
			w.WriteHeader(http.StatusNotModified)
		})
		return
	}
	s.answer(w, r, e, func() {
		w.Header().Set("ETag", etag)
		writeJSON(w, http.StatusOK, wire.ResolveResponse{SHA: got.SHA, Ref: host.RefName(q.ref)})
	})
}

func (s *Server) handleReachable(w http.ResponseWriter, r *http.Request) {
	if _, e, ok := s.run(w, r, "reachable", func(ctx context.Context, repo host.Repo, q query) error {
		return repo.Reachable(ctx, q.sha, q.hint)
	}); ok {
		s.answer(w, r, e, func() { w.WriteHeader(http.StatusNoContent) })
	}
}

func (s *Server) handleSnapshot(w http.ResponseWriter, r *http.Request) {
	q, e, ok := s.request(w, r, "snapshot")
	if !ok {
		return
	}
	var o meta.Stored
	var outcome string
	var body io.ReadCloser
	var size int64
	var err error
	for attempt := 0; err == nil && body == nil; attempt++ {
		if o, outcome, err = s.snapshot(r.Context(), q.src, q.sha, q.paths); err != nil {
			break
		}
		body, size, err = s.cfg.Objects.Get(r.Context(), o.Digest)
		if errors.Is(err, objects.ErrMissing) && attempt == 0 {
			// Deleted from the store behind the mirror's back: forget it
			// and store it again.
			s.log.Warn("an archive the database names is missing from the object store; fetching it again", "digest", o.Digest)
			err = s.cfg.DB.ForgetObject(r.Context(), o.Digest)
		}
	}
	if err != nil {
		s.fail(w, r, e, err)
		return
	}
	defer body.Close()
	if miss := s.submoduleOutOfScope(r.Context(), q.src.Key(), q.sha, o.Submodules); miss != nil {
		e.Digest = o.Digest
		s.refuseScope(w, r, e, miss)
		return
	}
	if outcome == outcomeHit {
		s.m.add(cacheTotal, 1, "op", "fetch", "result", "hit")
	}
	e.Outcome, e.Digest = outcome, o.Digest
	s.answer(w, r, e, func() { s.sendArchive(w, r, o.Object, body, size) })
}

// sendArchive streams a stored archive, checking its hash on the way.
func (s *Server) sendArchive(w http.ResponseWriter, r *http.Request, o meta.Object, body io.Reader, size int64) {
	h := w.Header()
	h.Set("Content-Type", "application/gzip")
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	h.Set(wire.HeaderDigest, o.Digest)
	h.Set(wire.HeaderVerified, "true") // the mirror stores only commits it proved reachable
	h.Set(wire.HeaderFiles, strconv.Itoa(o.Files))
	h.Set(wire.HeaderBytes, strconv.FormatInt(o.Bytes, 10))
	w.WriteHeader(http.StatusOK)
	// The archive is streamed as it comes: clients check the tree digest
	// themselves. Its hash is checked on the way, so an object altered in
	// the store is refused by this client and gone for the next one.
	h256 := sha256.New()
	n, err := io.Copy(w, io.TeeReader(body, h256))
	s.m.add(servedBytes, float64(n))
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
	q, e, ok := s.request(w, r, "marketplace")
	if !ok {
		return
	}
	want := ""
	if len(q.paths) == 1 {
		want = q.paths[0]
	}
	p, doc, found, err := s.cfg.DB.Marketplace(r.Context(), q.src.Key(), q.sha, want)
	if err == nil && !found {
		err = &apiError{Status: http.StatusNotFound, Code: plugind.CodeNotFound, Kind: "path",
			Msg: fmt.Sprintf("the mirror holds no marketplace document of %s at %s (it keeps those of trees it fetched whole)", q.src.Key(), host.Short(q.sha))}
	}
	if err != nil {
		s.fail(w, r, e, err)
		return
	}
	e.Outcome, e.Paths = outcomeHit, p
	s.answer(w, r, e, func() {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Reasonix-Path", p)
		_, _ = w.Write(doc)
	})
}
