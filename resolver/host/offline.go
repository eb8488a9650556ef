package host

import (
	"context"

	"reasonix.io/plugind"
	"reasonix.io/plugind/source"
)

// Offline is the Repo of --offline: nothing goes to the network. It sits
// below Cached, which answers what it remembers; whatever reaches Offline
// is a miss, reported as install.offline_miss naming what is missing.
type Offline struct{ src source.Source }

// NewOffline returns the offline Repo of src.
func NewOffline(src source.Source) *Offline { return &Offline{src: src} }

func (o *Offline) miss(what string) error {
	return plugind.Errorf(plugind.CodeOfflineMiss, "offline: %s of %s is not in the cache: %w", what, o.src.Key(), ErrOffline)
}

// Source implements Repo.
func (o *Offline) Source() source.Source { return o.src }

// Refs implements Repo.
func (o *Offline) Refs(context.Context) (*Refs, error) { return nil, o.miss("the ref list") }

// Resolve implements Repo.
func (o *Offline) Resolve(_ context.Context, ref string, _ *Pin) (Pin, error) {
	if source.IsSHA(ref) {
		return Pin{SHA: ref}, nil
	}
	return Pin{}, o.miss(DescribeRef(ref))
}

// Reachable implements Repo.
func (o *Offline) Reachable(_ context.Context, sha, _ string) error {
	return o.miss("the reachability of commit " + sha)
}

// Fetch implements Repo.
func (o *Offline) Fetch(_ context.Context, sha, _ string, _ FetchOptions) (*Fetched, error) {
	return nil, o.miss("the content at commit " + sha)
}
