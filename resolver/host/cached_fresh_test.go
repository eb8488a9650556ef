package host

import (
	"context"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
)

// FreshFor answers a ref, or a listing, confirmed less than that long ago
// without asking the host; anything older is asked, conditionally.
func TestCachedFreshFor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		freshFor time.Duration
		age      time.Duration // of what is remembered
		asked    bool
	}{
		{name: "within FreshFor: not asked", freshFor: time.Minute, age: 30 * time.Second},
		{name: "older than FreshFor: asked", freshFor: time.Minute, age: 2 * time.Minute, asked: true},
		{name: "no FreshFor: always asked", age: time.Second, asked: true},
	} {
		for _, op := range []string{"resolve", "refs"} {
			t.Run(tc.name+": "+op, func(t *testing.T) {
				t.Parallel()
				e := newCachedEnv(t, CacheOptions{FreshFor: tc.freshFor})
				e.remember("main", shaA, `"e1"`, tc.age)
				var err error
				var sha string
				switch op {
				case "resolve":
					if tc.asked {
						e.host.onResolve(Pin{SHA: shaA, ETag: `"e1"`, NotModified: true}, nil)
					}
					var pin Pin
					pin, err = e.c.Resolve(ctx, "main", nil)
					sha = pin.SHA
				case "refs":
					if tc.asked {
						e.host.onRefs(&Refs{Head: "main", Commits: map[string]string{"main": shaA}}, nil)
					}
					var refs *Refs
					if refs, err = e.c.Refs(ctx); err == nil {
						sha = refs.Commits["main"]
					}
				}
				if err != nil || sha != shaA {
					t.Fatalf("%s: %s %v", op, sha, err)
				}
				if got, want := e.host.Ops(), map[bool]string{true: op}[tc.asked]; got != want {
					t.Fatalf("the host was asked %q, want %q", got, want)
				}
			})
		}
	}
}

// RememberedBy names who remembers a negative answer, in place of the
// --refresh hint, for a remembered not-found and a remembered refusal.
func TestCachedRememberedBy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name, by, want, notWant string
	}{
		{name: "default", want: "--refresh asks again"},
		{name: "the mirror", by: "the mirror", want: "the mirror remembers this from 1m0s ago", notWant: "--refresh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newCachedEnv(t, CacheOptions{RememberedBy: tc.by})
			now := e.clock.Now()
			if err := e.db.PutNegative(ctx, cache.Negative{Kind: "ref", Remote: testKey, SHA: "gone", Code: string(plugind.CodeNotFound),
				Message: "ref gone not found", Created: now.Add(-time.Minute), Expires: now.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			_, err := e.c.Resolve(ctx, "gone", nil)
			checkErr(t, err, ErrRefNotFound, plugind.CodeNotFound)
			if msg := err.Error(); !strings.Contains(msg, tc.want) || tc.notWant != "" && strings.Contains(msg, tc.notWant) {
				t.Fatalf("%q, want it to say %q", msg, tc.want)
			}
			e.verdict(shaB, false, time.Minute)
			err = e.c.Reachable(ctx, shaB, "")
			checkErr(t, err, ErrUnreachable, plugind.CodeNotFound)
			if tc.by != "" && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%q, want it to say %q", err, tc.want)
			}
		})
	}
}
