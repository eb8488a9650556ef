package mirror

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/mirror/meta"
)

// Outcomes of once, as the audit log records them.
const (
	outcomeHit      = "hit"      // already stored
	outcomeUpstream = "upstream" // this replica went upstream
	outcomeWaited   = "waited"   // another replica (or request) did, and this one waited for it
)

// leaseKey names the lease of one upstream operation.
func leaseKey(op, repo, what string) string { return op + ":" + repo + "#" + what }

// once makes sure one upstream operation has been done, by exactly one
// replica at a time: check reads what was stored (done, or a remembered
// error that answers the request); when nothing is, the replica that gets
// the lease runs work under it (renewing it, and releasing it after), and
// every other request — here or on another replica — polls check until the
// holder has stored its result, the lease is free again (the holder failed:
// try again), or the lease expired (the holder died: take it over).
// Requests of this replica for the same lease share one waiter.
func (s *Server) once(ctx context.Context, op, lease string, check func(context.Context) (bool, error), work func(context.Context) error) (string, error) {
	if done, err := check(ctx); err != nil || done {
		return outcomeHit, err
	}
	s.m.cache.WithLabelValues(op, "miss").Inc()
	ch := s.flight.DoChan(lease, func() (any, error) {
		// Detached from the request that happened to come first: the
		// others share this call, and the work is worth finishing for
		// everyone even if that client leaves.
		wctx, cancel := context.WithTimeout(s.base, s.cfg.WaitTimeout+s.cfg.FetchTimeout)
		defer cancel()
		return s.lead(wctx, op, lease, check, work)
	})
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return "", r.Err
		}
		return r.Val.(string), nil
	}
}

func (s *Server) lead(ctx context.Context, op, lease string, check func(context.Context) (bool, error), work func(context.Context) error) (string, error) {
	start := time.Now()
	deadline := start.Add(s.cfg.WaitTimeout)
	pause := 20 * time.Millisecond
	waited := false
	defer func() {
		if waited {
			s.m.waitTime.WithLabelValues(op).Observe(time.Since(start).Seconds())
		}
	}()
	for {
		l, ok, err := s.cfg.DB.Acquire(ctx, lease, s.cfg.ReplicaID, s.cfg.LeaseTTL)
		if err != nil {
			return "", err
		}
		if ok {
			return s.hold(ctx, op, l, check, work)
		}
		if !waited {
			waited = true
			s.m.leaseWaits.WithLabelValues(op).Inc()
		}
		if time.Now().After(deadline) {
			return "", &apiError{Status: http.StatusServiceUnavailable, Code: plugind.CodeSourceUnreadable,
				Msg: fmt.Sprintf("waited %s for another mirror replica to finish %s; try again", s.cfg.WaitTimeout, lease)}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 250*time.Millisecond)
		if done, err := check(ctx); err != nil || done {
			return outcomeWaited, err
		}
	}
}

// hold runs work under the lease l, renewing it until work returns.
func (s *Server) hold(ctx context.Context, op string, l meta.Lease, check func(context.Context) (bool, error), work func(context.Context) error) (string, error) {
	if l.Previous != "" {
		s.m.takeovers.Inc()
		s.log.Warn("took over an expired lease; its holder died or hung", "lease", l.Name, "previous", l.Previous)
		// Not a client's request: nothing waits on this row to answer, so a
		// failure to write it is logged and the work goes on.
		if err := s.audit(ctx, meta.Entry{Client: "mirror", Action: "lease.takeover", Outcome: "taken_over", Detail: l.Previous + " held " + l.Name}); err != nil {
			s.log.Error("audit a lease takeover", "lease", l.Name, "previous", l.Previous, "err", err)
		}
	}
	stop := s.renew(ctx, l.Name)
	defer func() {
		stop()
		// Released even when the request's context is gone.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := s.cfg.DB.Release(rctx, l.Name, s.cfg.ReplicaID); err != nil {
			s.log.Warn("release lease", "lease", l.Name, "err", err)
		}
	}()
	// The previous holder may have finished between our last look and the
	// lease.
	if done, err := check(ctx); err != nil || done {
		return outcomeWaited, err
	}
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-s.slots }()
	wctx, cancel := context.WithTimeout(ctx, s.cfg.FetchTimeout)
	defer cancel()
	if err := work(wctx); err != nil {
		return "", err
	}
	return outcomeUpstream, nil
}

// renew keeps the lease alive while its work runs.
func (s *Server) renew(ctx context.Context, name string) (stop func()) {
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(s.cfg.LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				ok, err := s.cfg.DB.Renew(rctx, name, s.cfg.ReplicaID, s.cfg.LeaseTTL)
				switch {
				case err != nil && rctx.Err() == nil:
					s.log.Warn("renew lease", "lease", name, "err", err)
				case err == nil && !ok:
					// Work stored under a lost lease is still right
					// (content-addressed, first write wins); it is only
					// done twice.
					s.log.Warn("lost a lease to another replica while working", "lease", name)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}
