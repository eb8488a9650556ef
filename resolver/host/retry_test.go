package host

import (
	"context"
	"errors"
	"testing"
	"time"
)

// newRetry wraps a scripted host with a fast backoff (1ms, doubled).
func newRetry(t *testing.T, attempts int) (*Retry, *fakeRepo) {
	t.Helper()
	f := newFakeRepo(t, testURL)
	r := NewRetry(f, nil)
	r.Attempts, r.Wait = attempts, time.Millisecond
	return r, f
}

// TestRetryTransient: a transient failure is repeated up to Attempts
// times, the last error returned as is; a success ends the repeats.
func TestRetryTransient(t *testing.T) {
	t.Parallel()
	for name, failure := range transientErrors() {
		for op, call := range fallbackOps {
			t.Run(name+"/"+op, func(t *testing.T) {
				t.Parallel()
				r, f := newRetry(t, 3)
				f.failing(failure)
				if err := call(context.Background(), r); err != failure {
					t.Fatalf("%v, want the last failure as is: %v", err, failure)
				}
				if got := len(f.Calls()); got != 3 {
					t.Fatalf("%d attempts, want 3 (%s)", got, f.Ops())
				}
			})
		}
	}
}

// TestRetrySucceedsLater: the answer of the attempt that succeeded is the
// answer, with the caller's arguments passed on every attempt.
func TestRetrySucceedsLater(t *testing.T) {
	t.Parallel()
	r, f := newRetry(t, 4)
	f.onRefs(nil, errNetwork).onRefs(&Refs{Head: "main", Commits: map[string]string{"main": shaA}}, nil)
	f.onResolve(Pin{}, errNetwork).onResolve(Pin{}, errNetwork).onResolve(Pin{SHA: shaB, ETag: "e"}, nil)
	f.onReachable(errNetwork).onReachable(nil)
	f.onFetch(nil, errNetwork).onFetch(&Fetched{Transport: "git", Files: 3}, nil)
	ctx := context.Background()
	if refs, err := r.Refs(ctx); err != nil || refs.Head != "main" {
		t.Fatalf("refs: %+v, %v", refs, err)
	}
	known := &Pin{SHA: shaA}
	if pin, err := r.Resolve(ctx, "v1", known); err != nil || pin.SHA != shaB || pin.ETag != "e" {
		t.Fatalf("resolve: %+v, %v", pin, err)
	}
	if err := r.Reachable(ctx, shaA, "v1"); err != nil {
		t.Fatalf("reachable: %v", err)
	}
	got, err := r.Fetch(ctx, shaA, "dest", FetchOptions{Paths: []string{"p"}, Verify: true})
	if err != nil || got.Files != 3 {
		t.Fatalf("fetch: %+v, %v", got, err)
	}
	if ops := f.Ops(); ops != "refs refs resolve resolve resolve reachable reachable fetch fetch" {
		t.Fatalf("host saw %q", ops)
	}
	for _, c := range f.Calls() {
		switch c.Op {
		case "resolve":
			if c.Ref != "v1" || c.Known == nil || c.Known.SHA != shaA {
				t.Errorf("resolve asked %+v", c)
			}
		case "reachable":
			if c.SHA != shaA || c.Hint != "v1" {
				t.Errorf("reachable asked %+v", c)
			}
		case "fetch":
			if c.SHA != shaA || c.Dest != "dest" || !c.Opts.Verify || len(c.Opts.Paths) != 1 {
				t.Errorf("fetch asked %+v", c)
			}
		}
	}
	if r.Source().Key() != testKey {
		t.Errorf("source %s", r.Source().Key())
	}
}

// TestRetryFinal: an answer is not asked again.
func TestRetryFinal(t *testing.T) {
	t.Parallel()
	for name, final := range finalErrors() {
		for op, call := range fallbackOps {
			t.Run(name+"/"+op, func(t *testing.T) {
				t.Parallel()
				r, f := newRetry(t, 3)
				f.failing(final)
				if err := call(context.Background(), r); err != final {
					t.Fatalf("%v, want %v as is", err, final)
				}
				if got := len(f.Calls()); got != 1 {
					t.Fatalf("%d attempts, want 1", got)
				}
			})
		}
	}
}

// TestRetryBackoff: each retry is announced to the context's Watcher with
// its number, the number of attempts and the wait before it, which
// doubles; the last failure announces nothing.
func TestRetryBackoff(t *testing.T) {
	t.Parallel()
	r, f := newRetry(t, 4)
	r.Wait = 2 * time.Millisecond
	f.failing(errNetwork)
	rec := &recorder{}
	start := time.Now()
	if _, err := r.Refs(WithWatcher(context.Background(), rec)); err != errNetwork {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 14*time.Millisecond {
		t.Errorf("4 attempts took %s, less than the 2+4+8ms of backoff", took)
	}
	want := []string{testKey + " 2 4 2ms", testKey + " 3 4 4ms", testKey + " 4 4 8ms"}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.retries) != len(want) {
		t.Fatalf("announced %q, want %q", rec.retries, want)
	}
	for i := range want {
		if rec.retries[i] != want[i] {
			t.Errorf("retry %d announced %q, want %q", i+2, rec.retries[i], want[i])
		}
	}
}

// cancelOnRetry is a Watcher that cancels the operation when its first
// retry is announced: the caller gives up during the backoff.
type cancelOnRetry struct {
	recorder
	cancel context.CancelFunc
}

func (c *cancelOnRetry) Retrying(what string, attempt, of int, wait time.Duration, why error) {
	c.recorder.Retrying(what, attempt, of, wait, why)
	c.cancel()
}

// TestRetryCancelled: a caller that gives up during the backoff is not
// kept waiting for it, and hears its own cancellation; one that gave up
// before gets no second attempt.
func TestRetryCancelled(t *testing.T) {
	t.Parallel()
	r, f := newRetry(t, 5)
	r.Wait = time.Hour
	f.failing(errNetwork)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelOnRetry{cancel: cancel}
	start := time.Now()
	err := r.Reachable(WithWatcher(ctx, w), shaA, "")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want the cancellation", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("waited %s for a cancelled backoff", took)
	}
	if got := len(f.Calls()); got != 1 {
		t.Fatalf("%d attempts, want 1", got)
	}

	r, f = newRetry(t, 5)
	f.failing(errNetwork)
	done, stop := context.WithCancel(context.Background())
	stop()
	if err := r.Reachable(done, shaA, ""); err != errNetwork {
		t.Fatalf("%v", err)
	}
	if got := len(f.Calls()); got != 1 {
		t.Fatalf("%d attempts after cancellation, want 1", got)
	}
}

// TestNewRetryDefaults: three attempts, 200ms first backoff, a silent log.
func TestNewRetryDefaults(t *testing.T) {
	t.Parallel()
	r := NewRetry(newFakeRepo(t, testURL), nil)
	if r.Attempts != 3 || r.Wait != 200*time.Millisecond || r.Log == nil {
		t.Fatalf("%+v", r)
	}
}
