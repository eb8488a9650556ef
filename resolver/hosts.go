package resolver

import (
	"context"
	"sync"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// repo stacks the layers for one request: the host's raw Repo (or, offline,
// one that never touches the network) under the cache. Cached answers what
// it remembers; Offline turns every miss into install.offline_miss.
func (s *Sources) repo(src source.Source, req Request) (host.Repo, error) {
	var inner host.Repo
	if req.Offline {
		inner = host.NewOffline(src)
	} else {
		if s.cfg.Hosts == nil {
			return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "%s: no host is configured for remote sources", src.Key())
		}
		r, err := s.cfg.Hosts.Open(src)
		if err != nil {
			return nil, err
		}
		inner = r
	}
	if s.cfg.Cache == nil {
		return inner, nil
	}
	return host.NewCached(inner, resolveMeta{s.cfg.Cache, &s.uses}, host.CacheOptions{
		NegativeTTL:  s.cfg.NegativeTTL,
		Refresh:      req.Refresh,
		Now:          s.cfg.Now,
		OnWriteError: s.cacheWriteFailed,
	}), nil
}

// cacheWriteFailed: the cache is an optimization, so a failed write costs
// only a warning in the log, once per process.
func (s *Sources) cacheWriteFailed(err error) {
	s.warn.do(func() {
		s.cfg.Log.Warn("the cache could not be written; continuing without remembering results", "err", err)
	})
}

type warnOnce struct{ once sync.Once }

func (w *warnOnce) do(f func()) { w.once.Do(f) }

// missingPaths is the part of the Cached layer that remembers folders that
// do not exist at a commit (the resolver finds that out, not a host).
type missingPaths interface {
	MissingPath(ctx context.Context, sha, path string) error
	RememberMissingPath(ctx context.Context, sha, path string, err error)
}
