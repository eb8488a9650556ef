// Package fakegithub serves a fake GitHub on loopback for tests (SPEC §13):
// bare repositories built with real git, served over smart HTTP by real
// `git http-backend`, the handful of REST endpoints the resolver uses
// (repository, commits, branches, tags, compare, tarball, contents, git
// commits and trees), and archives made
// by `git archive` with GitHub's `owner-repo-<sha7>/` root. It counts
// requests and injects faults so tests can assert on network use and
// exercise retries and fallbacks.
//
// It also serves what an attacker would: trees no honest git would make
// (CommitRawTree), hand-made archives (SetArchive) and a commit's archive
// altered as a lying endpoint would (TamperArchive), commits reachable from
// no branch or tag, as GitHub serves fork-network commits
// (CommitUnreachable), cheap huge repositories (CommitLargeFile,
// CommitManyFiles), and packs crafted to cost their reader (BuildPack,
// ServePack: deltas stored last first, a million tiny objects). WithPlainGit turns it into any other git host: smart
// HTTP only, repositories at nested paths.
//
// The core server (Start/Close) does not depend on package testing, so the
// standalone command in cmd/fakegithub can run it for people; New is the
// thin test wrapper.
package fakegithub

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"reasonix.io/plugind/internal/httpstatus"
)

// Option configures Start.
type Option func(*options)

type options struct {
	addr      string
	logger    *slog.Logger
	plainGit  bool
	apiBudget int
	apiWindow time.Duration
	gitCache  bool
	// basicUser and basicPassword: WithBasicAuth's.
	basicUser, basicPassword string
}

// WithAddr sets the listen address; it must be a loopback address (the
// default is 127.0.0.1:0, an ephemeral port).
func WithAddr(addr string) Option { return func(o *options) { o.addr = addr } }

// WithLogger logs every request (method, path, route, status, duration) to l.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// failer is the part of testing.TB the helpers need; kept as an interface so
// the core does not import package testing.
type failer interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Server is a running fake GitHub. URL is what REASONIX_GITHUB_URL should be
// set to, APIURL what REASONIX_GITHUB_API_URL should be set to (GitHub
// Enterprise layout: URL + "/api/v3"). In plain-git mode (WithPlainGit)
// APIURL is empty: there is no API to point at.
type Server struct {
	URL    string
	APIURL string

	dir      string // everything the server writes lives below it
	repoRoot string // GIT_PROJECT_ROOT: <repoRoot>/<owner>/<name>.git
	gitBin   string
	backend  string // git-http-backend
	log      *slog.Logger
	tb       failer
	plain    bool      // WithPlainGit: smart HTTP only, nested repository paths
	basic    [2]string // WithBasicAuth's user and password; "" user: none
	auth     authLog

	srv  *http.Server
	done chan struct{} // closed by Close; ends stalls

	mu             sync.Mutex // guards the fields below
	repos          map[string]*Repo
	faults         []*faultEntry
	counts         Counts
	repoCounts     map[string]*Counts
	refuseGit      bool
	refuseSHAWants bool
	serveAnyWants  bool
	token          string
	archives       map[string][]byte // made by git archive, keyed by repoKey@sha
	craftedArchive map[string][]byte // SetArchive's, same keys; always win
	craftedPack    map[string][]byte // ServePack's, by repository path key
	budget         *budget           // WithAPIBudget's; nil: none
	gitCache       *gitCache         // WithGitCache's; nil: none
	limitedSeen    bool              // a request was answered over the budget (since ResetCounts)

	archiveFlight singleflight.Group

	life     sync.Mutex // guards closed against wg.Add racing Close's Wait
	closed   bool
	wg       sync.WaitGroup
	inflight atomic.Int64

	closeOnce sync.Once
	closeErr  error
}

// Start runs a fake GitHub whose repositories live below dir (which must
// exist). Close stops it.
func Start(dir string, opts ...Option) (*Server, error) {
	return start(dir, nil, opts)
}

func start(dir string, tb failer, opts []Option) (*Server, error) {
	o := options{addr: "127.0.0.1:0"}
	for _, opt := range opts {
		opt(&o)
	}
	if err := checkLoopback(o.addr); err != nil {
		return nil, err
	}
	if o.apiBudget < 0 || o.apiWindow < 0 {
		return nil, fmt.Errorf("fakegithub: API budget %d per %s: negative", o.apiBudget, o.apiWindow)
	}
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("fakegithub needs git: %w", err)
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("fakegithub dir %s: %w", dir, err)
	}
	s := &Server{
		dir:            absDir,
		repoRoot:       filepath.Join(absDir, "repos"),
		gitBin:         gitBin,
		log:            o.logger,
		tb:             tb,
		plain:          o.plainGit,
		basic:          [2]string{o.basicUser, o.basicPassword},
		done:           make(chan struct{}),
		repos:          map[string]*Repo{},
		repoCounts:     map[string]*Counts{},
		archives:       map[string][]byte{},
		craftedArchive: map[string][]byte{},
		craftedPack:    map[string][]byte{},
		budget:         newBudget(o.apiBudget, o.apiWindow),
	}
	if o.gitCache {
		s.gitCache = &gitCache{answers: map[string]*httptest.ResponseRecorder{}}
	}
	execPath, err := s.runGit(context.Background(), "", nil, "--exec-path")
	if err != nil {
		return nil, err
	}
	s.backend = filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	if _, err := os.Stat(s.backend); err != nil {
		return nil, fmt.Errorf("fakegithub needs git-http-backend: %w", err)
	}
	if err := os.MkdirAll(s.repoRoot, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", s.repoRoot, err)
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", o.addr, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("fakegithub: %s is not a loopback address", ln.Addr())
	}
	s.URL = "http://" + ln.Addr().String()
	if !s.plain {
		s.APIURL = s.URL + apiPrefix
	}
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// checkLoopback refuses listen addresses that could expose the fake beyond
// this machine, including an empty host (all interfaces).
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("fakegithub address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("fakegithub address %q is not loopback; use 127.0.0.1:PORT", addr)
}

// Close stops the server and waits for in-flight requests (and the git
// processes they run) to finish. Stalled requests are released.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.life.Lock()
		s.closed = true
		s.life.Unlock()
		close(s.done)
		s.closeErr = s.srv.Close()
		s.wg.Wait()
	})
	return s.closeErr
}

// Env returns the environment entries that point a reasonix subprocess at
// this server as its GitHub. A plain-git server is no GitHub: Env is nil and
// tests point the product at CloneURL()s instead.
func (s *Server) Env() []string {
	if s.plain {
		return nil
	}
	return []string{
		"REASONIX_GITHUB_URL=" + s.URL,
		"REASONIX_GITHUB_API_URL=" + s.APIURL,
	}
}

// Dir is the directory holding the bare repositories.
func (s *Server) Dir() string { return s.repoRoot }

// InFlight reports how many requests are being handled right now; a test can
// use it to see that a cancelled client really let go of a stalled request.
func (s *Server) InFlight() int { return int(s.inflight.Load()) }

// RefuseGit makes every git smart-HTTP request fail with 403, as if git
// transport were unavailable. REST and archives keep working.
func (s *Server) RefuseGit(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseGit = on
}

// RefuseSHAWants makes upload-pack refuse wants that are not advertised ref
// tips: the allow-*-sha1-in-want capabilities disappear from the
// advertisement and a client that asks anyway gets "not our ref". It wins
// over ServeUnreachableWants. The default is GitHub's behaviour as this fake
// models it: any commit reachable from a branch or tag may be wanted by SHA;
// commits reachable from none (CommitUnreachable, DeleteBranch, a backwards
// ResetBranch) are refused over git, in protocol v0 and v2 alike.
func (s *Server) RefuseSHAWants(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseSHAWants = on
}

// ServeUnreachableWants makes upload-pack serve any object in the store by
// SHA, reachable or not (git's uploadpack.allowAnySHA1InWant; also what a
// stock git upload-pack does for protocol v2 clients, which it never checks).
// A client can then fetch a commit no branch or tag reaches over git, so a
// test can show that the client's own reachability check, not the server,
// refuses an unreachable pin.
func (s *Server) ServeUnreachableWants(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serveAnyWants = on
}

// wantPolicy is what upload-pack serves by SHA now. The caller holds s.mu.
func (s *Server) wantPolicy() wantPolicy {
	switch {
	case s.refuseSHAWants:
		return wantTips
	case s.serveAnyWants:
		return wantAny
	}
	return wantReachable
}

// RequireToken makes REST and git requests without the token fail with 401.
// It accepts "Authorization: Bearer T", "token T" or Basic auth whose
// password is T. An empty token turns the check off (the default).
func (s *Server) RequireToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

func (s *Server) enter() bool {
	s.life.Lock()
	defer s.life.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	s.inflight.Add(1)
	return true
}

func (s *Server) leave() {
	s.inflight.Add(-1)
	s.wg.Done()
}

// ServeHTTP counts the request, applies a matching fault, then dispatches.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		http.Error(w, "fakegithub is closing", http.StatusServiceUnavailable)
		return
	}
	defer s.leave()
	start := time.Now()
	sw := httpstatus.Record(w)
	req := s.classify(r)
	limited := s.spendBudget(sw.Header(), r, req)
	s.count(req, req.counter)
	if s.log != nil {
		defer func() {
			s.log.Info("request", "method", r.Method, "path", r.URL.Path, "route", req.routeName(),
				"status", sw.Status(), "bytes", sw.Bytes(), "duration", time.Since(start).Round(time.Microsecond))
		}()
	}
	if limited {
		writeRateLimited(sw, r)
		return
	}
	if f, ok := s.takeFault(r, req); ok {
		s.applyFault(sw, r, req, f)
		return
	}
	if !s.basicAuthorized(sw, r) {
		return
	}
	s.dispatch(sw, r, req)
}

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, req request) {
	switch req.kind {
	case RouteGit:
		s.serveGit(w, r, req)
	case RouteAPI:
		s.serveAPI(w, r, req)
	case RouteArchive:
		s.serveArchive(w, r, req)
	default:
		if s.plain { // no GitHub-shaped JSON from a host that is not GitHub
			http.NotFound(w, r)
			return
		}
		writeAPIError(w, http.StatusNotFound, "Not Found")
	}
}

// authorized reports whether r carries the required token, if any.
func (s *Server) authorized(r *http.Request) bool {
	s.mu.Lock()
	token := s.token
	s.mu.Unlock()
	if token == "" {
		return true
	}
	h := r.Header.Get("Authorization")
	if h == "Bearer "+token || h == "token "+token {
		return true
	}
	_, pass, ok := r.BasicAuth()
	return ok && pass == token
}

// lookup finds a repository by its path as a client spelled it.
func (s *Server) lookup(path string) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repos[pathKey(path)]
}

// Repo returns the repository created as owner/name (case-insensitive, like
// GitHub), or nil.
func (s *Server) Repo(owner, name string) *Repo { return s.lookup(owner + "/" + name) }

// RepoAt returns the repository created at path (case-insensitive), or nil.
func (s *Server) RepoAt(path string) *Repo { return s.lookup(path) }

// pathKey folds case: GitHub, GitLab and Gitea all treat repository paths
// case-insensitively.
func pathKey(path string) string { return strings.ToLower(path) }

// fail reports a helper's error: a test failure for servers made by New, a
// panic otherwise (the helpers have no error result, by design).
func (s *Server) fail(err error) {
	if s.tb != nil {
		s.tb.Helper()
		s.tb.Fatalf("fakegithub: %v", err)
		return
	}
	panic(fmt.Errorf("fakegithub: %w", err))
}

func (s *Server) helper() {
	if s.tb != nil {
		s.tb.Helper()
	}
}
