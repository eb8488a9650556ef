package host

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/tarball"
)

// opener opens scripted repositories and records what it was asked for.
type opener struct {
	mu     sync.Mutex
	opened []string
	repo   func(src source.Source) *fakeRepo
	err    error
}

func (o *opener) open(_ context.Context, src source.Source) (Repo, error) {
	o.mu.Lock()
	o.opened = append(o.opened, src.Key())
	o.mu.Unlock()
	if o.err != nil {
		return nil, o.err
	}
	return o.repo(src), nil
}

// TestSubmodules: a submodule comes from the URL .gitmodules gives
// (relative ones against the parent's), opened as any source is, fetched
// at the commit the parent pins with what is left of the parent's budget,
// hashed, as one fetch among others, its own submodules one level deeper.
func TestSubmodules(t *testing.T) {
	t.Parallel()
	parent := parseSource(t, testURL)
	budget := plugind.Budget{MaxBytes: 1000, MaxFiles: 7}
	for _, tc := range []struct {
		name, url string
		wantKey   string
		wantURL   string
	}{
		{"an absolute URL", "https://github.com/other/lib.git", "github.com/other/lib", "https://github.com/other/lib"},
		{"a URL relative to the parent", "../lib.git", "github.com/acme/lib", "https://github.com/acme/lib"},
		{"a URL on another host", "https://git.example.test/team/lib.git", "git.example.test/team/lib", "https://git.example.test/team/lib.git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var sub *fakeRepo
			o := &opener{repo: func(src source.Source) *fakeRepo {
				sub = &fakeRepo{t: t, src: src}
				sub.onFetch(&Fetched{Transport: "git",
					Tree:       []plugind.File{{Path: "lib.go", Size: 3, SHA256: "x"}},
					Dirs:       []string{"pkg"},
					Submodules: []plugind.Submodule{{Path: "pkg/deep"}},
				}, nil)
				return sub
			}}
			fetch := Submodules(o.open, parent, 1)
			dest := filepath.Join(t.TempDir(), "lib")
			got, err := fetch(context.Background(), tarball.Submodule{Path: "vendor/lib", URL: tc.url, Commit: shaB, Paths: []string{"pkg"}}, dest, budget)
			if err != nil {
				t.Fatal(err)
			}
			if len(o.opened) != 1 || o.opened[0] != tc.wantKey {
				t.Fatalf("opened %q, want %s", o.opened, tc.wantKey)
			}
			if got.URL != tc.wantURL || len(got.Files) != 1 || got.Files[0].Path != "lib.go" ||
				len(got.Dirs) != 1 || len(got.Submodules) != 1 || got.Submodules[0].Path != "pkg/deep" {
				t.Fatalf("tree %+v", got)
			}
			calls := sub.Calls()
			if len(calls) != 1 {
				t.Fatalf("fetches: %s", sub.Ops())
			}
			c := calls[0]
			if c.SHA != shaB || c.Dest != dest || c.Opts.Budget != budget || strings.Join(c.Opts.Paths, ",") != "pkg" ||
				!c.Opts.Hash || !c.Opts.Concurrent || c.Opts.Verify || c.Opts.Submodules == nil {
				t.Fatalf("fetched %+v", c)
			}
		})
	}
}

// TestSubmodulesUnhashed: a transport that did not hash as it wrote has
// its tree read once, within the budget.
func TestSubmodulesUnhashed(t *testing.T) {
	t.Parallel()
	parent := parseSource(t, testURL)
	files := map[string]string{"a.txt": "hello", "sub/b.txt": "world!"}
	o := &opener{repo: func(src source.Source) *fakeRepo {
		r := &fakeRepo{t: t, src: src, files: files}
		return r.onFetch(&Fetched{Transport: "archive"}, nil)
	}}
	sm := tarball.Submodule{Path: "lib", URL: "../lib.git", Commit: shaB}
	got, err := Submodules(o.open, parent, 1)(context.Background(), sm, filepath.Join(t.TempDir(), "lib"), plugind.DefaultBudget)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != 2 || got.Files[0].Path != "a.txt" || got.Files[0].Size != 5 || got.Files[1].Path != "sub/b.txt" || got.Files[1].SHA256 == "" {
		t.Fatalf("files %+v", got.Files)
	}
	_, err = Submodules(o.open, parent, 1)(context.Background(), sm, filepath.Join(t.TempDir(), "lib"), plugind.Budget{MaxBytes: 1 << 20, MaxFiles: 1})
	if plugind.CodeOf(err) != plugind.CodeBudgetExceeded || !strings.Contains(err.Error(), "from https://github.com/acme/lib") {
		t.Fatalf("a tree over the budget: %v", err)
	}
}

// TestSubmodulesRefused: what cannot be fetched says which submodule
// source it was, keeping the cause's code and sentinel; nothing is opened
// for a URL refused as a source or a submodule nested too deep.
func TestSubmodulesRefused(t *testing.T) {
	t.Parallel()
	parent := parseSource(t, testURL)
	for _, tc := range []struct {
		name    string
		url     string
		depth   int
		openErr error
		fetch   error
		want    error // errors.Is; nil: check the code only
		code    plugind.Code
		says    string
		opened  bool
	}{
		{name: "nested too deep", url: "../lib.git", depth: MaxSubmoduleDepth + 1,
			code: plugind.CodeBudgetExceeded, says: "of " + testKey + ": submodules nested more than 3 deep are not followed"},
		{name: "an ssh URL at an IP address", url: "ssh://git@127.0.0.1/acme/lib.git", depth: 1, code: plugind.CodeInvalidSource, says: "of " + testKey},
		{name: "a file URL", url: "file:///etc", depth: 1, code: plugind.CodeInvalidSource, says: "of " + testKey},
		{name: "a relative URL above the host", url: "../../../x.git", depth: 1, code: plugind.CodeInvalidSource, says: "climbs above the host"},
		{name: "a credential in the URL", url: "https://bot:s3cret@github.com/acme/lib.git", depth: 1, code: plugind.CodeInvalidSource},
		{name: "the opener refuses", url: "../lib.git", depth: 1, openErr: errBlocked, opened: true,
			want: errBlocked, code: plugind.CodeBlocked, says: "from https://github.com/acme/lib"},
		{name: "the commit is missing", url: "../lib.git", depth: MaxSubmoduleDepth, fetch: errCommitGone, opened: true,
			want: ErrCommitNotFound, code: plugind.CodeNotFound, says: "from https://github.com/acme/lib"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := &opener{err: tc.openErr, repo: func(src source.Source) *fakeRepo {
				return (&fakeRepo{t: t, src: src}).onFetch(nil, tc.fetch)
			}}
			sm := tarball.Submodule{Path: "lib", URL: tc.url, Commit: shaB}
			_, err := Submodules(o.open, parent, tc.depth)(context.Background(), sm, filepath.Join(t.TempDir(), "lib"), plugind.DefaultBudget)
			if err == nil || plugind.CodeOf(err) != tc.code || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("%v, want code %s wrapping %v", err, tc.code, tc.want)
			}
			if !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%q does not say %q (or shows a credential)", err, tc.says)
			}
			if (len(o.opened) > 0) != tc.opened {
				t.Errorf("opened %q", o.opened)
			}
		})
	}
}

// TestSubmodulesDepth: a submodule's own submodules are fetched one level
// deeper, and refused past MaxSubmoduleDepth.
func TestSubmodulesDepth(t *testing.T) {
	t.Parallel()
	parent := parseSource(t, testURL)
	var subs []*fakeRepo
	o := &opener{repo: func(src source.Source) *fakeRepo {
		r := (&fakeRepo{t: t, src: src}).onFetch(&Fetched{Transport: "git", Tree: []plugind.File{}}, nil)
		subs = append(subs, r)
		return r
	}}
	fetch := Submodules(o.open, parent, 1)
	ctx := context.Background()
	sm := tarball.Submodule{Path: "lib", URL: "../lib.git", Commit: shaB}
	for depth := 1; depth <= MaxSubmoduleDepth; depth++ {
		if _, err := fetch(ctx, sm, filepath.Join(t.TempDir(), "lib"), plugind.DefaultBudget); err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		fetch = subs[len(subs)-1].Calls()[0].Opts.Submodules
	}
	_, err := fetch(ctx, sm, filepath.Join(t.TempDir(), "lib"), plugind.DefaultBudget)
	if plugind.CodeOf(err) != plugind.CodeBudgetExceeded || len(o.opened) != MaxSubmoduleDepth {
		t.Fatalf("depth %d: %v (opened %d)", MaxSubmoduleDepth+1, err, len(o.opened))
	}
}

// TestWithSubmodules: a fetch through the layer follows submodules through
// its opener, relative URLs taken against the fetched repository; a
// caller's own Submodules are left alone; other operations pass through.
func TestWithSubmodules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sm := tarball.Submodule{Path: "vendor/lib", URL: "../lib.git", Commit: shaB}
	t.Run("followed through the opener", func(t *testing.T) {
		t.Parallel()
		inner := newFakeRepo(t, testURL).onFetch(&Fetched{Transport: "git"}, nil).onRefs(&Refs{Head: "main"}, nil)
		o := &opener{err: errors.New("no such repository")}
		r := WithSubmodules(inner, o.open)
		if refs, err := r.Refs(ctx); err != nil || refs.Head != "main" {
			t.Fatalf("refs: %+v %v", refs, err)
		}
		if _, err := r.Fetch(ctx, shaA, filepath.Join(t.TempDir(), "tree"), FetchOptions{}); err != nil {
			t.Fatal(err)
		}
		calls := inner.Calls()
		if len(calls) != 2 || calls[1].Opts.Submodules == nil {
			t.Fatalf("the fetch was not given a way to follow submodules: %s", inner.Ops())
		}
		_, err := calls[1].Opts.Submodules(ctx, sm, filepath.Join(t.TempDir(), "lib"), plugind.DefaultBudget)
		if err == nil || !strings.Contains(err.Error(), "no such repository") {
			t.Fatalf("submodule fetch: %v, want the opener's error", err)
		}
		if len(o.opened) != 1 || o.opened[0] != "github.com/acme/lib" {
			t.Fatalf("opened %q, want github.com/acme/lib (../lib.git against the fetched repository)", o.opened)
		}
	})
	t.Run("a caller's own left alone", func(t *testing.T) {
		t.Parallel()
		inner := newFakeRepo(t, testURL).onFetch(&Fetched{Transport: "git"}, nil)
		o := &opener{err: errors.New("must not be asked")}
		own := false
		r := WithSubmodules(inner, o.open)
		_, err := r.Fetch(ctx, shaA, filepath.Join(t.TempDir(), "tree"), FetchOptions{Submodules: func(context.Context, tarball.Submodule, string, plugind.Budget) (*tarball.SubmoduleTree, error) {
			own = true
			return &tarball.SubmoduleTree{}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := inner.Calls()[0].Opts.Submodules(ctx, sm, t.TempDir(), plugind.DefaultBudget); err != nil || !own || len(o.opened) != 0 {
			t.Fatalf("the caller's Submodules were replaced (own called %v, opened %q, %v)", own, o.opened, err)
		}
	})
}
