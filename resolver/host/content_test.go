package host

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/tarball"
)

// TestCachedContentVerdicts: a tree refused as unsafe or over budget is
// remembered by (commit, folders, budget), so a re-plan does not download
// it again to hear the same verdict; a refusal that names an entry in one
// of several folders is remembered for that folder alone too, and comes
// back as the tarball.EntryError a fresh refusal of it would be.
func TestCachedContentVerdicts(t *testing.T) {
	t.Parallel()
	small := plugind.Budget{MaxBytes: 1 << 20, MaxFiles: 10}
	large := plugind.Budget{MaxBytes: 1 << 30, MaxFiles: 10_000}
	inA := &tarball.EntryError{Path: "a/bin/evil", Err: errUnsafe}
	type fetch struct {
		paths  []string
		budget plugind.Budget
	}
	for _, tc := range []struct {
		name  string
		opts  CacheOptions
		first fetch
		host  error // the first fetch's refusal
		wait  time.Duration
		again fetch
		// wantAsked: the second fetch reached the host; otherwise it is
		// refused with the first's code, as an EntryError at wantEntry
		// when that is set.
		wantAsked bool
		wantEntry string
	}{{
		name: "an unsafe tree", host: errUnsafe,
		first: fetch{nil, small}, again: fetch{nil, small},
	}, {
		name: "a tree over budget, with the same budget", host: errBudget,
		first: fetch{nil, small}, again: fetch{nil, small},
	}, {
		name: "a tree over budget, with a larger one", host: errBudget,
		first: fetch{nil, small}, again: fetch{nil, large}, wantAsked: true,
	}, {
		name: "the same folders in another order", host: errUnsafe,
		first: fetch{[]string{"b", "a"}, small}, again: fetch{[]string{"a", "b"}, small},
	}, {
		name: "\"\" and \".\" are the whole tree", host: errUnsafe,
		first: fetch{[]string{"."}, small}, again: fetch{[]string{""}, small},
	}, {
		name: "other folders are asked for", host: errUnsafe,
		first: fetch{[]string{"a"}, small}, again: fetch{[]string{"b"}, small}, wantAsked: true,
	}, {
		name: "a refused entry's folder alone", host: inA,
		first: fetch{[]string{"a", "b"}, small}, again: fetch{[]string{"a"}, small},
	}, {
		name: "a refused entry's folder among others, as an entry error", host: inA,
		first: fetch{[]string{"a", "b"}, small}, again: fetch{[]string{"c", "a"}, small}, wantEntry: "a",
	}, {
		name: "the other folders of a refused entry's fetch", host: inA,
		first: fetch{[]string{"a", "b"}, small}, again: fetch{[]string{"b"}, small}, wantAsked: true,
	}, {
		name: "a folder whose name only starts like the refused entry's", host: &tarball.EntryError{Path: "ab/x", Err: errUnsafe},
		first: fetch{[]string{"a", "ab"}, small}, again: fetch{[]string{"a"}, small}, wantAsked: true,
	}, {
		name: "a failed download is no verdict", host: errNetwork,
		first: fetch{nil, small}, again: fetch{nil, small}, wantAsked: true,
	}, {
		name: "a missing commit is a negative of its own, not a content verdict", host: errCommitGone,
		first: fetch{[]string{"a"}, small}, again: fetch{[]string{"a"}, small},
	}, {
		name: "--refresh downloads again", host: errUnsafe, opts: CacheOptions{Refresh: true},
		first: fetch{nil, small}, again: fetch{nil, small}, wantAsked: true,
	}, {
		name: "after the TTL it downloads again", host: errUnsafe, wait: DefaultNegativeTTL,
		first: fetch{nil, small}, again: fetch{nil, small}, wantAsked: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newCachedEnv(t, tc.opts)
			e.host.onFetch(nil, tc.host).onFetch(&Fetched{Transport: "git"}, nil)
			ctx := context.Background()
			_, first := e.c.Fetch(ctx, shaA, "dest", FetchOptions{Paths: tc.first.paths, Budget: tc.first.budget})
			if !errors.Is(first, tc.host) {
				t.Fatalf("first fetch: %v, want the host's %v", first, tc.host)
			}
			e.clock.Advance(tc.wait)
			_, second := e.c.Fetch(ctx, shaA, "dest", FetchOptions{Paths: tc.again.paths, Budget: tc.again.budget})
			if asked := len(e.host.Calls()) == 2; asked != tc.wantAsked {
				t.Fatalf("second fetch reached the host: %v, want %v (%v)", asked, tc.wantAsked, second)
			}
			if tc.wantAsked {
				if second != nil {
					t.Fatalf("second fetch: %v", second)
				}
				return
			}
			if second == nil || plugind.CodeOf(second) != plugind.CodeOf(tc.host) {
				t.Fatalf("second fetch: %v, want code %s", second, plugind.CodeOf(tc.host))
			}
			if !strings.Contains(second.Error(), "remembered from") {
				t.Errorf("%q does not say it is remembered", second)
			}
			path, isEntry := tarball.PathOf(second)
			if isEntry != (tc.wantEntry != "") || path != tc.wantEntry {
				t.Errorf("refusal at %q (%v), want %q", path, isEntry, tc.wantEntry)
			}
		})
	}
}
