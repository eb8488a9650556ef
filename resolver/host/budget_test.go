package host

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// budgetServer answers GET /api/… as GitHub does with a budget of left
// requests, on its own clock; /dl/… is a download host it does not count.
type budgetServer struct {
	*httptest.Server
	mu      sync.Mutex
	left    int
	reset   time.Time
	status  int  // answer when spent (403 or 429)
	silent  bool // send no rate-limit headers
	hits    atomic.Int64
	inside  atomic.Int64 // requests being answered now
	maxIn   atomic.Int64
	release chan struct{} // when set, answers wait for it
}

func newBudgetServer(t *testing.T, left int, reset time.Time) *budgetServer {
	s := &budgetServer{left: left, reset: reset, status: http.StatusForbidden}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/dl/") {
			io.WriteString(w, "bytes")
			return
		}
		s.hits.Add(1)
		n := s.inside.Add(1)
		defer s.inside.Add(-1)
		for {
			m := s.maxIn.Load()
			if n <= m || s.maxIn.CompareAndSwap(m, n) {
				break
			}
		}
		if s.release != nil {
			<-s.release
		}
		s.mu.Lock()
		spent := s.left <= 0
		if !spent {
			s.left--
		}
		left, reset, silent, status := s.left, s.reset, s.silent, s.status
		s.mu.Unlock()
		if !silent {
			w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(max(left, 0)))
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
		}
		if spent && !silent {
			w.WriteHeader(status)
			io.WriteString(w, `{"message":"API rate limit exceeded"}`)
			return
		}
		io.WriteString(w, "{}")
	}))
	t.Cleanup(s.Close)
	return s
}

// fakeClock is a settable time for the budget.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func budgetClient(s *budgetServer, c *fakeClock) (*APIBudget, *RESTClient) {
	b := NewAPIBudget(BudgetConfig{Name: "the GitHub API", BaseURL: s.URL + "/api", Now: c.now})
	rc := NewRetryingClient(b.RoundTripper(http.DefaultTransport), NetConfig{Retries: 3})
	rc.RetryWaitMin, rc.RetryWaitMax = time.Millisecond, time.Millisecond
	return b, rc
}

func getVia(ctx context.Context, rc *RESTClient, url string) (int, error) {
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := rc.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// The answer that leaves nothing spends the budget: no further request is
// sent until the reset, downloads elsewhere still go, and after the reset
// the API is asked again.
func TestBudgetStopsWhenNothingIsLeft(t *testing.T) {
	t.Parallel()
	c := &fakeClock{t: time.Now()}
	reset := c.now().Add(30 * time.Minute).Truncate(time.Second)
	s := newBudgetServer(t, 3, reset)
	b, rc := budgetClient(s, c)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if code, err := getVia(ctx, rc, s.URL+"/api/repos/a/b"); err != nil || code != 200 {
			t.Fatalf("request %d: %d %v", i, code, err)
		}
	}
	if err := b.Spent(ctx); err != nil {
		t.Fatalf("spent before anything was refused: %v", err)
	}
	_, err := getVia(ctx, rc, s.URL+"/api/repos/a/b")
	if !IsRateLimited(err) || s.hits.Load() != 3 {
		t.Fatalf("the fourth request: %v, %d sent", err, s.hits.Load())
	}
	e := b.Err()
	if e == nil || !e.Until.Equal(reset) || !strings.Contains(e.Error(), "GITHUB_TOKEN") || !strings.Contains(e.Error(), reset.UTC().Format("15:04:05")) {
		t.Fatalf("refusal: %v", e)
	}
	if code, err := getVia(ctx, rc, s.URL+"/dl/archive.tar.gz"); err != nil || code != 200 {
		t.Fatalf("a download beside the API: %d %v", code, err)
	}
	c.advance(31 * time.Minute)
	s.mu.Lock()
	s.left, s.reset = 3, reset.Add(time.Hour)
	s.mu.Unlock()
	if code, err := getVia(ctx, rc, s.URL+"/api/repos/a/b"); err != nil || code != 200 || s.hits.Load() != 4 {
		t.Fatalf("after the reset: %d %v (%d sent)", code, err, s.hits.Load())
	}
}

// A budget spent before the process started (by an earlier run) costs one
// refused request, whatever the concurrency, and a 429 is not retried.
func TestBudgetSpentAlready(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusForbidden, http.StatusTooManyRequests} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			t.Parallel()
			c := &fakeClock{t: time.Now()}
			s := newBudgetServer(t, 0, c.now().Add(20*time.Minute))
			s.status = status
			s.release = make(chan struct{})
			b, rc := budgetClient(s, c)
			var wg sync.WaitGroup
			results := make(chan any, 8)
			for i := 0; i < 8; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					code, err := getVia(context.Background(), rc, s.URL+"/api/repos/a/b/commits/main")
					if err != nil {
						results <- err
					} else {
						results <- code
					}
				}()
			}
			waitFor(t, func() bool { return s.inside.Load() == 1 })
			time.Sleep(20 * time.Millisecond) // the others would be in by now
			close(s.release)
			wg.Wait()
			close(results)
			limited, answered := 0, 0
			for r := range results {
				switch v := r.(type) {
				case error:
					if !IsRateLimited(v) {
						t.Errorf("error %v", v)
					}
					limited++
				case int:
					if v != status {
						t.Errorf("status %d", v)
					}
					answered++
				}
			}
			if s.hits.Load() != 1 || s.maxIn.Load() != 1 || answered != 1 || limited != 7 {
				t.Fatalf("sent %d (at most %d at once), %d answered, %d refused unsent; want 1, 1, 1, 7", s.hits.Load(), s.maxIn.Load(), answered, limited)
			}
			if b.Err() == nil {
				t.Fatal("the budget is not marked spent")
			}
		})
	}
}

// Requests out at once never exceed what the last answer said is left.
func TestBudgetCountsRequestsInFlight(t *testing.T) {
	t.Parallel()
	c := &fakeClock{t: time.Now()}
	s := newBudgetServer(t, 5, c.now().Add(time.Hour))
	_, rc := budgetClient(s, c)
	if code, err := getVia(context.Background(), rc, s.URL+"/api/repos/a/b"); err != nil || code != 200 {
		t.Fatalf("probe: %d %v", code, err) // 4 left
	}
	var wg sync.WaitGroup
	var refused atomic.Int64
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := getVia(context.Background(), rc, s.URL+"/api/repos/a/b"); IsRateLimited(err) {
				refused.Add(1)
			}
		}()
	}
	wg.Wait()
	s.mu.Lock()
	left := s.left
	s.mu.Unlock()
	if s.hits.Load() != 5 || left != 0 || refused.Load() != 6 {
		t.Fatalf("sent %d, %d left, %d refused; want 5, 0, 6 (never a request over the budget)", s.hits.Load(), left, refused.Load())
	}
}

// An API without rate-limit headers is never limited nor serialized; a
// refusal without a usable reset pauses a minute; a reset far away is
// believed for an hour at most.
func TestBudgetEdges(t *testing.T) {
	t.Parallel()
	t.Run("no headers", func(t *testing.T) {
		t.Parallel()
		c := &fakeClock{t: time.Now()}
		s := newBudgetServer(t, 1, c.now())
		s.silent = true
		b, rc := budgetClient(s, c)
		for i := 0; i < 5; i++ {
			if code, err := getVia(context.Background(), rc, s.URL+"/api/x"); err != nil || code != 200 {
				t.Fatalf("%d: %d %v", i, code, err)
			}
		}
		if b.Err() != nil {
			t.Fatal(b.Err())
		}
	})
	for name, tc := range map[string]struct {
		reset time.Duration
		want  time.Duration
	}{
		"reset passed": {-time.Minute, minBudgetPause},
		"reset far":    {5 * time.Hour, maxBudgetPause},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := &fakeClock{t: time.Now().Truncate(time.Second)}
			s := newBudgetServer(t, 0, c.now().Add(tc.reset))
			b, rc := budgetClient(s, c)
			if code, err := getVia(context.Background(), rc, s.URL+"/api/x"); err != nil || code != 403 {
				t.Fatalf("%d %v", code, err)
			}
			if e := b.Err(); e == nil || !e.Until.Equal(c.now().Add(tc.want)) {
				t.Fatalf("refused until %v, want %v", e, c.now().Add(tc.want))
			}
		})
	}
}

// A plan's watch hears of every refusal under it, once per API; a watch
// inside another reports nothing (the outer one does).
func TestWatchBudgets(t *testing.T) {
	t.Parallel()
	c := &fakeClock{t: time.Now()}
	s := newBudgetServer(t, 0, c.now().Add(10*time.Minute))
	b, rc := budgetClient(s, c)
	ctx, warnings := WatchBudgets(context.Background())
	inner, innerWarnings := WatchBudgets(ctx)
	if ws := warnings(); len(ws) != 0 {
		t.Fatalf("before anything: %q", ws)
	}
	getVia(inner, rc, s.URL+"/api/x") // the 403
	getVia(inner, rc, s.URL+"/api/x") // refused unsent
	if err := b.Spent(inner); err == nil {
		t.Fatal("not spent")
	}
	ws := warnings()
	if len(ws) != 1 || !strings.Contains(ws[0], "GITHUB_TOKEN") || !strings.Contains(ws[0], "used git") {
		t.Fatalf("warnings %q", ws)
	}
	if iw := innerWarnings(); iw != nil {
		t.Fatalf("the inner watch reported %q", iw)
	}
	other, otherWarnings := WatchBudgets(context.Background())
	_ = other
	if ws := otherWarnings(); len(ws) != 0 {
		t.Fatalf("a plan that never asked: %q", ws)
	}
	tok := NewAPIBudget(BudgetConfig{Name: "the GitHub API", BaseURL: s.URL + "/api", Token: true})
	if e := (&RateLimitedError{API: tok.api, Until: c.now(), Token: true}); strings.Contains(e.Error(), "5,000") {
		t.Fatalf("with a token the advice is not to set one: %v", e)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
