package server

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/secrets"
)

// DefaultCheckUpdates is how often `reasonix serve` checks for updates
// unless told otherwise (SPEC §12).
const DefaultCheckUpdates = 24 * time.Hour

// defaultFirstCheck is how long after start the first check waits: the
// daemon is up and a page opened with it is served first. A check made
// within the last interval (by this daemon before a restart) is not
// repeated: the next one waits for the interval to end.
const defaultFirstCheck = 5 * time.Second

// updateChecks is the daemon's background update check: its schedule and
// the last result it holds.
type updateChecks struct {
	every   time.Duration // 0: off
	first   time.Duration
	offline bool

	mu   sync.Mutex
	last *installer.UpdateCheck // nil until this daemon has checked
	next time.Time
	wg   sync.WaitGroup
}

// start runs the checks until ctx is done; wait returns once they have
// stopped.
func (s *Server) startUpdateChecks(ctx context.Context) {
	if s.checks.every <= 0 {
		return
	}
	s.checks.wg.Go(func() { s.checkUpdatesLoop(ctx) })
}

// checkUpdatesLoop checks for updates shortly after start, then every
// interval (each wait jittered by up to a tenth, so daemons started
// together spread out), until ctx is done. A check is a read: it plans
// `update --all --dry-run` and never takes the home's lock.
func (s *Server) checkUpdatesLoop(ctx context.Context) {
	c := &s.checks
	wait := min(c.first, c.every)
	if last, err := s.in.LastUpdateCheck(ctx); err == nil && !last.CheckedAt.IsZero() {
		// A restart does not check again what was checked a moment ago.
		wait = max(wait, time.Until(last.CheckedAt.Add(c.every)))
	}
	for {
		wait += rand.N(wait/10 + 1)
		c.mu.Lock()
		c.next = time.Now().Add(wait)
		c.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		s.checkUpdatesOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		wait = c.every
	}
}

// checkUpdatesOnce runs one check and keeps its result.
func (s *Server) checkUpdatesOnce(ctx context.Context) {
	began := time.Now()
	res, err := s.in.CheckUpdates(ctx, s.checks.offline)
	if ctx.Err() != nil {
		s.log.Info("update check cancelled")
		return
	}
	if err != nil && res == nil {
		s.log.Warn("update check failed", "error", secrets.Mask(err.Error()))
		return
	}
	if err != nil {
		s.log.Warn("update check not stored", "error", secrets.Mask(err.Error()))
	}
	s.checks.mu.Lock()
	s.checks.last = res
	s.checks.mu.Unlock()
	s.log.Info("update check", "status", string(res.Status), "updates", len(res.Updates), "couldNotCheck", len(res.CouldNotCheck),
		"duration_ms", time.Since(began).Milliseconds(), "error", res.Error)
}

// updatesBody is the answer of GET /updates.
type updatesBody struct {
	*installer.UpdateCheck
	// Every is the check's interval ("off" when the daemon does not check);
	// Next when the next check is due (absent when off).
	Every string    `json:"every"`
	Next  time.Time `json:"next,omitzero"`
}

// GET /updates: what the last update check found (SPEC §12) — the plugins
// that could move, each with its commits, versions, capability diff and
// risk, the ones that could not be checked, and when it checked, last
// succeeded and will check next. Nothing here is applied: the page's and
// the CLI's update review plans it again for approval.
func (s *Server) updates(w http.ResponseWriter, r *http.Request) {
	c := &s.checks
	c.mu.Lock()
	last, next := c.last, c.next
	c.mu.Unlock()
	var (
		found *installer.UpdateCheck
		err   error
	)
	if last == nil {
		found, err = s.in.LastUpdateCheck(r.Context())
	} else {
		found, err = s.in.Outstanding(last)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	body := updatesBody{UpdateCheck: found, Every: "off"}
	if c.every > 0 {
		body.Every, body.Next = c.every.String(), next
	}
	writeJSON(w, http.StatusOK, body)
}
