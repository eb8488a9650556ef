package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/source"
)

// MetaStore is what the Cached layer remembers things in; the SQLite cache
// implements it.
type MetaStore interface {
	GetRef(ctx context.Context, remote, ref string) (cache.Ref, bool, error)
	PutRef(ctx context.Context, r cache.Ref) error
	ListRefs(ctx context.Context, remote string) ([]cache.Ref, error)
	ReplaceRefs(ctx context.Context, remote string, commits map[string]string, at time.Time) error
	GetVerdict(ctx context.Context, remote, sha string) (cache.Verdict, bool, error)
	PutVerdict(ctx context.Context, v cache.Verdict) error
	FirstNegative(ctx context.Context, remote string, now time.Time, keys ...cache.NegativeKey) (cache.Negative, bool, error)
	PutNegative(ctx context.Context, n cache.Negative) error
	Count(ctx context.Context, kind string, hit bool) error
}

// CacheOptions tune the Cached layer.
type CacheOptions struct {
	// NegativeTTL is how long a "does not exist" is believed (default 1h).
	NegativeTTL time.Duration
	// Refresh ignores remembered negative results (they are still written).
	Refresh bool
	// Now is the clock (default time.Now).
	Now func() time.Time
	// OnWriteError hears about cache writes that failed: the cache is an
	// optimization, so the operation goes on.
	OnWriteError func(error)
	// FreshFor, when positive, is how long a resolved ref or ref listing
	// is answered as remembered without asking the host again (the team
	// mirror's RefTTL); 0 asks every time, conditionally.
	FreshFor time.Duration
	// RememberedBy, when set, names who remembers a negative answer in its
	// message ("the mirror remembers this from 3s ago"); by default the
	// message says how to ask again (--refresh).
	RememberedBy string
}

// DefaultNegativeTTL is how long a negative result is remembered.
const DefaultNegativeTTL = time.Hour

// Cached remembers what a Repo said: refs with their ETags (so an unchanged
// ref costs one conditional request, and offline costs none), reachability
// verdicts per commit, and negative results for a while. When the layer
// below fails — offline, or the network down — it answers from what it
// remembers, saying how old that is.
type Cached struct {
	inner Repo
	db    MetaStore
	opts  CacheOptions
	key   string
}

// NewCached wraps inner.
func NewCached(inner Repo, db MetaStore, opts CacheOptions) *Cached {
	opts.NegativeTTL = cmp.Or(opts.NegativeTTL, DefaultNegativeTTL)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.OnWriteError == nil {
		opts.OnWriteError = func(error) {}
	}
	return &Cached{inner: inner, db: db, opts: opts, key: inner.Source().Key()}
}

// Source implements Repo.
func (c *Cached) Source() source.Source { return c.inner.Source() }

func (c *Cached) wrote(err error) {
	if err != nil {
		c.opts.OnWriteError(err)
	}
}

// Counter kinds (cache stats).
const (
	KindRef     = "ref"
	KindVerdict = "verdict"
)

func (c *Cached) count(ctx context.Context, kind string, hit bool) {
	c.wrote(c.db.Count(ctx, kind, hit))
}

// recall returns the first of keys remembered as not there, and its error
// as remembered; a nil error when none is (or with --refresh).
func (c *Cached) recall(ctx context.Context, keys ...cache.NegativeKey) (cache.Negative, error) {
	if c.opts.Refresh {
		return cache.Negative{}, nil
	}
	n, ok, err := c.db.FirstNegative(ctx, c.key, c.opts.Now(), keys...)
	if err != nil || !ok {
		return n, nil
	}
	return n, &plugind.Error{Code: plugind.Code(n.Code), Msg: fmt.Sprintf("%s (%s)", n.Message, c.recalled(n.Created)), Err: SentinelOf(n.Kind)}
}

// recalled says where a negative answer given at t came from.
func (c *Cached) recalled(t time.Time) string {
	age := c.opts.Now().Sub(t).Round(time.Second)
	if c.opts.RememberedBy != "" {
		return fmt.Sprintf("%s remembers this from %s ago", c.opts.RememberedBy, age)
	}
	return fmt.Sprintf("remembered from %s ago; --refresh asks again", age)
}

// fresh reports whether an answer the host gave at t is still answered
// without asking (FreshFor).
func (c *Cached) fresh(t time.Time) bool {
	return c.opts.FreshFor > 0 && c.opts.Now().Sub(t) <= c.opts.FreshFor
}

// remember records a not-found answer for the key.
func (c *Cached) remember(ctx context.Context, err error, sha, path string) {
	switch kind := KindOf(err); kind {
	case "":
	case "repo":
		c.putNegative(ctx, kind, "", "", err) // a missing repository is missing for every commit
	default:
		c.putNegative(ctx, kind, sha, path, err)
	}
}

// putNegative remembers err, the answer that (sha, path) of kind is not
// there, for NegativeTTL.
func (c *Cached) putNegative(ctx context.Context, kind, sha, path string, err error) {
	now := c.opts.Now()
	c.wrote(c.db.PutNegative(ctx, cache.Negative{
		Kind: kind, Remote: c.key, SHA: sha, Path: path,
		Code: string(plugind.CodeOf(err)), Message: err.Error(), Created: now, Expires: now.Add(c.opts.NegativeTTL),
	}))
}

// known returns a remembered negative for the repository as a whole, or for
// one commit or ref of it.
func (c *Cached) known(ctx context.Context, kinds []string, sha string) error {
	keys := []cache.NegativeKey{{Kind: "repo"}} // a missing repository first
	for _, k := range kinds {
		keys = append(keys, cache.NegativeKey{Kind: k, SHA: sha})
	}
	_, err := c.recall(ctx, keys...)
	return err
}

// RememberMissingPath records that path does not exist at sha (the
// resolver finds that out, not a host).
func (c *Cached) RememberMissingPath(ctx context.Context, sha, path string, err error) {
	c.remember(ctx, err, sha, path)
}

// MissingPath returns a remembered missing path.
func (c *Cached) MissingPath(ctx context.Context, sha, path string) error {
	_, err := c.recall(ctx, cache.NegativeKey{Kind: "path", SHA: sha, Path: path})
	return err
}

// Refs implements Repo. Online the listing is asked for and remembered in
// place of the last one (one write); when that fails (offline) the refs
// remembered stand in.
func (c *Cached) Refs(ctx context.Context) (*Refs, error) {
	if err := c.known(ctx, nil, ""); err != nil {
		return nil, err
	}
	if c.opts.FreshFor > 0 {
		if cached, err := c.db.ListRefs(ctx, c.key); err == nil && len(cached) > 0 && c.fresh(oldest(cached)) {
			return refsOf(cached), nil
		}
	}
	refs, err := c.inner.Refs(ctx)
	if err == nil {
		c.wrote(c.db.ReplaceRefs(ctx, c.key, refs.Commits, c.opts.Now()))
		return refs, nil
	}
	if IsNotFound(err) {
		c.remember(ctx, err, "", "")
		return nil, err
	}
	if Refused(err) || ctx.Err() != nil {
		// Refused by a mirror (its policy, the token), or the caller gave
		// up: no stale answer either.
		return nil, err
	}
	cached, lerr := c.db.ListRefs(ctx, c.key)
	if lerr != nil || len(cached) == 0 {
		return nil, err
	}
	return refsOf(cached), nil
}

// refsOf is a remembered listing (its Head name is not kept).
func refsOf(cached []cache.Ref) *Refs {
	out := &Refs{Commits: map[string]string{}}
	for _, r := range cached {
		out.Commits[r.Ref] = r.SHA
	}
	return out
}

// oldest is when the least recently confirmed of refs was.
func oldest(refs []cache.Ref) time.Time {
	return slices.MinFunc(refs, func(a, b cache.Ref) int { return a.ResolvedAt.Compare(b.ResolvedAt) }).ResolvedAt
}

// Resolve implements Repo.
func (c *Cached) Resolve(ctx context.Context, ref string, _ *Pin) (Pin, error) {
	if source.IsSHA(ref) {
		return Pin{SHA: ref}, nil
	}
	name := RefName(ref)
	if err := c.known(ctx, []string{"ref"}, name); err != nil {
		return Pin{}, err
	}
	cached, hit, _ := c.db.GetRef(ctx, c.key, name)
	var known *Pin
	if hit {
		known = &Pin{SHA: cached.SHA, ETag: cached.ETag, At: cached.ResolvedAt}
		if c.fresh(cached.ResolvedAt) {
			c.count(ctx, KindRef, true)
			return *known, nil
		}
	}
	pin, err := c.inner.Resolve(ctx, ref, known)
	switch {
	case err == nil && pin.NotModified:
		c.count(ctx, KindRef, true)
		cached.ResolvedAt = c.opts.Now()
		c.wrote(c.db.PutRef(ctx, cached))
		return pin, nil
	case err == nil:
		c.count(ctx, KindRef, false)
		c.wrote(c.db.PutRef(ctx, cache.Ref{Remote: c.key, Ref: name, SHA: pin.SHA, ETag: pin.ETag, ResolvedAt: c.opts.Now()}))
		c.recordVerdict(ctx, pin.SHA, nil) // a branch or tag head is on a branch or tag by definition
		return pin, nil
	case IsNotFound(err):
		c.remember(ctx, err, name, "")
		return Pin{}, err
	case !hit || Refused(err) || ctx.Err() != nil:
		// Refused by a mirror (its policy, the token), or cancelled by the
		// caller: a cached answer must not paper over that.
		if errors.Is(err, ErrOffline) {
			return Pin{}, plugind.Errorf(plugind.CodeOfflineMiss, "offline: %s of %s was never resolved, so it is not in the cache: %w", DescribeRef(name), c.key, ErrOffline)
		}
		return Pin{}, err
	}
	c.count(ctx, KindRef, true)
	age := c.age(cached.ResolvedAt)
	pin = Pin{SHA: cached.SHA, ETag: cached.ETag, At: cached.ResolvedAt}
	if errors.Is(err, ErrOffline) {
		pin.Warning = fmt.Sprintf("offline: %s of %s is %s as cached %s", DescribeRef(name), c.key, Short(cached.SHA), age)
	} else {
		pin.Warning = fmt.Sprintf("network failed (%v); planned from cache: %s of %s is %s as cached %s", err, DescribeRef(name), c.key, Short(cached.SHA), age)
		pin.Unchecked = UncheckedNetwork
	}
	return pin, nil
}

func (c *Cached) age(t time.Time) string {
	return max(c.opts.Now().Sub(t).Round(time.Second), 0).String() + " ago"
}

// verdict returns the remembered verdict: nil when reachable, the refusal
// when not, errNoVerdict when unknown.
func (c *Cached) verdict(ctx context.Context, sha string) error {
	v, ok, err := c.db.GetVerdict(ctx, c.key, sha)
	if err != nil || !ok {
		return errNoVerdict
	}
	if !v.Reachable && (c.opts.Refresh || c.opts.Now().Sub(v.CheckedAt) > c.opts.NegativeTTL) {
		// A refusal is a negative result like any other: --refresh asks
		// again, and it is believed for NegativeTTL (a branch may come to
		// reach the commit).
		return errNoVerdict
	}
	c.count(ctx, KindVerdict, true)
	if v.Reachable {
		return nil
	}
	checked := "checked " + c.age(v.CheckedAt)
	if c.opts.RememberedBy != "" {
		checked = c.recalled(v.CheckedAt)
	}
	return plugind.Errorf(plugind.CodeNotFound, "commit %s of %s: %w (%s)", sha, c.key, ErrUnreachable, checked)
}

var errNoVerdict = errors.New("no verdict")

func (c *Cached) recordVerdict(ctx context.Context, sha string, err error) {
	switch {
	case err == nil || errors.Is(err, ErrUnreachable) && !errors.Is(err, ErrCommitNotFound):
		c.wrote(c.db.PutVerdict(ctx, cache.Verdict{Remote: c.key, SHA: sha, Reachable: err == nil, CheckedAt: c.opts.Now()}))
	case IsNotFound(err):
		c.remember(ctx, err, sha, "")
	}
}

// Reachable implements Repo: one check per (repository, commit), ever.
func (c *Cached) Reachable(ctx context.Context, sha, hint string) error {
	if err := c.known(ctx, []string{"commit", KindCommitOrUnreachable}, sha); err != nil {
		return err
	}
	if err := c.verdict(ctx, sha); err != errNoVerdict {
		return err
	}
	c.count(ctx, KindVerdict, false)
	err := c.inner.Reachable(ctx, sha, hint)
	if errors.Is(err, ErrOffline) {
		return plugind.Errorf(plugind.CodeOfflineMiss, "offline: whether commit %s is on a branch or tag of %s was never checked: %w", sha, c.key, ErrOffline)
	}
	c.recordVerdict(ctx, sha, err)
	return err
}

// Fetch implements Repo. A remembered verdict spares the check (or refuses
// at once); a fetch that proved reachability records it. A refused tree is
// remembered too (contentVerdict), so a re-plan does not download it again.
func (c *Cached) Fetch(ctx context.Context, sha, dest string, opts FetchOptions) (*Fetched, error) {
	if err := c.known(ctx, []string{"commit", KindCommitOrUnreachable}, sha); err != nil {
		return nil, err
	}
	if opts.Verify {
		switch err := c.verdict(ctx, sha); {
		case err == nil:
			opts.Verify = false
		case err != errNoVerdict:
			return nil, err
		}
	}
	if err := c.contentVerdict(ctx, sha, opts); err != nil {
		return nil, err
	}
	got, err := c.inner.Fetch(ctx, sha, dest, opts)
	if err != nil {
		c.recordVerdict(ctx, sha, errOnlyIfDefinitive(err))
		c.rememberContent(ctx, sha, opts, err)
		return nil, err
	}
	if got.Verified {
		c.recordVerdict(ctx, sha, nil)
	}
	return got, nil
}

// errOnlyIfDefinitive keeps only the errors worth remembering.
func errOnlyIfDefinitive(err error) error {
	if IsNotFound(err) {
		return err
	}
	return errors.New("transient")
}
