package resolver

import (
	"context"
	"errors"
	"sync"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// Every remote tree a plan offers is checked against the checksum log,
// when one is configured (SPEC §17): its digest, however it became known
// (fetched now, or found in the store), must be the log's record of
// (repository, commit, folder). The lookup starts as soon as the key is
// known, beside the fetch, so a cold plan waits on the log only where it
// is slower than the fetch; a marketplace's keys go together, and what
// the log lacks at first is read again once the entries are fetched, when
// a team mirror that served them has recorded them (host.LookupMany reads
// them by tiles). A record this home verified before is read back with no
// request at all.

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
	return s.expectAll(ctx, []logWant{{src, sha, p}}, nil)[0]
}

// logWant is a record a plan will check: folder p of src's repository at
// sha.
type logWant struct {
	src  source.Source
	sha  string
	path string
}

// expectAll starts the lookups of the records wants name that are not
// started already, together: a bulk plan's many records may be read from
// the log's tiles rather than looked up one by one (host.LookupMany);
// fetched, when not nil, closes once the plan has fetched their trees. It
// returns each want's call (nil ones when no log is configured).
func (s *resolve) expectAll(ctx context.Context, wants []logWant, fetched <-chan struct{}) []*logCall {
	calls := make([]*logCall, len(wants))
	l := s.cfg.ChecksumLog
	if l == nil {
		return calls
	}
	var keys []host.LogKey
	var started []*logCall
	s.logs.mu.Lock()
	if s.logs.calls == nil {
		s.logs.calls = map[string]*logCall{}
	}
	for i, w := range wants {
		k := host.LogKey{Place: w.src.Place(), Path: w.path, Commit: w.sha}
		key := k.String()
		if c, ok := s.logs.calls[key]; ok {
			calls[i] = c
			continue
		}
		c := &logCall{done: make(chan struct{})}
		s.logs.calls[key] = c
		calls[i] = c
		keys, started = append(keys, k), append(started, c)
	}
	s.logs.mu.Unlock()
	if len(keys) > 0 {
		go l.LookupMany(ctx, keys, s.offline, fetched, func(i int, rec *host.LogRecord, err error) {
			started[i].rec, started[i].err = rec, err
			close(started[i].done)
		})
	}
	return calls
}

// checkLog compares digest, the tree digest of folder p of src's
// repository at sha (held by store snapshot snapshot), with the log's
// record of it.
func (s *resolve) checkLog(ctx context.Context, src source.Source, sha, p, digest, snapshot string) error {
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
	err := s.cfg.ChecksumLog.Check(c.rec, digest)
	if err != nil && s.setAside(ctx, snapshot) {
		return plugind.Errorf(plugind.CodeDigestMismatch, "%w\nThe stored copy was set aside (the store's quarantine/): the next plan fetches this commit again.", err)
	}
	return err
}

// setAside quarantines a snapshot whose content the log disputes, and
// forgets what the cache derived from it: the next plan fetches the commit
// afresh (a mirror that served altered bytes may be repaired by then)
// instead of refusing the same stored bytes forever, and nothing installs
// from them meanwhile. The snapshot is kept in quarantine/ as evidence.
// It reports whether the snapshot was set aside (another entry of the
// plan may have done it first).
func (s *resolve) setAside(ctx context.Context, snapshot string) bool {
	if snapshot == "" {
		return false
	}
	if err := s.cfg.Store.Quarantine(snapshot); err != nil {
		if plugind.CodeOf(err) != plugind.CodeNotFound {
			s.cfg.Log.Warn("checksum log: a disputed snapshot could not be quarantined", "snapshot", snapshot, "err", err)
		}
		return false
	}
	if s.cfg.Cache != nil {
		if err := s.cfg.Cache.ForgetDigest(ctx, snapshot); err != nil {
			s.cfg.Log.Warn("checksum log: the cache records of a disputed snapshot could not be forgotten", "snapshot", snapshot, "err", err)
		}
	}
	return true
}

// logRefused reports an error that refuses the whole plan, not one entry:
// the log's SECURITY ERROR (a mismatch, a fork) means a source, a mirror
// or the log is compromised, and a log that cannot be read fails closed.
func logRefused(err error) bool {
	return errors.Is(err, host.ErrLogSecurity) || errors.Is(err, host.ErrLogUnavailable)
}
