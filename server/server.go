// Package server is the HTTP daemon of SPEC §12 (`reasonix serve`): the
// same installer backend as the CLI, behind a loopback listener, a bearer
// token, Host and Origin checks and capped bodies.
//
// One concern per file: server.go the type and its lifecycle (graceful
// shutdown), routes.go the handlers, security.go the request checks,
// token.go the token file, logging.go the request log, errors.go the JSON
// errors and status mapping, plugins.go the cached listing and reload,
// page.go the installer page and route access, session.go browser sign-in
// (login codes, sessions, page tokens), progress.go live progress
// (server-sent events), addrfile.go the serve.addr file, proof.go the
// daemon's proof of identity, daemonclient.go the client that asks for
// it before sending the token, and updates.go the background update check
// and GET /updates.
package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/httpserve"
	"reasonix.io/plugind/lockfile"
)

// DefaultShutdownTimeout is how long in-flight requests may run after a
// stop signal before they are cancelled.
const DefaultShutdownTimeout = 30 * time.Second

// Config configures a Server.
type Config struct {
	Installer *installer.Installer
	// Token is the bearer token every route but /healthz requires.
	Token string
	Log   *slog.Logger
	// AllowRemote is set when the daemon listens beyond loopback: then a
	// Host that is an IP literal is accepted too (IP literals cannot be
	// rebound by DNS). Host names other than localhost never are.
	AllowRemote bool
	// MaxBodyBytes caps request bodies (default MaxBodyBytes).
	MaxBodyBytes int64
	// ShutdownTimeout bounds the graceful part of a shutdown (default
	// DefaultShutdownTimeout); negative means cancel in-flight work at once.
	ShutdownTimeout time.Duration
	// Now is the clock of login codes and sessions (tests); nil: time.Now.
	Now func() time.Time
	// CheckUpdates is how often Serve checks for updates in the background
	// (`serve --check-updates`); 0 never. FirstCheck is how long after
	// start the first check waits (default defaultFirstCheck). Offline
	// (REASONIX_OFFLINE=1) skips every check, keeping the last success.
	CheckUpdates time.Duration
	FirstCheck   time.Duration
	Offline      bool
	// Project is the project the daemon serves (serve --project, or the
	// one found from where it was started); nil: none. GET /project and
	// the page say how the home stands against its lock.
	Project *lockfile.Project
}

// Server serves the backend over HTTP. Create it with New.
type Server struct {
	in          *installer.Installer
	log         *slog.Logger
	tokenSum    [32]byte
	proofKey    string // the token, as the key of the daemon's proof (proof.go)
	allowRemote bool
	maxBody     int64
	grace       time.Duration

	// life is cancelled when in-flight work must stop (after the grace
	// period of a shutdown): every request's context, and the detached
	// contexts of mutations and shared plans, derive from it.
	life context.Context
	stop context.CancelFunc

	project *lockfile.Project // nil: none (see Config.Project)

	plans singleflight.Group // concurrent identical plan requests
	list  listView

	page     *pageAssets
	sessions *sessionStore
	progress progressHub
	flightMu sync.Mutex
	flights  map[string]*progressFanout // progress of shared plans, by plan key
	checks   updateChecks

	// draining is closed when a shutdown begins: long-lived answers (event
	// streams) end then instead of holding the shutdown for its grace.
	draining  chan struct{}
	drainOnce sync.Once
}

// New returns a Server over cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Installer == nil {
		return nil, errors.New("server: no installer")
	}
	if len(cfg.Token) < minTokenLen {
		return nil, fmt.Errorf("server: the token must be at least %d characters", minTokenLen)
	}
	page, err := loadPageAssets()
	if err != nil {
		return nil, err
	}
	s := &Server{
		in: cfg.Installer, log: cmp.Or(cfg.Log, slog.New(slog.DiscardHandler)), tokenSum: sha256.Sum256([]byte(cfg.Token)), proofKey: cfg.Token,
		allowRemote: cfg.AllowRemote, maxBody: plugind.PositiveOr(cfg.MaxBodyBytes, MaxBodyBytes), grace: cmp.Or(cfg.ShutdownTimeout, DefaultShutdownTimeout),
		page: page, sessions: newSessionStore(cfg.Now), flights: map[string]*progressFanout{}, draining: make(chan struct{}),
	}
	s.project = cfg.Project
	s.checks.every, s.checks.first, s.checks.offline = max(cfg.CheckUpdates, 0), cmp.Or(cfg.FirstCheck, defaultFirstCheck), cfg.Offline
	s.life, s.stop = context.WithCancel(context.Background())
	s.list.in, s.list.life = cfg.Installer, s.life
	return s, nil
}

// drain tells long-lived answers to end: a shutdown has begun.
func (s *Server) drain() { s.drainOnce.Do(func() { close(s.draining) }) }

// Handler returns the daemon's handler: request log, panic recovery, Host,
// Origin, body cap, then authentication (what each route requires: see
// routeAccess) and routing.
func (s *Server) Handler() http.Handler {
	mux := s.routes()
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", apiCSP)
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Referrer-Policy", "no-referrer")
		_, pattern := mux.Handler(r)
		r, ok := s.authenticate(w, r, routeAccess[pattern])
		if !ok {
			return
		}
		if pattern == "" {
			noRoute(w, r, mux)
			return
		}
		mux.ServeHTTP(w, r)
	})
	h = s.limitBody(h)
	h = s.checkOrigin(h)
	h = s.checkHost(h)
	h = s.recoverPanics(h)
	return s.logRequests(h)
}

// Serve serves on ln until ctx is done, then shuts down gracefully
// (httpserve.Serve): long-lived answers (event streams) end at once,
// in-flight requests get the grace period, then their contexts are
// cancelled. The background update checks run meanwhile and are
// cancelled at once when ctx is done (a check is a read: nothing is lost).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	stopDraining := context.AfterFunc(ctx, s.drain)
	defer stopDraining()
	s.startUpdateChecks(ctx)
	defer s.checks.wg.Wait()
	return httpserve.Serve(ctx, &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return s.life },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}, ln, s.grace, s.stop, s.log)
}

// recoverPanics turns a handler panic into a 500 JSON answer.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("handler panic", "method", r.Method, "path", r.URL.EscapedPath(), "panic", fmt.Sprint(v))
			writeError(w, http.StatusInternalServerError, CodeInternal, "internal error")
		}()
		next.ServeHTTP(w, r)
	})
}

// detached returns a context for work that must not stop when one client
// goes away (an install, a plan shared by several requests) but does stop
// when the server cancels in-flight work.
func (s *Server) detached() (context.Context, context.CancelFunc) {
	return context.WithCancel(s.life)
}
