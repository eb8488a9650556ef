package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func newFallback(t *testing.T) (*Fallback, *fakeRepo, *fakeRepo) {
	t.Helper()
	p, s := newFakeRepo(t, testURL), newFakeRepo(t, testURL)
	return &Fallback{Primary: p, Secondary: s, PrimaryLabel: "git", SecondaryLabel: "the archive"}, p, s
}

// fallbackOps calls each method of a Repo, returning its error.
var fallbackOps = map[string]func(ctx context.Context, r Repo) error{
	"refs":      func(ctx context.Context, r Repo) error { _, err := r.Refs(ctx); return err },
	"resolve":   func(ctx context.Context, r Repo) error { _, err := r.Resolve(ctx, "main", nil); return err },
	"reachable": func(ctx context.Context, r Repo) error { return r.Reachable(ctx, shaA, "main") },
	"fetch": func(ctx context.Context, r Repo) error {
		_, err := r.Fetch(ctx, shaA, "dest", FetchOptions{})
		return err
	},
}

// failing makes every method of f answer err.
func (f *fakeRepo) failing(err error) *fakeRepo {
	return f.onRefs(nil, err).onResolve(Pin{}, err).onReachable(err).onFetch(nil, err)
}

// succeeding makes every method of f succeed, Resolve with warning.
func (f *fakeRepo) succeeding(warning string) *fakeRepo {
	return f.onRefs(&Refs{Commits: map[string]string{"main": shaA}}, nil).
		onResolve(Pin{SHA: shaA, Warning: warning}, nil).
		onReachable(nil).
		onFetch(&Fetched{Transport: "archive"}, nil)
}

// TestFallbackStopsOnFinalAnswers: an answer the other transport would
// only repeat, or must not overrule, is returned as is; the secondary is
// never asked.
func TestFallbackStopsOnFinalAnswers(t *testing.T) {
	t.Parallel()
	for name, final := range finalErrors() {
		for op, call := range fallbackOps {
			t.Run(name+"/"+op, func(t *testing.T) {
				t.Parallel()
				f, p, s := newFallback(t)
				p.failing(final)
				if err := call(context.Background(), f); err != final {
					t.Fatalf("%v, want the primary's answer as is: %v", err, final)
				}
				if p.Ops() != op || s.Ops() != "" {
					t.Fatalf("primary saw %q, secondary %q", p.Ops(), s.Ops())
				}
			})
		}
	}
}

// TestFallbackOnFailure: a failure another transport may not share (the
// network, a rate limit) is tried past, with the same arguments, and the
// answer says so.
func TestFallbackOnFailure(t *testing.T) {
	t.Parallel()
	failures := transientErrors()
	failures["rate limited"] = &RetryAfterError{Host: "api.github.com", Status: 429, Wait: time.Hour, Cap: 10 * time.Second}
	for name, failure := range failures {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f, p, s := newFallback(t)
			p.failing(failure)
			s.succeeding("")
			ctx := context.Background()
			if refs, err := f.Refs(ctx); err != nil || refs.Commits["main"] != shaA {
				t.Errorf("refs: %+v, %v", refs, err)
			}
			known := &Pin{SHA: shaB, ETag: "e"}
			pin, err := f.Resolve(ctx, "main", known)
			if err != nil || pin.SHA != shaA {
				t.Errorf("resolve: %+v, %v", pin, err)
			}
			wantWarning := fmt.Sprintf("resolving ref main of %s over git failed (%v); used the archive", testKey, failure)
			if pin.Warning != wantWarning {
				t.Errorf("resolve warning %q, want %q", pin.Warning, wantWarning)
			}
			if err := f.Reachable(ctx, shaA, "v1"); err != nil {
				t.Errorf("reachable: %v", err)
			}
			opts := FetchOptions{Paths: []string{"a"}, Verify: true}
			got, err := f.Fetch(ctx, shaA, "dest", opts)
			if err != nil || got.Transport != "archive" {
				t.Fatalf("fetch: %+v, %v", got, err)
			}
			wantWarning = fmt.Sprintf("fetching aaaaaaaaaaaa of %s over git failed (%v); used the archive", testKey, failure)
			if len(got.Warnings) != 1 || got.Warnings[0] != wantWarning {
				t.Errorf("fetch warnings %q, want %q", got.Warnings, wantWarning)
			}
			if p.Ops() != "refs resolve reachable fetch" || s.Ops() != p.Ops() {
				t.Fatalf("primary saw %q, secondary %q", p.Ops(), s.Ops())
			}
			for i, c := range s.Calls() {
				if pc := p.Calls()[i]; c.Ref != pc.Ref || c.SHA != pc.SHA || c.Hint != pc.Hint || c.Dest != pc.Dest ||
					c.Opts.Verify != pc.Opts.Verify || len(c.Opts.Paths) != len(pc.Opts.Paths) || (pc.Known != nil) != (c.Known != nil) {
					t.Errorf("secondary asked %+v, primary %+v", c, pc)
				}
			}
		})
	}
}

// TestFallbackKeepsTheSecondarysWarning: a secondary that explains its
// own answer is not overwritten.
func TestFallbackKeepsTheSecondarysWarning(t *testing.T) {
	t.Parallel()
	f, p, s := newFallback(t)
	p.failing(errNetwork)
	s.succeeding("offline: as cached")
	pin, err := f.Resolve(context.Background(), "", nil)
	if err != nil || pin.Warning != "offline: as cached" {
		t.Fatalf("%+v, %v", pin, err)
	}
}

// TestFallbackPrimarySucceeds: the secondary is not asked.
func TestFallbackPrimarySucceeds(t *testing.T) {
	t.Parallel()
	for op, call := range fallbackOps {
		f, p, s := newFallback(t)
		p.succeeding("")
		if err := call(context.Background(), f); err != nil {
			t.Errorf("%s: %v", op, err)
		}
		if s.Ops() != "" {
			t.Errorf("%s: secondary asked: %s", op, s.Ops())
		}
	}
	f, p, _ := newFallback(t)
	p.succeeding("")
	if got, _ := f.Fetch(context.Background(), shaA, "dest", FetchOptions{}); len(got.Warnings) != 0 {
		t.Errorf("warnings without a fallback: %q", got.Warnings)
	}
	if f.Source().Key() != testKey {
		t.Errorf("source %s", f.Source().Key())
	}
}

// TestFallbackBothFail: when the secondary fails too, an answer of its
// own (a ref git does not advertise after the API was rate limited) is
// the answer — the primary's failure must not hide it, nor let a cache
// above paper over it — and otherwise the error says both, the primary's
// still seen by errors.Is.
func TestFallbackBothFail(t *testing.T) {
	t.Parallel()
	for op, call := range fallbackOps {
		t.Run(op+"/secondary answers", func(t *testing.T) {
			t.Parallel()
			f, p, s := newFallback(t)
			p.failing(errNetwork)
			s.failing(errRefGone)
			if err := call(context.Background(), f); err != errRefGone {
				t.Fatalf("%v, want the secondary's answer %v", err, errRefGone)
			}
		})
		t.Run(op+"/both fail", func(t *testing.T) {
			t.Parallel()
			f, p, s := newFallback(t)
			p.failing(errNetwork)
			other := errors.New("archive host answered 502")
			s.failing(other)
			err := call(context.Background(), f)
			if !errors.Is(err, errNetwork) || !strings.Contains(err.Error(), "the archive also failed: "+other.Error()) {
				t.Fatalf("%v, want the primary's failure and the secondary's", err)
			}
		})
	}
}

// TestFallbackCancelled: once the caller has given up, no other transport
// is tried, whatever the primary's error says.
func TestFallbackCancelled(t *testing.T) {
	t.Parallel()
	for op, call := range fallbackOps {
		f, p, s := newFallback(t)
		p.failing(errNetwork) // a transport that did not notice
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := call(ctx, f); err != errNetwork {
			t.Errorf("%s: %v", op, err)
		}
		if s.Ops() != "" {
			t.Errorf("%s: secondary asked after cancellation", op)
		}
	}
}
