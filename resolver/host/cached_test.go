package host

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
)

const (
	testURL = "https://github.com/acme/tools"
	testKey = "github.com/acme/tools"
)

// cachedEnv is a Cached layer over a scripted host and a store in memory,
// on a clock the test moves.
type cachedEnv struct {
	host      *fakeRepo
	db        *memMeta
	clock     *testClock
	c         *Cached
	writeErrs []error
}

func newCachedEnv(t *testing.T, opts CacheOptions) *cachedEnv {
	t.Helper()
	e := &cachedEnv{host: newFakeRepo(t, testURL), db: newMemMeta(), clock: newClock()}
	opts.Now = e.clock.Now
	opts.OnWriteError = func(err error) { e.writeErrs = append(e.writeErrs, err) }
	e.c = NewCached(e.host, e.db, opts)
	return e
}

// remember puts ref at sha in the store, resolved age ago.
func (e *cachedEnv) remember(ref, sha, etag string, age time.Duration) {
	e.db.refs[[2]string{testKey, ref}] = cache.Ref{Remote: testKey, Ref: ref, SHA: sha, ETag: etag, ResolvedAt: e.clock.Now().Add(-age)}
}

// verdict puts a reachability verdict checked age ago in the store.
func (e *cachedEnv) verdict(sha string, reachable bool, age time.Duration) {
	e.db.verdicts[[2]string{testKey, sha}] = cache.Verdict{Remote: testKey, SHA: sha, Reachable: reachable, CheckedAt: e.clock.Now().Add(-age)}
}

// checkErr fails t unless err wraps want (nil: no error) with code.
func checkErr(t *testing.T, err, want error, code plugind.Code) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != nil && !errors.Is(err, want):
		t.Fatalf("error %v, want one wrapping %v", err, want)
	case want != nil && plugind.CodeOf(err) != code:
		t.Fatalf("error %v: code %q, want %q", err, plugind.CodeOf(err), code)
	}
}

// TestCachedResolve: what a resolve asks the host given what the cache
// remembers, what it answers when the host fails, and what it writes.
func TestCachedResolve(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ref  string
		// remembered is the ref's cached commit, resolved an hour ago
		// with ETag "e1" ("" = none).
		remembered string
		host       answer[Pin]
		cancel     bool // resolve under a cancelled context

		wantAsked   bool
		wantKnown   bool // the host was asked with the remembered pin
		wantSHA     string
		wantErr     error
		wantCode    plugind.Code
		wantWarning string // contained in Pin.Warning
		wantUnckd   string
		wantStored  string // the ref's cached commit afterwards
		wantHitMiss [2]int // ref counter
	}{{
		name: "a commit id is its own pin", ref: shaA,
		wantSHA: shaA,
	}, {
		name: "first resolve asks without a known pin and remembers the answer", ref: "main",
		host:      answer[Pin]{val: Pin{SHA: shaA, ETag: `"e2"`}},
		wantAsked: true, wantSHA: shaA, wantStored: shaA, wantHitMiss: [2]int{0, 1},
	}, {
		name: "the default branch is remembered as HEAD", ref: "",
		host:      answer[Pin]{val: Pin{SHA: shaA}},
		wantAsked: true, wantSHA: shaA, wantStored: shaA, wantHitMiss: [2]int{0, 1},
	}, {
		name: "a remembered ref is asked conditionally and a 304 is a hit", ref: "main", remembered: shaA,
		host:      answer[Pin]{val: Pin{SHA: shaA, NotModified: true}},
		wantAsked: true, wantKnown: true, wantSHA: shaA, wantStored: shaA, wantHitMiss: [2]int{1, 0},
	}, {
		name: "a moved ref replaces the remembered commit", ref: "main", remembered: shaA,
		host:      answer[Pin]{val: Pin{SHA: shaB, ETag: `"e2"`}},
		wantAsked: true, wantKnown: true, wantSHA: shaB, wantStored: shaB, wantHitMiss: [2]int{0, 1},
	}, {
		name: "offline: the remembered commit, saying how old it is", ref: "main", remembered: shaA,
		host:      answer[Pin]{err: NewOffline(parseSource(t, testURL)).miss("ref main")},
		wantAsked: true, wantKnown: true, wantSHA: shaA, wantStored: shaA, wantHitMiss: [2]int{1, 0},
		wantWarning: "offline: ref main of " + testKey + " is aaaaaaaaaaaa as cached 1h0m0s ago",
	}, {
		name: "offline and never resolved: an offline miss", ref: "main",
		host:      answer[Pin]{err: NewOffline(parseSource(t, testURL)).miss("ref main")},
		wantAsked: true, wantErr: ErrOffline, wantCode: plugind.CodeOfflineMiss,
	}, {
		name: "network down: the remembered commit, marked unchecked", ref: "main", remembered: shaA,
		host:      answer[Pin]{err: errNetwork},
		wantAsked: true, wantKnown: true, wantSHA: shaA, wantStored: shaA, wantHitMiss: [2]int{1, 0},
		wantWarning: "network failed (" + errNetwork.Error() + "); planned from cache", wantUnckd: UncheckedNetwork,
	}, {
		name: "network down and never resolved: the host's error", ref: "main",
		host:      answer[Pin]{err: errNetwork},
		wantAsked: true, wantErr: errNetwork, wantCode: plugind.CodeSourceUnreadable,
	}, {
		name: "a policy block is not papered over by the cache", ref: "main", remembered: shaA,
		host:      answer[Pin]{err: errBlocked},
		wantAsked: true, wantKnown: true, wantErr: errBlocked, wantCode: plugind.CodeBlocked, wantStored: shaA,
	}, {
		name: "refused credentials are not papered over either", ref: "main", remembered: shaA,
		host:      answer[Pin]{err: errToken},
		wantAsked: true, wantKnown: true, wantErr: ErrRefused, wantCode: plugind.CodeSourceUnreadable, wantStored: shaA,
	}, {
		name: "a cancelled resolve is not answered from the cache", ref: "main", remembered: shaA,
		host: answer[Pin]{err: context.Canceled}, cancel: true,
		wantAsked: true, wantKnown: true, wantErr: context.Canceled, wantStored: shaA,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newCachedEnv(t, CacheOptions{})
			if tc.remembered != "" {
				e.remember(tc.ref, tc.remembered, `"e1"`, time.Hour)
			}
			if tc.wantAsked {
				e.host.onResolve(tc.host.val, tc.host.err)
			}
			ctx := context.Background()
			if tc.cancel {
				c, cancel := context.WithCancel(ctx)
				cancel()
				ctx = c
			}
			pin, err := e.c.Resolve(ctx, tc.ref, nil)
			checkErr(t, err, tc.wantErr, tc.wantCode)
			if pin.SHA != tc.wantSHA {
				t.Errorf("pin %s, want %s", pin.SHA, tc.wantSHA)
			}
			if !strings.Contains(pin.Warning, tc.wantWarning) || (tc.wantWarning == "") != (pin.Warning == "") {
				t.Errorf("warning %q, want one with %q", pin.Warning, tc.wantWarning)
			}
			if pin.Unchecked != tc.wantUnckd {
				t.Errorf("unchecked %q, want %q", pin.Unchecked, tc.wantUnckd)
			}
			calls := e.host.Calls()
			if asked := len(calls) > 0; asked != tc.wantAsked {
				t.Fatalf("host asked: %v, want %v (%s)", asked, tc.wantAsked, e.host.Ops())
			}
			if tc.wantAsked {
				known := calls[0].Known
				if (known != nil) != tc.wantKnown {
					t.Fatalf("host asked with known pin %+v, want one: %v", known, tc.wantKnown)
				}
				if known != nil && (known.SHA != tc.remembered || known.ETag != `"e1"` || !known.At.Equal(e.clock.Now().Add(-time.Hour))) {
					t.Errorf("known pin %+v is not the remembered one", known)
				}
			}
			name := tc.ref
			if name == "" {
				name = HeadRef
			}
			if tc.wantStored != "" {
				r, ok := e.db.Ref(testKey, name)
				if !ok || r.SHA != tc.wantStored {
					t.Errorf("cached %s: %+v, want %s", name, r, tc.wantStored)
				}
			}
			if hit, miss := e.db.Counts(KindRef); [2]int{hit, miss} != tc.wantHitMiss {
				t.Errorf("ref hits/misses %d/%d, want %v", hit, miss, tc.wantHitMiss)
			}
		})
	}
}

// TestCachedResolveWrites: a fresh answer is written with its ETag and
// the time it came, and proves its commit reachable (a branch head is on a
// branch); a 304 moves only the time; nothing is written for a commit id.
func TestCachedResolveWrites(t *testing.T) {
	t.Parallel()
	e := newCachedEnv(t, CacheOptions{})
	e.host.onResolve(Pin{SHA: shaA, ETag: `"e2"`}, nil).onResolve(Pin{SHA: shaA, NotModified: true}, nil)
	if _, err := e.c.Resolve(context.Background(), "v1", nil); err != nil {
		t.Fatal(err)
	}
	at := e.clock.Now()
	if r, _ := e.db.Ref(testKey, "v1"); r.SHA != shaA || r.ETag != `"e2"` || !r.ResolvedAt.Equal(at) {
		t.Fatalf("cached ref %+v", r)
	}
	if v, ok := e.db.Verdict(testKey, shaA); !ok || !v.Reachable || !v.CheckedAt.Equal(at) {
		t.Fatalf("a resolved head is not remembered reachable: %+v %v", v, ok)
	}
	e.clock.Advance(time.Minute)
	if _, err := e.c.Resolve(context.Background(), "v1", nil); err != nil {
		t.Fatal(err)
	}
	if r, _ := e.db.Ref(testKey, "v1"); r.SHA != shaA || r.ETag != `"e2"` || !r.ResolvedAt.Equal(e.clock.Now()) {
		t.Fatalf("after a 304 the cached ref is %+v: want its ETag kept and its time moved", r)
	}
	// The verdict a resolve wrote spares the reachability check.
	if err := e.c.Reachable(context.Background(), shaA, "v1"); err != nil {
		t.Fatal(err)
	}
	if got := e.host.Ops(); got != "resolve resolve" {
		t.Fatalf("host saw %q", got)
	}
	writes := e.db.writes
	if _, err := e.c.Resolve(context.Background(), shaB, nil); err != nil || e.db.writes != writes {
		t.Fatalf("resolving a commit id wrote to the cache (%v)", err)
	}
}

// TestCachedNegatives: a "does not exist" is remembered for NegativeTTL
// and answered without the host, keeping its code and sentinel and saying
// it is remembered; --refresh asks again; a missing repository stands for
// every question about it.
func TestCachedNegatives(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		opts    CacheOptions
		host    error // what the first question hears
		ask     func(c *Cached) error
		again   func(c *Cached) error // the second question
		wantErr error
		advance time.Duration // between the two
		// wantAsked: the second question reached the host.
		wantAsked bool
	}{{
		name: "a missing ref", host: errRefGone, wantErr: ErrRefNotFound,
		ask:   func(c *Cached) error { _, err := c.Resolve(ctx, "main", nil); return err },
		again: func(c *Cached) error { _, err := c.Resolve(ctx, "main", nil); return err },
	}, {
		name: "a missing ref is another ref's business", host: errRefGone, wantErr: ErrRefNotFound,
		ask:       func(c *Cached) error { _, err := c.Resolve(ctx, "main", nil); return err },
		again:     func(c *Cached) error { _, err := c.Resolve(ctx, "dev", nil); return err },
		wantAsked: true,
	}, {
		name: "a missing ref is asked again after the TTL", host: errRefGone, wantErr: ErrRefNotFound,
		advance:   DefaultNegativeTTL + time.Second,
		ask:       func(c *Cached) error { _, err := c.Resolve(ctx, "main", nil); return err },
		again:     func(c *Cached) error { _, err := c.Resolve(ctx, "main", nil); return err },
		wantAsked: true,
	}, {
		name: "a shorter TTL is honoured", host: errRefGone, wantErr: ErrRefNotFound,
		opts: CacheOptions{NegativeTTL: time.Minute}, advance: 2 * time.Minute,
		ask:       func(c *Cached) error { _, err := c.Resolve(ctx, "main", nil); return err },
		again:     func(c *Cached) error { _, err := c.Resolve(ctx, "main", nil); return err },
		wantAsked: true,
	}, {
		name: "--refresh asks again", host: errRefGone, wantErr: ErrRefNotFound,
		opts:      CacheOptions{Refresh: true},
		ask:       func(c *Cached) error { _, err := c.Resolve(ctx, "main", nil); return err },
		again:     func(c *Cached) error { _, err := c.Resolve(ctx, "main", nil); return err },
		wantAsked: true,
	}, {
		name: "a missing repository answers a resolve of any ref", host: errRepoGone, wantErr: ErrRepoNotFound,
		ask:   func(c *Cached) error { _, err := c.Resolve(ctx, "main", nil); return err },
		again: func(c *Cached) error { _, err := c.Resolve(ctx, "v2", nil); return err },
	}, {
		name: "a missing repository answers a ref listing", host: errRepoGone, wantErr: ErrRepoNotFound,
		ask:   func(c *Cached) error { _, err := c.Resolve(ctx, "main", nil); return err },
		again: func(c *Cached) error { _, err := c.Refs(ctx); return err },
	}, {
		name: "a missing repository answers a reachability check", host: errRepoGone, wantErr: ErrRepoNotFound,
		ask:   func(c *Cached) error { _, err := c.Refs(ctx); return err },
		again: func(c *Cached) error { return c.Reachable(ctx, shaA, "") },
	}, {
		name: "a missing repository answers a fetch", host: errRepoGone, wantErr: ErrRepoNotFound,
		ask:   func(c *Cached) error { return c.Reachable(ctx, shaA, "") },
		again: func(c *Cached) error { _, err := c.Fetch(ctx, shaB, "unused", FetchOptions{}); return err },
	}, {
		name: "a missing commit answers a fetch of it", host: errCommitGone, wantErr: ErrCommitNotFound,
		ask:   func(c *Cached) error { return c.Reachable(ctx, shaA, "") },
		again: func(c *Cached) error { _, err := c.Fetch(ctx, shaA, "unused", FetchOptions{}); return err },
	}, {
		name: "a missing commit is only that commit", host: errCommitGone, wantErr: ErrCommitNotFound,
		ask:       func(c *Cached) error { _, err := c.Fetch(ctx, shaA, "unused", FetchOptions{}); return err },
		again:     func(c *Cached) error { return c.Reachable(ctx, shaB, "") },
		wantAsked: true,
	}, {
		name: "a commit git would not serve answers a check of it", host: errEither, wantErr: ErrCommitNotFound,
		ask:   func(c *Cached) error { _, err := c.Fetch(ctx, shaA, "unused", FetchOptions{}); return err },
		again: func(c *Cached) error { return c.Reachable(ctx, shaA, "") },
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newCachedEnv(t, tc.opts)
			e.host.onRefs(nil, tc.host).onResolve(Pin{}, tc.host).onReachable(tc.host).onFetch(nil, tc.host)
			first := tc.ask(e.c)
			if !errors.Is(first, tc.wantErr) {
				t.Fatalf("first answer %v, want %v", first, tc.wantErr)
			}
			e.clock.Advance(tc.advance)
			asked := len(e.host.Calls())
			second := tc.again(e.c)
			if got := len(e.host.Calls()) > asked; got != tc.wantAsked {
				t.Fatalf("second question reached the host: %v, want %v (%s)", got, tc.wantAsked, e.host.Ops())
			}
			if !errors.Is(second, tc.wantErr) {
				t.Fatalf("second answer %v, want %v", second, tc.wantErr)
			}
			if tc.wantAsked {
				return
			}
			if plugind.CodeOf(second) != plugind.CodeOf(first) {
				t.Errorf("remembered code %q, was %q", plugind.CodeOf(second), plugind.CodeOf(first))
			}
			if msg := second.Error(); !strings.Contains(msg, first.Error()) || !strings.Contains(msg, "remembered from") || !strings.Contains(msg, "--refresh") {
				t.Errorf("remembered answer %q does not repeat %q and say it is remembered", msg, first)
			}
		})
	}
}

// TestCachedNegativeKinds: what is remembered for each not-found answer,
// and under which key; failures that are not answers are not remembered.
func TestCachedNegativeKinds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		host     error
		ask      func(c *Cached) error
		wantKind string // "" = nothing remembered
		wantSHA  string
	}{
		{"a missing ref under its name", errRefGone, func(c *Cached) error { _, err := c.Resolve(ctx, "dev", nil); return err }, "ref", "dev"},
		{"the default branch as HEAD", errRefGone, func(c *Cached) error { _, err := c.Resolve(ctx, "", nil); return err }, "ref", HeadRef},
		{"a missing repository for every commit", errRepoGone, func(c *Cached) error { return c.Reachable(ctx, shaA, "") }, "repo", ""},
		{"a missing commit", errCommitGone, func(c *Cached) error { return c.Reachable(ctx, shaA, "") }, "commit", shaA},
		{"a commit git would not serve", errEither, func(c *Cached) error { return c.Reachable(ctx, shaA, "") }, KindCommitOrUnreachable, shaA},
		{"an unreachable commit is a verdict, not a negative", errOffReach, func(c *Cached) error { return c.Reachable(ctx, shaA, "") }, "", ""},
		{"a network failure", errNetwork, func(c *Cached) error { return c.Reachable(ctx, shaA, "") }, "", ""},
		{"a policy block", errBlocked, func(c *Cached) error { _, err := c.Resolve(ctx, "main", nil); return err }, "", ""},
		{"a failed fetch", errNetwork, func(c *Cached) error { _, err := c.Fetch(ctx, shaA, "unused", FetchOptions{}); return err }, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newCachedEnv(t, CacheOptions{})
			e.host.onResolve(Pin{}, tc.host).onReachable(tc.host).onFetch(nil, tc.host)
			if err := tc.ask(e.c); !errors.Is(err, tc.host) {
				t.Fatalf("answer %v, want the host's %v", err, tc.host)
			}
			negs := e.db.Negatives()
			if tc.wantKind == "" {
				if len(negs) != 0 {
					t.Fatalf("remembered %+v", negs)
				}
				return
			}
			if len(negs) != 1 {
				t.Fatalf("remembered %+v, want one %s", negs, tc.wantKind)
			}
			n, now := negs[0], e.clock.Now()
			if n.Kind != tc.wantKind || n.SHA != tc.wantSHA || n.Remote != testKey || n.Path != "" ||
				n.Code != string(plugind.CodeOf(tc.host)) || n.Message != tc.host.Error() ||
				!n.Created.Equal(now) || !n.Expires.Equal(now.Add(DefaultNegativeTTL)) {
				t.Fatalf("remembered %+v, want kind %q sha %q for an hour", n, tc.wantKind, tc.wantSHA)
			}
		})
	}
}

// TestCachedRefs: a listing is asked for every time and replaces the last
// one; when the host fails the remembered listing stands in, unless the
// failure is an answer (not found) or a refusal.
func TestCachedRefs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	listing := &Refs{Head: "main", Commits: map[string]string{"main": shaA, HeadRef: shaA, "v1": shaB}}
	for _, tc := range []struct {
		name       string
		remembered map[string]string
		host       answer[*Refs]
		cancel     bool              // list under a cancelled context
		want       map[string]string // the answer's commits; nil: an error
		wantErr    error
		wantStored map[string]string
	}{{
		name: "online: the listing, remembered", host: answer[*Refs]{val: listing},
		want: listing.Commits, wantStored: listing.Commits,
	}, {
		name: "online: refs gone upstream are forgotten", remembered: map[string]string{"main": shaC, "old": shaC},
		host: answer[*Refs]{val: listing}, want: listing.Commits, wantStored: listing.Commits,
	}, {
		name: "network down: the remembered listing", remembered: map[string]string{"main": shaC},
		host: answer[*Refs]{err: errNetwork}, want: map[string]string{"main": shaC}, wantStored: map[string]string{"main": shaC},
	}, {
		name: "offline: the remembered listing", remembered: map[string]string{"main": shaC},
		host: answer[*Refs]{err: NewOffline(parseSource(t, testURL)).miss("the ref list")}, want: map[string]string{"main": shaC},
	}, {
		name: "network down and nothing remembered: the host's error",
		host: answer[*Refs]{err: errNetwork}, wantErr: errNetwork,
	}, {
		name: "a missing repository is not answered from the cache", remembered: map[string]string{"main": shaC},
		host: answer[*Refs]{err: errRepoGone}, wantErr: ErrRepoNotFound,
	}, {
		name: "a policy block is not answered from the cache", remembered: map[string]string{"main": shaC},
		host: answer[*Refs]{err: errBlocked}, wantErr: errBlocked,
	}, {
		name: "refused credentials are not answered from the cache", remembered: map[string]string{"main": shaC},
		host: answer[*Refs]{err: errToken}, wantErr: ErrRefused,
	}, {
		name: "a cancelled listing is not answered from the cache", remembered: map[string]string{"main": shaC},
		host: answer[*Refs]{err: context.Canceled}, cancel: true, wantErr: context.Canceled,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newCachedEnv(t, CacheOptions{})
			for ref, sha := range tc.remembered {
				e.remember(ref, sha, "", time.Hour)
			}
			e.host.onRefs(tc.host.val, tc.host.err)
			ctx := ctx
			if tc.cancel {
				c, cancel := context.WithCancel(ctx)
				cancel()
				ctx = c
			}
			refs, err := e.c.Refs(ctx)
			if tc.want == nil {
				if !errors.Is(err, tc.wantErr) || refs != nil {
					t.Fatalf("got %+v, %v; want the error %v", refs, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !sameCommits(refs.Commits, tc.want) {
				t.Fatalf("refs %v, want %v", refs.Commits, tc.want)
			}
			for ref, sha := range tc.wantStored {
				if r, ok := e.db.Ref(testKey, ref); !ok || r.SHA != sha {
					t.Errorf("cached %s = %+v, want %s", ref, r, sha)
				}
			}
			if stored, _ := e.db.ListRefs(ctx, testKey); tc.wantStored != nil && len(stored) != len(tc.wantStored) {
				t.Errorf("cache holds %d refs, want %d", len(stored), len(tc.wantStored))
			}
		})
	}
}

func sameCommits(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestCachedReachable: one check per (repository, commit): a positive
// verdict is believed for good, a refusal for NegativeTTL and not with
// --refresh; every verdict the host gives is written, and nothing that is
// not one.
func TestCachedReachable(t *testing.T) {
	t.Parallel()
	type remembered struct {
		reachable bool
		age       time.Duration
	}
	for _, tc := range []struct {
		name       string
		opts       CacheOptions
		remembered *remembered
		host       error
		wantAsked  bool
		wantErr    error
		wantCode   plugind.Code
		wantStored *bool // the verdict afterwards; nil: none
		wantHit    int   // verdict counter
		wantMiss   int
	}{{
		name: "a remembered reachable commit is not asked about", remembered: &remembered{true, 1000 * time.Hour},
		wantStored: ptr(true), wantHit: 1,
	}, {
		name: "a reachable verdict stands with --refresh", opts: CacheOptions{Refresh: true}, remembered: &remembered{true, time.Hour},
		wantStored: ptr(true), wantHit: 1,
	}, {
		name: "a recent refusal is not asked about", remembered: &remembered{false, 5 * time.Minute},
		wantErr: ErrUnreachable, wantCode: plugind.CodeNotFound, wantStored: ptr(false), wantHit: 1,
	}, {
		name: "an old refusal is asked again", remembered: &remembered{false, DefaultNegativeTTL + time.Minute},
		wantAsked: true, wantStored: ptr(true), wantMiss: 1,
	}, {
		name: "a refusal is asked again with --refresh", opts: CacheOptions{Refresh: true}, remembered: &remembered{false, time.Minute},
		host: errOffReach, wantAsked: true, wantErr: ErrUnreachable, wantCode: plugind.CodeNotFound, wantStored: ptr(false), wantMiss: 1,
	}, {
		name: "the host's yes is remembered", wantAsked: true, wantStored: ptr(true), wantMiss: 1,
	}, {
		name: "the host's no is remembered", host: errOffReach,
		wantAsked: true, wantErr: ErrUnreachable, wantCode: plugind.CodeNotFound, wantStored: ptr(false), wantMiss: 1,
	}, {
		name: "a commit the host does not have is a negative, not a verdict", host: errCommitGone,
		wantAsked: true, wantErr: ErrCommitNotFound, wantCode: plugind.CodeNotFound, wantMiss: 1,
	}, {
		name: "a failure is not a verdict", host: errNetwork,
		wantAsked: true, wantErr: errNetwork, wantCode: plugind.CodeSourceUnreadable, wantMiss: 1,
	}, {
		name: "offline and never checked: an offline miss", host: NewOffline(parseSource(t, testURL)).miss("x"),
		wantAsked: true, wantErr: ErrOffline, wantCode: plugind.CodeOfflineMiss, wantMiss: 1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newCachedEnv(t, tc.opts)
			if tc.remembered != nil {
				e.verdict(shaA, tc.remembered.reachable, tc.remembered.age)
			}
			e.host.onReachable(tc.host)
			err := e.c.Reachable(context.Background(), shaA, "v1")
			checkErr(t, err, tc.wantErr, tc.wantCode)
			calls := e.host.Calls()
			if (len(calls) > 0) != tc.wantAsked {
				t.Fatalf("host asked: %s, want asked: %v", e.host.Ops(), tc.wantAsked)
			}
			if tc.wantAsked && (calls[0].SHA != shaA || calls[0].Hint != "v1") {
				t.Errorf("host asked %+v, want %s with hint v1", calls[0], shaA)
			}
			v, ok := e.db.Verdict(testKey, shaA)
			switch {
			case tc.wantStored == nil && ok:
				t.Errorf("remembered verdict %+v", v)
			case tc.wantStored != nil && (!ok || v.Reachable != *tc.wantStored):
				t.Errorf("verdict %+v (%v), want reachable=%v", v, ok, *tc.wantStored)
			}
			if hit, miss := e.db.Counts(KindVerdict); hit != tc.wantHit || miss != tc.wantMiss {
				t.Errorf("verdict hits/misses %d/%d, want %d/%d", hit, miss, tc.wantHit, tc.wantMiss)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestCachedFetchVerify: a remembered verdict spares the host its check
// (Verify is passed down only when nothing is known) or refuses at once; a
// fetch that proves reachability, or finds the commit off every branch,
// leaves a verdict behind.
func TestCachedFetchVerify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		remembered  *bool
		host        answer[*Fetched]
		wantAsked   bool
		wantVerify  bool // passed to the host
		wantErr     error
		wantVerdict *bool
	}{{
		name: "known reachable: the host need not check", remembered: ptr(true),
		host: answer[*Fetched]{val: &Fetched{Transport: "git"}}, wantAsked: true, wantVerdict: ptr(true),
	}, {
		name: "known unreachable: refused without a download", remembered: ptr(false),
		wantErr: ErrUnreachable, wantVerdict: ptr(false),
	}, {
		name: "unknown: the host checks, and its proof is remembered",
		host: answer[*Fetched]{val: &Fetched{Transport: "git", Verified: true}}, wantAsked: true, wantVerify: true, wantVerdict: ptr(true),
	}, {
		name: "unknown: a fetch that proves nothing leaves nothing",
		host: answer[*Fetched]{val: &Fetched{Transport: "archive"}}, wantAsked: true, wantVerify: true,
	}, {
		name: "unknown: the host's refusal is remembered",
		host: answer[*Fetched]{err: errOffReach}, wantAsked: true, wantVerify: true, wantErr: ErrUnreachable, wantVerdict: ptr(false),
	}, {
		name: "unknown: a failed download leaves nothing",
		host: answer[*Fetched]{err: errNetwork}, wantAsked: true, wantVerify: true, wantErr: errNetwork,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newCachedEnv(t, CacheOptions{})
			if tc.remembered != nil {
				e.verdict(shaA, *tc.remembered, time.Minute)
			}
			e.host.onFetch(tc.host.val, tc.host.err)
			got, err := e.c.Fetch(context.Background(), shaA, "dest", FetchOptions{Verify: true, Paths: []string{"p"}})
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if err == nil && got.Transport != tc.host.val.Transport {
				t.Fatalf("fetched %+v", got)
			}
			calls := e.host.Calls()
			if (len(calls) > 0) != tc.wantAsked {
				t.Fatalf("host asked: %s", e.host.Ops())
			}
			if tc.wantAsked {
				if c := calls[0]; c.Opts.Verify != tc.wantVerify || c.SHA != shaA || c.Dest != "dest" || len(c.Opts.Paths) != 1 {
					t.Errorf("host asked %+v, want Verify=%v and the caller's options", c, tc.wantVerify)
				}
			}
			v, ok := e.db.Verdict(testKey, shaA)
			if (tc.wantVerdict == nil) == ok || (ok && v.Reachable != *tc.wantVerdict) {
				t.Errorf("verdict %+v (%v), want %v", v, ok, tc.wantVerdict)
			}
		})
	}
}

// TestCachedWriteErrors: the cache is an optimization: a store that cannot
// write costs the caller nothing but a report to OnWriteError.
func TestCachedWriteErrors(t *testing.T) {
	t.Parallel()
	e := newCachedEnv(t, CacheOptions{})
	full := errors.New("disk full")
	e.db.failWrites = full
	e.host.onResolve(Pin{SHA: shaA}, nil).onReachable(errCommitGone).onRefs(&Refs{Commits: map[string]string{"main": shaA}}, nil)
	ctx := context.Background()
	if pin, err := e.c.Resolve(ctx, "main", nil); err != nil || pin.SHA != shaA {
		t.Fatalf("resolve with a failing cache: %+v, %v", pin, err)
	}
	if err := e.c.Reachable(ctx, shaB, ""); !errors.Is(err, ErrCommitNotFound) {
		t.Fatalf("reachable with a failing cache: %v", err)
	}
	if _, err := e.c.Refs(ctx); err != nil {
		t.Fatalf("refs with a failing cache: %v", err)
	}
	if len(e.writeErrs) == 0 {
		t.Fatal("OnWriteError heard nothing")
	}
	for _, err := range e.writeErrs {
		if !errors.Is(err, full) {
			t.Errorf("OnWriteError heard %v", err)
		}
	}
}

// TestCachedMissingPath: a folder the resolver found missing at a commit
// is remembered for that commit and folder alone.
func TestCachedMissingPath(t *testing.T) {
	t.Parallel()
	e := newCachedEnv(t, CacheOptions{})
	ctx := context.Background()
	missing := plugind.Errorf(plugind.CodeNotFound, "plugins/x at %s: %w", shaA, ErrPathNotFound)
	e.c.RememberMissingPath(ctx, shaA, "plugins/x", missing)
	if err := e.c.MissingPath(ctx, shaA, "plugins/x"); !errors.Is(err, ErrPathNotFound) || plugind.CodeOf(err) != plugind.CodeNotFound {
		t.Fatalf("remembered missing path: %v", err)
	}
	for _, other := range [][2]string{{shaB, "plugins/x"}, {shaA, "plugins/y"}, {shaA, "plugins"}} {
		if err := e.c.MissingPath(ctx, other[0], other[1]); err != nil {
			t.Errorf("%s at %s: %v", other[1], other[0], err)
		}
	}
	e.c.RememberMissingPath(ctx, shaA, "plugins/z", errNetwork)
	if err := e.c.MissingPath(ctx, shaA, "plugins/z"); err != nil {
		t.Errorf("a failure was remembered as a missing path: %v", err)
	}
	e.clock.Advance(DefaultNegativeTTL + time.Second)
	if err := e.c.MissingPath(ctx, shaA, "plugins/x"); err != nil {
		t.Errorf("after the TTL: %v", err)
	}
	if len(e.host.Calls()) != 0 {
		t.Errorf("the host was asked: %s", e.host.Ops())
	}
}
