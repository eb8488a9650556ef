package fakegithub

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// GitHub's primary REST budget (SPEC §14): without a token, 60 requests an
// hour, counted per client whatever their answer (a 404, a 304, the
// tarball link's redirect); git's smart HTTP and the archive download the
// redirect leads to are not counted. Once the budget is spent every REST
// request is answered 403 with X-RateLimit-Remaining: 0 and the window's
// X-RateLimit-Reset, until that time. Authenticated requests have a budget
// of their own, far larger; the fake does not limit them.

// WithAPIBudget makes the fake enforce a REST budget of n unauthenticated
// requests per window (0: none, the default; window 0: an hour). The window
// starts with the first counted request, as GitHub's does.
func WithAPIBudget(n int, window time.Duration) Option {
	return func(o *options) { o.apiBudget, o.apiWindow = n, window }
}

// SetAPIBudget changes the budget of a running fake and starts a new
// window (n 0: no budget).
func (s *Server) SetAPIBudget(n int, window time.Duration) {
	s.helper()
	if n < 0 || window < 0 {
		s.fail(fmt.Errorf("SetAPIBudget(%d, %s): negative", n, window))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.budget = newBudget(n, window)
}

type budget struct {
	limit  int
	window time.Duration
	used   int
	reset  time.Time // end of the current window; zero before it starts
}

func newBudget(n int, window time.Duration) *budget {
	if n == 0 {
		return nil
	}
	if window == 0 {
		window = time.Hour
	}
	return &budget{limit: n, window: window}
}

// spendBudget counts r against the budget when it is an unauthenticated
// REST request and sets the rate-limit headers GitHub sends; it reports
// whether the budget was spent already, so r must be answered 403.
func (s *Server) spendBudget(h http.Header, r *http.Request, req request) (limited bool) {
	if req.kind != RouteAPI || r.Header.Get("Authorization") != "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.budget
	if b == nil {
		return false
	}
	now := time.Now()
	if b.reset.IsZero() || !now.Before(b.reset) {
		b.used, b.reset = 0, now.Add(b.window)
	}
	if s.limitedSeen {
		s.bump(req, func(c *Counts) { c.APIAfterLimited++ })
	}
	limited = b.used >= b.limit
	if limited {
		s.limitedSeen = true
		s.bump(req, func(c *Counts) { c.APILimited++ })
	} else {
		b.used++
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(b.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(b.limit-b.used))
	h.Set("X-RateLimit-Used", strconv.Itoa(b.used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(b.resetUnix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	return limited
}

// resetUnix is the reset time as GitHub sends it: whole seconds, rounded up
// so a client that waits until then finds the new window open.
func (b *budget) resetUnix() int64 {
	return b.reset.Add(time.Second - 1).Unix()
}

// writeRateLimited is GitHub's answer to a request over the budget.
func writeRateLimited(w http.ResponseWriter, r *http.Request) {
	writeAPIError(w, http.StatusForbidden, "API rate limit exceeded for "+clientIP(r)+". (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)")
}

func clientIP(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}
