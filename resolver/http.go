package resolver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// Network limits. A hostile or overloaded server must cost seconds, not an
// hour: retries are bounded, and a Retry-After longer than maxRetryAfter ends
// the attempt with a clear error instead of sleeping.
const (
	defaultRetries       = 3
	defaultTimeout       = 30 * time.Second
	defaultMaxRetryAfter = 10 * time.Second
)

// newHTTPClient builds the retrying client every download and API call goes
// through.
func newHTTPClient(log *slog.Logger, timeout, maxRetryAfter time.Duration, retries int) *retryablehttp.Client {
	c := retryablehttp.NewClient()
	c.RetryMax = retries
	c.RetryWaitMin = 100 * time.Millisecond
	c.RetryWaitMax = 2 * time.Second
	c.Logger = log
	c.HTTPClient = &http.Client{
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   timeout,
			ResponseHeaderTimeout: timeout,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		},
		// Redirects are followed by the http.Client; the archive link is a
		// redirect to a download host.
	}
	c.CheckRetry = func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
			if wait, ok := retryAfter(resp); ok && wait > maxRetryAfter {
				return false, &RetryAfterError{Host: resp.Request.URL.Host, Status: resp.StatusCode, Wait: wait, Cap: maxRetryAfter}
			}
		}
		return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
	}
	c.Backoff = func(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
		if resp != nil {
			if wait, ok := retryAfter(resp); ok {
				return min(wait, maxRetryAfter)
			}
		}
		return retryablehttp.DefaultBackoff(lo, hi, attempt, resp)
	}
	c.ErrorHandler = func(resp *http.Response, err error, attempts int) (*http.Response, error) {
		if resp != nil {
			resp.Body.Close()
		}
		var ra *RetryAfterError
		if errors.As(err, &ra) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("giving up after %d attempts: %w", attempts, err)
		}
		return nil, fmt.Errorf("giving up after %d attempts: %s answered %s", attempts, resp.Request.URL.Host, resp.Status)
	}
	return c
}

// RetryAfterError is a server asking for a longer pause than we are willing
// to wait.
type RetryAfterError struct {
	Host   string
	Status int
	Wait   time.Duration
	Cap    time.Duration
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("%s is rate limiting (HTTP %d) and asked to retry after %s, longer than the %s this tool waits; try again later or set GITHUB_TOKEN", e.Host, e.Status, e.Wait, e.Cap)
}

func retryAfter(resp *http.Response) (time.Duration, bool) {
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t), true
	}
	return 0, false
}

// stallReader fails a body read that makes no progress for timeout, so a
// server that stops sending mid-body is an error naming the host, not a
// hang.
type stallReader struct {
	r       io.Reader
	host    string
	timeout time.Duration
	timer   *time.Timer
	cancel  context.CancelFunc

	mu      sync.Mutex
	stalled bool
}

func newStallReader(r io.Reader, host string, timeout time.Duration, cancel context.CancelFunc) *stallReader {
	s := &stallReader{r: r, host: host, timeout: timeout, cancel: cancel}
	s.timer = time.AfterFunc(timeout, func() {
		s.mu.Lock()
		s.stalled = true
		s.mu.Unlock()
		cancel()
	})
	return s
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.timer.Reset(s.timeout)
	}
	if err != nil && err != io.EOF {
		s.mu.Lock()
		stalled := s.stalled
		s.mu.Unlock()
		if stalled {
			return n, fmt.Errorf("download from %s stalled: no data for %s", s.host, s.timeout)
		}
	}
	return n, err
}

func (s *stallReader) Close() { s.timer.Stop() }
