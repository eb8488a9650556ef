package mirror

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// Upstream is how a replica reaches upstream: the whole host stack, as a
// client has it, with the mirror's Cached layer and leases in it
// (resolver.Hosts, from app.Upstream).
type Upstream interface {
	Upstream(src source.Source, meta host.MetaStore, opts host.CacheOptions, around func(host.Repo) host.Repo) (host.Repo, error)
}

// The mirror's database is its Cached layer's store.
var _ host.MetaStore = (*meta.DB)(nil)

// call is one request's trip through the host stack: the Cached layer over
// the mirror's database answers what it remembers, and the lease layer
// below it (leased) records what it had to do upstream.
type call struct {
	s *Server
	// upstream: this request went upstream; waited: another holder of a
	// lease did, and this one waited; again: so the Cached layer should
	// be asked again.
	upstream, waited, again atomic.Bool
	working                 atomic.Bool           // upstream work runs (s.work)
	failed                  atomic.Pointer[error] // the first failure the Cached layer absorbed
	mu                      sync.Mutex            // over held
	held                    map[string]func()     // leases held until the call ends, by name
}

func (s *Server) newCall() *call { return &call{s: s, held: map[string]func(){}} }

// open opens src's repository through the host stack, for c: a
// host.RepoOpener, so the submodules of a tree are opened the same way,
// and the operator's policy applies to them as to any repository (a tree
// cannot bring in content from a repository the mirror would refuse).
func (c *call) open(_ context.Context, src source.Source) (host.Repo, error) {
	if err := c.s.allowed(src); err != nil {
		return nil, err
	}
	r, err := c.s.cfg.Upstream.Upstream(src, c.s.cfg.DB, host.CacheOptions{
		NegativeTTL: c.s.cfg.NegativeTTL, FreshFor: c.s.cfg.RefTTL, RememberedBy: "the mirror", OnWriteError: c.absorb,
	}, func(r host.Repo) host.Repo { return &leased{Repo: r, c: c} })
	if err != nil {
		return nil, plugind.WithCode(plugind.CodeSourceUnreadable, fmt.Errorf("open %s upstream: %w", src.Key(), err))
	}
	return r, nil
}

// absorb keeps a failure the Cached layer goes on without — a write to
// the database, or upstream failing where an older answer is remembered —
// for the request to fail with: the mirror never serves what it could not
// check (its clients' own caches keep older answers), nor hides that its
// database fails.
func (c *call) absorb(err error) { c.failed.CompareAndSwap(nil, &err) }

// ask runs fn, which asks the Cached layer, again for as long as the lease
// layer below it waited for another holder, whose answer it may hold now.
func (c *call) ask(fn func() error) error {
	err := fn()
	for c.again.Swap(false) {
		err = fn()
	}
	if failed := c.failed.Load(); err == nil && failed != nil {
		err = *failed
	}
	return err
}

// end lets the leases the call held go, once what they were for is stored.
func (c *call) end() {
	for _, release := range c.held {
		release()
	}
}

// outcome says where the call's answer came from.
func (c *call) outcome() string {
	switch {
	case c.upstream.Load():
		return outcomeUpstream
	case c.waited.Load():
		return outcomeWaited
	}
	return outcomeHit
}

// errWaited: the Cached layer should look again (do).
var errWaited = errors.New("waited for another mirror replica")

// do runs one upstream operation under its lease, once the Cached layer
// missed. The lease is held until the call ends: the Cached layer stores
// the answer once do returns, and whoever waits must find it stored. Once
// the lease is taken, the Cached layer looks again (errWaited: another
// holder may have stored the answer meanwhile) before any work; a request
// that had to wait lets the lease go for that look. A transient failure of
// the holder is shared with those that waited for it, for failTTL.
func (c *call) do(ctx context.Context, op, repo, what string, work func(context.Context) error) error {
	s := c.s
	failKey, lease := op+":"+what, leaseKey(op, repo, what)
	if err := s.recentFailure(ctx, repo, failKey); err != nil {
		c.absorb(err)
		return err
	}
	c.mu.Lock()
	_, mine := c.held[lease]
	c.mu.Unlock()
	if !mine {
		release, waited, err := s.acquire(ctx, op, lease)
		switch {
		case err != nil:
			return err
		case waited:
			release()
			c.waited.Store(true)
		default:
			c.mu.Lock()
			c.held[lease] = release
			c.mu.Unlock()
		}
		// Whoever held it last may have stored the answer between the
		// Cached layer's look and this lease: it looks once more, the
		// lease held (or let go after a wait, to take it again if need be).
		c.again.Store(true)
		return errWaited
	}
	c.upstream.Store(true)
	var err error
	if c.working.Swap(true) {
		err = work(ctx) // within the slot and timeout of the work it is part of
	} else {
		err = s.work(ctx, work)
		c.working.Store(false)
	}
	if err != nil {
		c.absorb(err)
		if transient(ctx, err) {
			s.shareFailure(ctx, repo, failKey, err)
		}
	}
	return err
}

// counted counts an upstream operation and returns its error with an
// error code: what upstream said is for the client to read, and toAPI
// tells it only errors that carry a code (or a not-found kind).
func (s *Server) counted(op string, err error) error {
	switch {
	case err == nil:
		s.m.add(upstreamTotal, 1, "op", op, "outcome", "ok")
	case host.KindOf(err) != "":
		s.m.add(upstreamTotal, 1, "op", op, "outcome", "not_found")
	default:
		s.m.add(upstreamTotal, 1, "op", op, "outcome", "error")
		return plugind.WithCode(plugind.CodeSourceUnreadable, err)
	}
	return err
}

// recentFailure returns the transient failure the holder of key's lease
// met in the last failTTL, so the requests that waited for that attempt
// get its answer instead of each trying upstream again at once.
func (s *Server) recentFailure(ctx context.Context, repo, key string) error {
	n, ok, err := s.cfg.DB.FirstNegative(ctx, repo, time.Now(), cache.NegativeKey{Kind: "failed", SHA: key})
	if err != nil || !ok {
		return err
	}
	return &plugind.Error{Code: plugind.Code(n.Code),
		Msg: fmt.Sprintf("%s (the mirror remembers this from %s ago)", n.Message, time.Since(n.Created).Round(time.Second))}
}

// shareFailure records a transient failure for recentFailure.
func (s *Server) shareFailure(ctx context.Context, repo, key string, err error) {
	now := time.Now()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := s.cfg.DB.PutNegative(rctx, cache.Negative{Kind: "failed", Remote: repo, SHA: key,
		Code: string(plugind.CodeOf(err)), Message: err.Error(), Created: now, Expires: now.Add(failTTL)}); err != nil {
		s.log.Warn("remember an upstream failure", "repo", repo, "err", err)
	}
}

// leased is the lease layer: the host stack below the Cached layer, each
// operation the Cached layer could not answer done under its lease.
// Fetches run under their snapshot's lease, taken above (snapshot), since
// what they make — the archive — is stored there.
type leased struct {
	host.Repo
	c *call
}

// Refs implements host.Repo.
func (l *leased) Refs(ctx context.Context) (refs *host.Refs, err error) {
	err = l.c.do(ctx, "refs", l.Source().Key(), "list", func(ctx context.Context) error {
		refs, err = l.Repo.Refs(ctx)
		return l.c.s.counted("refs", err)
	})
	return refs, err
}

// Resolve implements host.Repo.
func (l *leased) Resolve(ctx context.Context, ref string, known *host.Pin) (pin host.Pin, err error) {
	err = l.c.do(ctx, "resolve", l.Source().Key(), host.RefName(ref), func(ctx context.Context) error {
		pin, err = l.Repo.Resolve(ctx, ref, known)
		return l.c.s.counted("resolve", err)
	})
	return pin, err
}

// Reachable implements host.Repo.
func (l *leased) Reachable(ctx context.Context, sha, hint string) error {
	return l.c.do(ctx, "reachable", l.Source().Key(), sha, func(ctx context.Context) error {
		return l.c.s.counted("reachable", l.Repo.Reachable(ctx, sha, hint))
	})
}

// Fetch implements host.Repo.
func (l *leased) Fetch(ctx context.Context, sha, dest string, opts host.FetchOptions) (*host.Fetched, error) {
	got, err := l.Repo.Fetch(ctx, sha, dest, opts)
	return got, l.c.s.counted("fetch", err)
}
