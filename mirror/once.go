package mirror

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/mirror/meta"
)

// Outcomes of an operation, as the audit log records them.
const (
	outcomeHit      = "hit"      // already stored
	outcomeUpstream = "upstream" // this replica went upstream
	outcomeWaited   = "waited"   // another replica (or request) did, and this one waited for it
	// outcomeOutOfScope: refused, outside the token's scopes (policy
	// refusals are "blocked", naming their rule).
	outcomeOutOfScope = "out_of_scope"
)

// leaseKey names the lease of one upstream operation.
func leaseKey(op, repo, what string) string { return op + ":" + repo + "#" + what }

// acquire takes the lease name, so exactly one request — of this replica or
// of any other — does its upstream operation at a time: this replica's
// requests queue on a lock in memory, other replicas' on the lease row in
// PostgreSQL, and a row whose holder died expires and is taken over.
// waited says another holder ran meanwhile: it may have stored what the
// caller wants, which should look again before working. release, once the
// result is stored, lets the next one in.
func (s *Server) acquire(ctx context.Context, op, name string) (release func(), waited bool, err error) {
	start := time.Now()
	unlock, waited, err := s.local.lock(ctx, name)
	if err != nil || waited {
		// This replica's holder is done: its answer is stored, or it failed.
		return unlock, waited, err
	}
	var l meta.Lease
	for pause, ok := 20*time.Millisecond, false; !ok; pause = min(2*pause, 250*time.Millisecond) {
		if l, ok, err = s.cfg.DB.Acquire(ctx, name, s.cfg.ReplicaID, s.cfg.LeaseTTL); err != nil || ok {
			break
		}
		if !waited {
			waited = true
			s.m.add(leaseWaitsTotal, 1, "op", op)
		}
		if time.Since(start) > s.cfg.WaitTimeout {
			err = &apiError{Status: http.StatusServiceUnavailable, Code: plugind.CodeSourceUnreadable,
				Msg: fmt.Sprintf("waited %s for another mirror replica to finish %s; try again", s.cfg.WaitTimeout, name)}
			break
		}
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-time.After(pause):
		}
		if err != nil {
			break
		}
	}
	if waited {
		s.m.add(leaseWaitSecs, time.Since(start).Seconds(), "op", op)
	}
	if err != nil {
		unlock()
		return nil, waited, err
	}
	if l.Previous != "" {
		s.tookOver(ctx, l)
	}
	stop := s.renew(ctx, name)
	return func() {
		stop()
		// Released even when the request's context is gone.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := s.cfg.DB.Release(rctx, name, s.cfg.ReplicaID); err != nil {
			s.log.Warn("release lease", "lease", name, "err", err)
		}
		unlock()
	}, waited, nil
}

// tookOver records that l was taken over from a holder that died or hung.
func (s *Server) tookOver(ctx context.Context, l meta.Lease) {
	s.m.add(takeoversTotal, 1)
	s.log.Warn("took over an expired lease; its holder died or hung", "lease", l.Name, "previous", l.Previous)
	// Not a client's request: nothing waits on this row to answer, so a
	// failure to write it is logged and the work goes on.
	if err := s.audit(ctx, meta.Entry{Client: "mirror", Action: "lease.takeover", Outcome: "taken_over", Detail: l.Previous + " held " + l.Name}); err != nil {
		s.log.Error("audit a lease takeover", "lease", l.Name, "previous", l.Previous, "err", err)
	}
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

// work runs one upstream operation within this replica's limit on them
// (UpstreamLimit) and FetchTimeout.
func (s *Server) work(ctx context.Context, fn func(context.Context) error) error {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.slots }()
	wctx, cancel := context.WithTimeout(ctx, s.cfg.FetchTimeout)
	defer cancel()
	return fn(wctx)
}

// localLeases are the leases this replica's requests hold, so that they
// queue for one here rather than poll its row (which names the replica,
// not the request).
type localLeases struct {
	mu   sync.Mutex
	held map[string]chan struct{} // closed on release
}

// lock takes name, waiting for this replica's holder to let it go.
func (l *localLeases) lock(ctx context.Context, name string) (unlock func(), waited bool, err error) {
	for {
		l.mu.Lock()
		ch, busy := l.held[name]
		if !busy {
			ch = make(chan struct{})
			l.held[name] = ch
			l.mu.Unlock()
			return func() {
				l.mu.Lock()
				delete(l.held, name)
				l.mu.Unlock()
				close(ch)
			}, waited, nil
		}
		l.mu.Unlock()
		waited = true
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, waited, ctx.Err()
		}
	}
}
