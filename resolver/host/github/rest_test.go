package github_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
)

// TestRESTResolve: a ref is pinned by commits/{ref} with the sha media
// type, conditionally on the last answer, so an unchanged ref costs a 304.
func TestRESTResolve(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		ref       string
		known     *host.Pin
		route     string
		answer    http.HandlerFunc
		wantSHA   string
		wantNotMd bool
		wantIfNM  string
	}{{
		name: "a branch", ref: "main", route: "GET /repos/acme/tools/commits/main",
		answer: sha(shaA), wantSHA: shaA,
	}, {
		name: "the default branch is asked as HEAD", ref: "", route: "GET /repos/acme/tools/commits/HEAD",
		answer: sha(shaB + "\n"), wantSHA: shaB,
	}, {
		name: "a ref with a slash", ref: "release/v2", route: "GET /repos/acme/tools/commits/release/v2",
		answer: sha(shaA), wantSHA: shaA,
	}, {
		name: "an unchanged ref costs a 304", ref: "main", known: &host.Pin{SHA: shaA, ETag: `"` + shaA + `"`},
		route: "GET /repos/acme/tools/commits/main", wantIfNM: `"` + shaA + `"`,
		answer: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotModified) }, wantSHA: shaA, wantNotMd: true,
	}, {
		name: "a moved ref answers its new commit", ref: "main", known: &host.Pin{SHA: shaA},
		route: "GET /repos/acme/tools/commits/main", wantIfNM: `"` + shaA + `"`,
		answer: sha(shaC), wantSHA: shaC,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newAPIServer(t)
			s.on(tc.route, tc.answer)
			pin, err := openREST(t, s, "").Resolve(context.Background(), tc.ref, tc.known)
			if err != nil {
				t.Fatal(err)
			}
			if pin.SHA != tc.wantSHA || pin.NotModified != tc.wantNotMd || pin.At.IsZero() {
				t.Fatalf("pin %+v, want %s (not modified: %v)", pin, tc.wantSHA, tc.wantNotMd)
			}
			if !tc.wantNotMd && pin.ETag != `"`+tc.wantSHA+`"` {
				t.Errorf("ETag %q", pin.ETag)
			}
			reqs := s.received()
			if len(reqs) != 1 {
				t.Fatalf("requests %q, want one", s.requests())
			}
			if got := reqs[0].Header.Get("If-None-Match"); got != tc.wantIfNM {
				t.Errorf("If-None-Match %q, want %q", got, tc.wantIfNM)
			}
			if got := reqs[0].Header.Get("Accept"); got != "application/vnd.github.v3.sha" {
				t.Errorf("Accept %q", got)
			}
			if got := reqs[0].Header.Get("Authorization"); got != "" {
				t.Errorf("Authorization %q sent without a token", got)
			}
		})
	}
	t.Run("a commit id asks nothing", func(t *testing.T) {
		t.Parallel()
		s := newAPIServer(t)
		if pin, err := openREST(t, s, "").Resolve(context.Background(), shaA, nil); err != nil || pin.SHA != shaA || len(s.requests()) != 0 {
			t.Fatalf("%+v, %v, requests %q", pin, err, s.requests())
		}
	})
}

func sha(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "application/vnd.github.v3.sha" {
			writeJSON(w, http.StatusOK, map[string]string{"sha": strings.TrimSpace(body)})
			return
		}
		fmt.Fprint(w, body)
	}
}

// TestRESTErrors: how each answer of the API is reported — a missing
// repository from a missing ref (one more request, on the error path
// only), refused credentials, a spent rate limit with its fix — through
// every operation, and never with the token in it.
func TestRESTErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		answer   http.HandlerFunc
		repo     bool // the repository exists
		want     error
		code     plugind.Code
		says     string
		notFound bool // want is per operation: see wantFor
	}{{
		name: "404: the ref, when the repository exists", answer: status(http.StatusNotFound), repo: true,
		code: plugind.CodeNotFound, notFound: true,
	}, {
		name: "422: the ref, when the repository exists", answer: status(http.StatusUnprocessableEntity), repo: true,
		code: plugind.CodeNotFound, notFound: true,
	}, {
		name: "404: the repository, when it does not", answer: status(http.StatusNotFound),
		want: host.ErrRepoNotFound, code: plugind.CodeNotFound, says: "github.com/acme/tools: repository not found",
	}, {
		name: "401: the credentials", answer: status(http.StatusUnauthorized), repo: true,
		code: plugind.CodeSourceUnreadable, says: "GitHub refused the credentials (HTTP 401); check GITHUB_TOKEN",
	}, {
		name: "403 with the rate limit spent", answer: rateLimited(), repo: true,
		code: plugind.CodeSourceUnreadable, says: "the GitHub API rate limit is spent until",
	}, {
		name: "429", answer: status(http.StatusTooManyRequests, "Retry-After", "3600"), repo: true,
		code: plugind.CodeSourceUnreadable, says: "rate limiting (HTTP 429) and asked to retry after 1h0m0s",
	}, {
		name: "403 for another reason", answer: status(http.StatusForbidden), repo: true,
		code: plugind.CodeSourceUnreadable, says: "403 Forbidden",
	}, {
		name: "5xx, after the retries", answer: status(http.StatusBadGateway), repo: true,
		code: plugind.CodeSourceUnreadable, says: "giving up after 2 attempts",
	}} {
		for _, op := range restOps {
			t.Run(tc.name+"/"+op.name, func(t *testing.T) {
				t.Parallel()
				s := newAPIServer(t)
				if tc.repo {
					s.repoExists()
				}
				for _, route := range op.routes {
					s.on(route, tc.answer)
				}
				err := op.call(context.Background(), openREST(t, s, token))
				want := tc.want
				if tc.notFound {
					want = op.notFound
				}
				if err == nil || plugind.CodeOf(err) != tc.code || (want != nil && !errors.Is(err, want)) {
					t.Fatalf("%v, want code %s wrapping %v", err, tc.code, want)
				}
				if !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "github.com/acme/tools") {
					t.Errorf("%q does not say %q of github.com/acme/tools", err, tc.says)
				}
				if want == nil && host.IsNotFound(err) {
					t.Errorf("%v is a not-found", err)
				}
				noToken(t, err)
				for _, r := range s.received() {
					if r.Header.Get("Authorization") != "Bearer "+token {
						t.Errorf("%s %s sent Authorization %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
					}
				}
			})
		}
	}
}

// restOps are the operations TestRESTErrors fails, each with the routes
// it asks first and what a 404 there means when the repository exists.
var restOps = []struct {
	name     string
	routes   []string
	notFound error
	call     func(ctx context.Context, r host.Repo) error
}{{
	name: "resolve", routes: []string{"GET /repos/acme/tools/commits/main"}, notFound: host.ErrRefNotFound,
	call: func(ctx context.Context, r host.Repo) error { _, err := r.Resolve(ctx, "main", nil); return err },
}, {
	name: "reachable", routes: []string{"GET /repos/acme/tools/compare/HEAD..." + shaA}, notFound: host.ErrCommitNotFound,
	call: func(ctx context.Context, r host.Repo) error { return r.Reachable(ctx, shaA, "") },
}, {
	name: "fetch", routes: []string{"GET /repos/acme/tools/tarball/" + shaA}, notFound: host.ErrCommitNotFound,
	call: func(ctx context.Context, r host.Repo) error {
		_, err := r.Fetch(ctx, shaA, "/nonexistent/dest", host.FetchOptions{})
		return err
	},
}}

// TestRESTRateLimitRemembered: once GitHub said the budget is spent, the
// client does not ask again until it resets (go-github answers in its
// place); that answer reads as the first one did, with the fix.
func TestRESTRateLimitRemembered(t *testing.T) {
	t.Parallel()
	s := newAPIServer(t)
	s.repoExists()
	s.on("GET /repos/acme/tools/commits/main", rateLimited())
	s.on("GET /repos/acme/tools/commits/dev", sha(shaA))
	r := openREST(t, s, "")
	ctx := context.Background()
	for _, ref := range []string{"main", "dev"} {
		_, err := r.Resolve(ctx, ref, nil)
		if err == nil || !strings.Contains(err.Error(), "the GitHub API rate limit is spent until") || !strings.Contains(err.Error(), "GITHUB_TOKEN") {
			t.Errorf("resolve %s: %v", ref, err)
		}
	}
	if n := s.asked("GET /repos/acme/tools/commits/dev"); n != 0 {
		t.Errorf("asked again %d times within the rate limit window", n)
	}
}

// TestRESTRefs: branches and tags, every page of them, and the default
// branch as HEAD.
func TestRESTRefs(t *testing.T) {
	t.Parallel()
	s := newAPIServer(t)
	s.repoExists()
	page := func(first, second []map[string]any) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("per_page") != "100" {
				t.Errorf("%s asked per_page=%q", r.URL.Path, r.URL.Query().Get("per_page"))
			}
			if r.URL.Query().Get("page") == "2" {
				writeJSON(w, http.StatusOK, second)
				return
			}
			w.Header().Set("Link", fmt.Sprintf(`<%s%s?per_page=100&page=2>; rel="next", <%s%s?per_page=100&page=2>; rel="last"`, s.URL, r.URL.Path, s.URL, r.URL.Path))
			writeJSON(w, http.StatusOK, first)
		}
	}
	ref := func(name, sha string) map[string]any {
		return map[string]any{"name": name, "commit": map[string]string{"sha": sha}}
	}
	s.on("GET /repos/acme/tools/branches", page([]map[string]any{ref("main", shaA)}, []map[string]any{ref("dev", shaB)}))
	s.on("GET /repos/acme/tools/tags", page([]map[string]any{ref("v1", shaB)}, []map[string]any{ref("v2", shaC)}))
	refs, err := openREST(t, s, "").Refs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"main": shaA, "dev": shaB, "v1": shaB, "v2": shaC, host.HeadRef: shaA}
	if refs.Head != "main" || fmt.Sprint(refs.Commits) != fmt.Sprint(want) {
		t.Fatalf("refs %+v, want head main and %v", refs, want)
	}
	if n := len(s.requests()); n != 5 {
		t.Errorf("%d requests (%q), want 5", n, s.requests())
	}
}

// TestRESTRefsMissingRepository: a repository that does not exist is
// said so.
func TestRESTRefsMissingRepository(t *testing.T) {
	t.Parallel()
	s := newAPIServer(t)
	_, err := openREST(t, s, "").Refs(context.Background())
	if !errors.Is(err, host.ErrRepoNotFound) || plugind.CodeOf(err) != plugind.CodeNotFound {
		t.Fatalf("%v", err)
	}
}
