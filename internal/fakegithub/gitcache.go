package fakegithub

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// WithGitCache keeps every successful answer that git computes — a ref
// advertisement, a pack, a compare — and gives it again to the same
// request, as GitHub's caches do: a bench's "answered at once" then holds
// for them as for archives. Each ran git on the server: a marketplace's
// advertisement and pack took about 30 ms of a cold install, and each
// compare that proves a pin reachable 100 to 180 ms under load.
// The answer is kept under the request's every byte and the repository's
// refs as they read (refFiles), so only serve repositories whose objects
// do not change without their refs (no CommitUnreachable after a fetch):
// benches, not the tests.
func WithGitCache() Option { return func(o *options) { o.gitCache = true } }

// gitCache is WithGitCache's store of answers.
type gitCache struct {
	mu      sync.Mutex
	answers map[string]*httptest.ResponseRecorder
}

// serve answers r from the cache, or through backend, keeping what
// backend answers with 200 if no ref moved meanwhile (as refs keeps its
// listing). A nil cache (no WithGitCache) always asks backend.
func (c *gitCache) serve(w http.ResponseWriter, r *http.Request, repo *Repo, key string, backend func(http.ResponseWriter)) {
	refs, ok := "", false
	if c != nil {
		refs, ok = refFiles(repo.gitDir)
	}
	if !ok {
		backend(w)
		return
	}
	key = strings.Join([]string{repo.gitDir, refs, r.URL.RawQuery, r.Header.Get("Git-Protocol"), key}, "\x00")
	c.mu.Lock()
	got := c.answers[key]
	c.mu.Unlock()
	if got == nil {
		got = httptest.NewRecorder()
		backend(got)
		if after, same := refFiles(repo.gitDir); same && after == refs && got.Code == http.StatusOK {
			c.mu.Lock()
			c.answers[key] = got
			c.mu.Unlock()
		}
	}
	for k, v := range got.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(got.Code)
	_, _ = w.Write(got.Body.Bytes())
}
