package host

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// fastClient retries twice, quickly.
func fastClient() *RESTClient {
	c := NewRetryingClient(http.DefaultTransport, NetConfig{Retries: 2})
	c.RetryWaitMin, c.RetryWaitMax = time.Millisecond, 2*time.Millisecond
	return c
}

// TestRetryingClientConnectionFailure: a host that hangs up is retried,
// each retry announced with why — the failure itself, never nothing (a
// terminal prints it) — and a credential in the request's URL is masked
// wherever the failure is told: the error, the announcements.
func TestRetryingClientConnectionFailure(t *testing.T) {
	t.Parallel()
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer srv.Close()
	rec := &recorder{}
	req, _ := retryablehttp.NewRequestWithContext(WithWatcher(context.Background(), rec), http.MethodGet, srv.URL+"/archive?token=s3cret&x=1", nil)
	_, err := fastClient().Do(req)
	if err == nil {
		t.Fatal("a host that hangs up succeeded")
	}
	if asked.Load() != 3 {
		t.Errorf("%d attempts, want 3", asked.Load())
	}
	if msg := err.Error(); strings.Contains(msg, "s3cret") || !strings.Contains(msg, "giving up after 3 attempts") || !strings.Contains(msg, "token=***") {
		t.Errorf("error %q: want the attempts said and the token masked", msg)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.whys) != 2 {
		t.Fatalf("announced %q, want 2 retries", rec.whys)
	}
	for _, why := range rec.whys {
		if why == "<nil>" || strings.Contains(why, "s3cret") || !strings.Contains(why, "EOF") {
			t.Errorf("a retry was announced because %q", why)
		}
	}
}

// TestRetryingClientRefusedRedirect: a redirect checkRedirect refuses is
// refused the same way every time, so it is asked once.
func TestRetryingClientRefusedRedirect(t *testing.T) {
	t.Parallel()
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Redirect(w, r, "https://10.1.2.3/archive", http.StatusFound)
	}))
	defer srv.Close()
	req, _ := retryablehttp.NewRequest(http.MethodGet, srv.URL, nil)
	_, err := fastClient().Do(req)
	if err == nil || !strings.Contains(err.Error(), "refusing redirect from 127.0.0.1") || !strings.Contains(err.Error(), "10.1.2.3 is an IP address") {
		t.Fatalf("%v, want the redirect refused", err)
	}
	if asked.Load() != 1 {
		t.Errorf("asked %d times", asked.Load())
	}
}
