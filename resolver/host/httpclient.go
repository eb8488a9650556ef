package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"reasonix.io/plugind/secrets"
)

var _ retryablehttp.LeveledLogger = debugLogger{}

// Network limits. A hostile or overloaded server must cost seconds, not an
// hour: retries are bounded, and a Retry-After longer than MaxRetryAfter ends
// the attempt with a clear error instead of sleeping.
const (
	DefaultRetries       = 3
	DefaultTimeout       = 30 * time.Second
	DefaultMaxRetryAfter = 10 * time.Second
)

// NetConfig is how every request to a remote host is made.
type NetConfig struct {
	Timeout       time.Duration // connect, header and stall limit (default 30s)
	MaxRetryAfter time.Duration // the longest Retry-After honoured (default 10s)
	Retries       int           // default 3
	Log           *slog.Logger  // retries at debug, one warning when all fail
	// PublicOnly refuses connections to loopback, private, link-local and
	// other non-public addresses, judged on the address each connection
	// actually dials, after DNS resolution (see refuseNonPublic). The team
	// mirror sets it for its upstream dials unless its operator allows
	// private upstreams. A proxy from the environment is dialed like
	// anything else: on a private address it needs the operator's leave too.
	PublicOnly bool
}

func (c NetConfig) withDefaults() NetConfig {
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.MaxRetryAfter = cmp.Or(c.MaxRetryAfter, DefaultMaxRetryAfter)
	c.Retries = cmp.Or(c.Retries, DefaultRetries)
	c.Log = cmp.Or(c.Log, slog.New(slog.DiscardHandler))
	return c
}

// NewTransport is the connection pool every client shares: dial, TLS and
// header timeouts, so a silent server costs seconds, not an hour.
func NewTransport(cfg NetConfig) *http.Transport {
	cfg = cfg.withDefaults()
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           NewDialer(cfg).DialContext,
		TLSHandshakeTimeout:   cfg.Timeout,
		ResponseHeaderTimeout: cfg.Timeout,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
}

// NewDialer is how every connection to a remote host is made, HTTP's and
// SSH's alike: the connect timeout, and PublicOnly's refusal judged on the
// address each connection actually dials.
func NewDialer(cfg NetConfig) *net.Dialer {
	cfg = cfg.withDefaults()
	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	if cfg.PublicOnly {
		dialer.Control = refuseNonPublic
	}
	return dialer
}

// NewHTTPClient is a plain client over rt (no retries: git's smart HTTP
// retries at a higher level) whose redirects stay safe (see checkRedirect).
func NewHTTPClient(rt http.RoundTripper) *http.Client {
	return &http.Client{Transport: rt, CheckRedirect: checkRedirect}
}

// checkRedirect follows a redirect (GitHub's archive link is one, to its
// download host) only where a source could have pointed: the same host and
// scheme, or another https host with a real DNS name — never a downgrade to
// http, an IP literal or this machine, which a hostile server could use to
// reach the local network.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	prev := via[len(via)-1].URL
	next := req.URL
	if next.Host == prev.Host && next.Scheme == prev.Scheme {
		return nil
	}
	if next.Scheme != "https" {
		return fmt.Errorf("%w from %s to a %s:// URL", errRedirectRefused, prev.Host, next.Scheme)
	}
	if err := checkPublicHost(next.Hostname()); err != nil {
		return fmt.Errorf("%w from %s: %v", errRedirectRefused, prev.Host, err)
	}
	return nil
}

// errRedirectRefused is a redirect checkRedirect refused: the same answer
// comes every time, so it is not retried.
var errRedirectRefused = errors.New("refusing redirect")

// IsLoopbackHost reports whether host (a port and brackets optional, as in
// a Host header) names this machine's loopback interface: localhost,
// 127.0.0.0/8 or ::1. The list is closed on purpose: a DNS-rebinding page
// reaches the daemon with its own host name in Host, never with one of these.
func IsLoopbackHost(host string) bool {
	host = HostWithoutPort(host)
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// HostWithoutPort strips the port and brackets of host[:port].
func HostWithoutPort(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

func checkPublicHost(host string) error {
	h := strings.ToLower(strings.Trim(host, "[]"))
	switch {
	case net.ParseIP(h) != nil:
		return fmt.Errorf("%s is an IP address", host)
	case h == "localhost" || strings.HasSuffix(h, ".localhost") || !strings.Contains(h, "."):
		return fmt.Errorf("%s is not a public host name", host)
	}
	return nil
}

// RESTClient is the retrying client every REST call and archive download
// goes through (retryablehttp's), each request counting its own attempts
// so that a retry can be announced to the context's Watcher as "attempt 2
// of 4 in 4s" before its wait begins.
type RESTClient struct {
	*retryablehttp.Client
}

// attempts is one request's count of retries so far.
type attempts struct {
	host string
	n    int
}

type attemptsKey struct{}

// Do sends req with retries.
func (c *RESTClient) Do(req *retryablehttp.Request) (*http.Response, error) {
	ctx := context.WithValue(req.Context(), attemptsKey{}, &attempts{host: req.URL.Host})
	return c.Client.Do(req.WithContext(ctx))
}

// StandardClient is an *http.Client whose requests go through c (for
// go-github).
func (c *RESTClient) StandardClient() *http.Client {
	return &http.Client{Transport: restRoundTripper{c}}
}

type restRoundTripper struct{ c *RESTClient }

func (rt restRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	r, err := retryablehttp.FromRequest(req)
	if err != nil {
		return nil, err
	}
	return rt.c.Do(r)
}

// NewRetryingClient builds the retrying client every REST call and archive
// download goes through: backoff, Retry-After (a longer wait than
// MaxRetryAfter ends the attempt with a clear error instead of sleeping),
// retries logged at debug level, announced to the request's Watcher, and
// one warning when every attempt failed.
func NewRetryingClient(rt http.RoundTripper, cfg NetConfig) *RESTClient {
	cfg = cfg.withDefaults()
	c := retryablehttp.NewClient()
	c.RetryMax = cfg.Retries
	c.RetryWaitMin = 100 * time.Millisecond
	c.RetryWaitMax = 2 * time.Second
	c.Logger = debugLogger{cfg.Log}
	c.HTTPClient = NewHTTPClient(rt)
	c.CheckRetry = func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		maskURL(err)
		var refused *AddressRefusedError
		if errors.As(err, &refused) || errors.Is(err, errRedirectRefused) {
			return false, err // the same address or redirect is refused every time
		}
		if IsRateLimited(err) || RateLimitedAnswer(resp) {
			return false, err // refused until the budget's reset, hours maybe (APIBudget)
		}
		if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
			if wait, ok := retryAfter(resp); ok && wait > cfg.MaxRetryAfter {
				return false, &RetryAfterError{Host: resp.Request.URL.Host, Status: resp.StatusCode, Wait: wait, Cap: cfg.MaxRetryAfter}
			}
		}
		// The policy answers a retryable failure with a nil error: the
		// announcement says the failure itself.
		retry, policyErr := retryablehttp.DefaultRetryPolicy(ctx, resp, err)
		if retry {
			announceRetry(ctx, c, resp, err)
		}
		return retry, policyErr
	}
	c.Backoff = func(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
		if resp != nil {
			if wait, ok := retryAfter(resp); ok {
				return min(wait, cfg.MaxRetryAfter)
			}
		}
		return retryablehttp.DefaultBackoff(lo, hi, attempt, resp)
	}
	c.ErrorHandler = func(resp *http.Response, err error, attempts int) (*http.Response, error) {
		if resp != nil {
			resp.Body.Close()
		}
		var ra *RetryAfterError
		if errors.As(err, &ra) || IsRateLimited(err) {
			return nil, err
		}
		if err != nil {
			err = fmt.Errorf("giving up after %d attempts: %w", attempts, err)
		} else {
			err = fmt.Errorf("giving up after %d attempts: %s answered %s", attempts, resp.Request.URL.Host, resp.Status)
		}
		cfg.Log.Warn("request failed after retries (offline? try --offline; rate limited? set GITHUB_TOKEN)", "err", err)
		return nil, err
	}
	return &RESTClient{Client: c}
}

// maskURL hides a credential in the URL of a failed request — the
// download link GitHub redirects a private repository's archive to carries
// a token in its query — before the error is logged, announced or
// returned. The *url.Error is this request's own, so it is masked in
// place, once, for all of them.
func maskURL(err error) {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		ue.URL = secrets.Mask(ue.URL)
	}
}

// announceRetry tells the request's Watcher that a retry will follow, with
// its number and the wait before it: the same Backoff retryablehttp is
// about to call, so the announced wait is the real one. The last failure
// announces nothing: no retry follows it.
func announceRetry(ctx context.Context, c *retryablehttp.Client, resp *http.Response, err error) {
	a, ok := ctx.Value(attemptsKey{}).(*attempts)
	if !ok {
		return
	}
	a.n++
	if a.n > c.RetryMax {
		return
	}
	why := err
	switch {
	case why == nil && resp != nil:
		why = fmt.Errorf("%s answered %s", a.host, resp.Status)
	case why == nil:
		why = fmt.Errorf("the request to %s failed", a.host)
	}
	wait := c.Backoff(c.RetryWaitMin, c.RetryWaitMax, a.n-1, resp)
	WatcherFrom(ctx).Retrying(a.host, a.n+1, c.RetryMax+1, wait, why)
}

// debugLogger sends retryablehttp's per-attempt messages (one per retry,
// "[ERR] … retrying") to debug level: a retry that then succeeds is not an
// error worth a user's attention.
type debugLogger struct{ l *slog.Logger }

func (d debugLogger) Error(msg string, kv ...any) { d.l.Debug(msg, kv...) }
func (d debugLogger) Info(msg string, kv ...any)  { d.l.Debug(msg, kv...) }
func (d debugLogger) Debug(msg string, kv ...any) { d.l.Debug(msg, kv...) }
func (d debugLogger) Warn(msg string, kv ...any)  { d.l.Debug(msg, kv...) }

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

// StallReader fails a body read that makes no progress for timeout, so a
// server that stops sending mid-body is an error naming the host, not a
// hang.
type StallReader struct {
	r       io.Reader
	host    string
	timeout time.Duration
	timer   *time.Timer
	cancel  context.CancelFunc
	stalled atomic.Bool
}

// NewStallReader wraps r; cancel is called when it stalls.
func NewStallReader(r io.Reader, host string, timeout time.Duration, cancel context.CancelFunc) *StallReader {
	s := &StallReader{r: r, host: host, timeout: timeout, cancel: cancel}
	s.timer = time.AfterFunc(timeout, func() {
		s.stalled.Store(true)
		cancel()
	})
	return s
}

func (s *StallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.timer.Reset(s.timeout)
	}
	if err != nil && err != io.EOF && s.stalled.Load() {
		return n, fmt.Errorf("download from %s stalled: no data for %s", s.host, s.timeout)
	}
	return n, err
}

func (s *StallReader) Close() { s.timer.Stop() }
