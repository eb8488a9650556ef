package host

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// recorder is a Watcher that keeps what it heard.
type recorder struct {
	mu       sync.Mutex
	requests []string
	silent   []time.Duration
	retries  []string
	whys     []string // why each retry came
	received int64
}

func (r *recorder) Requesting(host string) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, host)
	return func() {}
}

func (r *recorder) Silent(host string, d, limit time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.silent = append(r.silent, d)
}

func (r *recorder) Retrying(what string, attempt, of int, wait time.Duration, why error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retries = append(r.retries, strings.Join([]string{what, strconv.Itoa(attempt), strconv.Itoa(of), wait.String()}, " "))
	if why == nil {
		r.whys = append(r.whys, "<nil>")
		return
	}
	r.whys = append(r.whys, why.Error())
}

func (r *recorder) Received(host string, n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.received = n
}

func (r *recorder) Wrote(string, int64) {}

// TestWatchReportsSilenceAndBytes: a host that takes the request and says
// nothing is reported within SilentAfter and a tick, well before it
// answers; the answer's bytes are counted; a context without a Watcher is
// left alone.
func TestWatchReportsSilenceAndBytes(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("x", 100_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(SilentAfter + 700*time.Millisecond)
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	rec := &recorder{}
	client := &http.Client{Transport: Watch(http.DefaultTransport, 30*time.Second)}
	req, _ := http.NewRequestWithContext(WithWatcher(context.Background(), rec), http.MethodGet, srv.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(got) != len(body) || rec.received != int64(len(body)) {
		t.Errorf("received %d, reported %d, want %d", len(got), rec.received, len(body))
	}
	if len(rec.requests) != 1 || rec.requests[0] != strings.TrimPrefix(srv.URL, "http://") {
		t.Errorf("requests: %v", rec.requests)
	}
	if len(rec.silent) == 0 || rec.silent[0] < SilentAfter {
		t.Errorf("the silence was not reported: %v", rec.silent)
	}

	// No Watcher: nothing wrapped, nothing reported.
	plain, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	resp, err = client.Do(plain)
	if err != nil {
		t.Fatal(err)
	}
	if _, wrapped := resp.Body.(*watchedBody); wrapped {
		t.Error("a request without a Watcher was watched")
	}
	resp.Body.Close()
}

// TestRetriesAreAnnouncedBeforeTheirWait: each retry of a REST request is
// announced with its number, the number of attempts, and the wait the
// client then takes; the last failure announces nothing.
func TestRetriesAreAnnouncedBeforeTheirWait(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c := NewRetryingClient(http.DefaultTransport, NetConfig{Retries: 2})
	c.RetryWaitMin, c.RetryWaitMax = 10*time.Millisecond, 40*time.Millisecond
	rec := &recorder{}
	req, _ := retryablehttp.NewRequestWithContext(WithWatcher(context.Background(), rec), http.MethodGet, srv.URL, nil)
	if _, err := c.Do(req); err == nil {
		t.Fatal("a host that always answers 503 succeeded")
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	want := []string{host + " 2 3 10ms", host + " 3 3 20ms"}
	if strings.Join(rec.retries, "|") != strings.Join(want, "|") {
		t.Errorf("retries announced %q, want %q", rec.retries, want)
	}
}
