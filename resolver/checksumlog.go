package resolver

import (
	"context"
	"errors"
	"sync"

	"reasonix.io/plugind/checksumlog"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// Every remote tree a plan offers is checked against the checksum log,
// when one is configured (SPEC §17): its digest, however it became known
// (fetched now, or found in the store), must be the log's record of
// (repository, commit, folder). The lookup starts as soon as the key is
// known, beside the fetch, so a cold plan waits on the log only where it
// is slower than the fetch; a record this home verified before is read
// back with no request at all.

// logCall is one lookup, started once per key per Resolve.
type logCall struct {
	done chan struct{}
	rec  *host.LogRecord
	err  error
}

// logCalls are a Resolve's lookups, by record key.
type logCalls struct {
	mu    sync.Mutex
	calls map[string]*logCall
}

// expect starts the lookup of the log's record of folder p of src's
// repository at sha, unless it is started already or no log is
// configured.
func (s *resolve) expect(ctx context.Context, src source.Source, sha, p string) *logCall {
	l := s.cfg.ChecksumLog
	if l == nil {
		return nil
	}
	place := src.Place()
	key := checksumlog.KeyOf(place, p, sha)
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	if c, ok := s.logs.calls[key]; ok {
		return c
	}
	if s.logs.calls == nil {
		s.logs.calls = map[string]*logCall{}
	}
	c := &logCall{done: make(chan struct{})}
	s.logs.calls[key] = c
	offline := s.offline
	go func() {
		defer close(c.done)
		c.rec, c.err = l.Lookup(ctx, place, p, sha, offline)
	}()
	return c
}

// checkLog compares digest, the tree digest of folder p of src's
// repository at sha, with the log's record of it.
func (s *resolve) checkLog(ctx context.Context, src source.Source, sha, p, digest string) error {
	c := s.expect(ctx, src, sha, p)
	if c == nil {
		return nil
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if c.err != nil {
		return c.err
	}
	return s.cfg.ChecksumLog.Check(c.rec, digest)
}

// logRefused reports an error that refuses the whole plan, not one entry:
// the log's SECURITY ERROR (a mismatch, a fork) means a source, a mirror
// or the log is compromised, and a log that cannot be read fails closed.
func logRefused(err error) bool {
	return errors.Is(err, host.ErrLogSecurity) || errors.Is(err, host.ErrLogUnavailable)
}
