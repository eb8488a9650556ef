package fakegithub

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Route selects the requests a fault applies to: one of the Route constants,
// or a path prefix (any value starting with "/", see PathPrefix).
type Route string

const (
	RouteGit     Route = "git"     // info/refs, git-upload-pack, git-receive-pack
	RouteAPI     Route = "api"     // everything under /api/v3, including the tarball redirect
	RouteArchive Route = "archive" // archive downloads the tarball redirect points to
	RouteAll     Route = "*"       // every request
)

// PathPrefix matches requests whose URL path starts with prefix, e.g.
// PathPrefix("/acme/tools") for git on one repository or
// PathPrefix("/api/v3/repos/acme/tools/commits/") for one endpoint.
func PathPrefix(prefix string) Route {
	if !strings.HasPrefix(prefix, "/") {
		prefix = "/" + prefix
	}
	return Route(prefix)
}

func (rt Route) valid() bool {
	switch rt {
	case RouteGit, RouteAPI, RouteArchive, RouteAll:
		return true
	}
	return strings.HasPrefix(string(rt), "/")
}

func (rt Route) matches(r *http.Request, req request) bool {
	switch rt {
	case RouteAll:
		return true
	case RouteGit, RouteAPI, RouteArchive:
		return req.kind == rt
	}
	return strings.HasPrefix(r.URL.Path, string(rt))
}

// Fault is injected before normal handling. In order: Stall waits (ending
// early when the client goes away); then a non-zero Status is answered
// (with Retry-After set verbatim when given) instead of the real response;
// otherwise Truncate sends the real response's headers, with its full
// Content-Length, and half its body, then drops the connection; with neither,
// the real response follows the stall.
type Fault struct {
	Status     int
	RetryAfter string
	Times      int // how many requests it applies to; 0 = every one, forever
	Truncate   bool
	Stall      time.Duration
}

type faultEntry struct {
	route Route
	fault Fault
	left  int
}

// Fault adds f for requests matching route. Faults are tried in the order
// added; a request consumes one use of the first that matches.
func (s *Server) Fault(route Route, f Fault) {
	s.helper()
	if !route.valid() {
		s.fail(fmt.Errorf("fault route %q: use RouteGit, RouteAPI, RouteArchive, RouteAll or PathPrefix", route))
		return
	}
	if f.Times < 0 || f.Status < 0 || f.Status > 999 || f.Stall < 0 {
		s.fail(fmt.Errorf("fault %+v: negative or impossible values", f))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &faultEntry{route: route, fault: f, left: f.Times})
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

func (s *Server) takeFault(r *http.Request, req request) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range s.faults {
		if !e.route.matches(r, req) {
			continue
		}
		if e.fault.Times > 0 {
			e.left--
			if e.left == 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
		}
		return e.fault, true
	}
	return Fault{}, false
}

func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, req request, f Fault) {
	if f.Stall > 0 {
		t := time.NewTimer(f.Stall)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
	switch {
	case f.Status != 0:
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		msg := fmt.Sprintf("fakegithub: injected fault (status %d)", f.Status)
		if req.kind == RouteAPI {
			writeAPIError(w, f.Status, msg)
		} else {
			http.Error(w, msg, f.Status)
		}
	case f.Truncate:
		rec := &recorder{header: http.Header{}}
		s.dispatch(rec, r, req)
		rec.truncateTo(w)
	default:
		s.dispatch(w, r, req)
	}
}

// recorder buffers a whole response so it can be replayed truncated.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (rec *recorder) Header() http.Header { return rec.header }

func (rec *recorder) WriteHeader(code int) {
	if rec.status == 0 {
		rec.status = code
	}
}

func (rec *recorder) Write(p []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec.body.Write(p)
}

func (rec *recorder) Flush() {}

// truncateTo announces the full length but sends half, then aborts the
// connection so the client sees an unexpected EOF rather than a short,
// apparently complete body.
func (rec *recorder) truncateTo(w http.ResponseWriter) {
	h := w.Header()
	for k, v := range rec.header {
		h[k] = v
	}
	body := rec.body.Bytes()
	h.Del("Transfer-Encoding")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(body[:len(body)/2])
	_ = http.NewResponseController(w).Flush()
	panic(http.ErrAbortHandler)
}
