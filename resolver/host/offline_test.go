package host

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind"
)

// TestOffline: everything that reaches the offline Repo is a miss, coded
// install.offline_miss, wrapping ErrOffline and naming what is missing and
// of which repository; only a commit id needs no network to pin.
func TestOffline(t *testing.T) {
	t.Parallel()
	o := NewOffline(parseSource(t, testURL))
	ctx := context.Background()
	if o.Source().Key() != testKey {
		t.Fatalf("source %s", o.Source().Key())
	}
	if pin, err := o.Resolve(ctx, shaA, nil); err != nil || pin.SHA != shaA {
		t.Fatalf("a commit id offline: %+v, %v", pin, err)
	}
	for _, tc := range []struct {
		op   string
		call func() error
		what string
	}{
		{"refs", func() error { _, err := o.Refs(ctx); return err }, "the ref list"},
		{"resolve a branch", func() error { _, err := o.Resolve(ctx, "dev", &Pin{SHA: shaA}); return err }, "ref dev"},
		{"resolve the default branch", func() error { _, err := o.Resolve(ctx, "", nil); return err }, "the default branch"},
		{"reachable", func() error { return o.Reachable(ctx, shaA, "main") }, "the reachability of commit " + shaA},
		{"fetch", func() error { _, err := o.Fetch(ctx, shaA, t.TempDir()+"/dest", FetchOptions{}); return err }, "the content at commit " + shaA},
	} {
		err := tc.call()
		if !errors.Is(err, ErrOffline) || plugind.CodeOf(err) != plugind.CodeOfflineMiss {
			t.Errorf("%s: %v, want an offline miss", tc.op, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.what+" of "+testKey) {
			t.Errorf("%s: %q does not name %q of %s", tc.op, msg, tc.what, testKey)
		}
	}
}

// TestOfflineUnderCached: offline, the cache answers what it remembers —
// without the network warning, since nobody was asked — and whatever it
// does not remember is an offline miss; nothing offline says is
// remembered as an answer.
func TestOfflineUnderCached(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, clk := newMemMeta(), newClock()
	c := NewCached(NewOffline(parseSource(t, testURL)), db, CacheOptions{Now: clk.Now})
	e := &cachedEnv{db: db, clock: clk}
	e.remember("main", shaA, `"e1"`, 2*time.Hour)
	e.verdict(shaA, true, time.Hour)

	pin, err := c.Resolve(ctx, "main", nil)
	if err != nil || pin.SHA != shaA || pin.Unchecked != "" || !strings.HasPrefix(pin.Warning, "offline: ") || !strings.Contains(pin.Warning, "2h0m0s ago") {
		t.Fatalf("remembered ref offline: %+v, %v", pin, err)
	}
	if refs, err := c.Refs(ctx); err != nil || refs.Commits["main"] != shaA {
		t.Fatalf("remembered refs offline: %+v, %v", refs, err)
	}
	if err := c.Reachable(ctx, shaA, ""); err != nil {
		t.Fatalf("remembered verdict offline: %v", err)
	}
	for _, tc := range []struct {
		op   string
		call func() error
		says string
	}{
		{"a ref never resolved", func() error { _, err := c.Resolve(ctx, "dev", nil); return err }, "ref dev of " + testKey + " was never resolved"},
		{"a commit never checked", func() error { return c.Reachable(ctx, shaB, "") }, "whether commit " + shaB + " is on a branch or tag of " + testKey + " was never checked"},
		{"content never fetched", func() error { _, err := c.Fetch(ctx, shaA, "dest", FetchOptions{}); return err }, "the content at commit " + shaA},
	} {
		err := tc.call()
		if !errors.Is(err, ErrOffline) || plugind.CodeOf(err) != plugind.CodeOfflineMiss || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want an offline miss saying %q", tc.op, err, tc.says)
		}
	}
	if negs := db.Negatives(); len(negs) != 0 {
		t.Errorf("offline misses were remembered: %+v", negs)
	}
	if _, ok := db.Verdict(testKey, shaB); ok {
		t.Error("an offline miss was remembered as a verdict")
	}
}
