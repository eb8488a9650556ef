package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// APIBudget is what is left of a REST API's request budget, learned from
// the X-RateLimit-* headers of its answers. GitHub allows 60 requests an
// hour without a token (5,000 with one), counts every request whatever its
// answer — archive links included — and refuses the rest with 403 or 429
// and X-RateLimit-Remaining: 0 until X-RateLimit-Reset; git's smart HTTP is
// not counted (SPEC §14). One APIBudget is shared by every request to one
// API, for the life of the process (the daemon's too), so that:
//
//   - once an answer says the budget is spent, no request is sent to that
//     API until the reset: Spent tells the host to use git instead, and the
//     transport (RoundTripper) refuses anything that would still go;
//   - a request the budget no longer covers is never sent either: requests
//     out at once are counted against what the answers said is left;
//   - until the first answer says how much is left, one request goes at a
//     time, so a process that starts with the budget spent (by an earlier
//     run) learns it from one refused request, not from one per worker.
//
// An API that sends no such headers is never limited.
type APIBudget struct {
	api   string // "the GitHub API (api.github.com)", for messages
	base  string // requests whose URL starts with it count
	token bool   // requests carry a token: its budget, not the anonymous one
	now   func() time.Time
	log   *slog.Logger

	mu         sync.Mutex
	learned    bool          // an answer has come back in this window
	probe      chan struct{} // closed when the request out to learn the budget returns
	reset      time.Time     // when the window the answers describe ends
	spentUntil time.Time     // no request before this
	logged     time.Time     // spentUntil last logged
	// What is left is estimated from the answers' X-RateLimit-Remaining.
	// Requests are numbered as they are sent (sent is the last number);
	// the answer to request j, saying r are left, bounds what is left now
	// by r + j - sent, less the requests sent before j still unanswered
	// (the server may have counted them after j). bound is the lowest
	// r + j - those over the window's answers: what is left now is at most
	// bound - sent, never more, so a request the budget cannot cover is
	// never sent.
	sent     int64
	out      map[int64]bool // requests sent and not yet answered
	bound    int64
	hasBound bool
}

// BudgetConfig configures NewAPIBudget.
type BudgetConfig struct {
	// Name names the API in messages ("the GitHub API").
	Name string
	// BaseURL is the API's base; only requests below it count (an
	// archive link's redirect to a download host does not).
	BaseURL string
	// Token says requests carry credentials (the advice then differs).
	Token bool
	Now   func() time.Time // default time.Now
	Log   *slog.Logger     // one Info line per window the budget runs out
}

// NewAPIBudget returns the budget of one API.
func NewAPIBudget(cfg BudgetConfig) *APIBudget {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Log = cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	base := strings.TrimSuffix(cfg.BaseURL, "/") + "/"
	api := cfg.Name
	if u, err := url.Parse(base); err == nil && u.Host != "" {
		api += " (" + u.Host + ")"
	}
	return &APIBudget{api: api, base: base, token: cfg.Token, now: cfg.Now, log: cfg.Log, out: map[int64]bool{}}
}

// Longest and shortest pauses: a reset further away than a GitHub window
// (a wrong clock, a hostile server) is not believed, and a limited answer
// without a usable reset still pauses the API for a minute.
const (
	maxBudgetPause = time.Hour
	minBudgetPause = time.Minute
)

// Spent returns a *RateLimitedError while the budget is spent, and records
// in ctx's watch (WatchBudgets) that the caller went without the API
// because of it; nil when the API may be asked.
func (b *APIBudget) Spent(ctx context.Context) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	now := b.now()
	b.renew(now)
	e := b.spentLocked(now)
	b.mu.Unlock()
	if e != nil {
		noteLimited(ctx, e)
		return e
	}
	return nil
}

// Err is the current refusal, or nil; unlike Spent it records nothing.
func (b *APIBudget) Err() *RateLimitedError {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spentLocked(b.now())
}

// renew forgets a window that has ended. The caller holds b.mu.
func (b *APIBudget) renew(now time.Time) {
	if !b.reset.IsZero() && !now.Before(b.reset) {
		b.learned, b.hasBound, b.reset = false, false, time.Time{}
	}
}

// spentLocked is the refusal now, if any. The caller holds b.mu.
func (b *APIBudget) spentLocked(now time.Time) *RateLimitedError {
	if now.Before(b.spentUntil) {
		return &RateLimitedError{API: b.api, Until: b.spentUntil, Token: b.token}
	}
	return nil
}

// spend marks the budget spent until the window's end. The caller holds
// b.mu.
func (b *APIBudget) spend(now, until time.Time) {
	if !until.After(now) {
		until = now.Add(minBudgetPause)
	}
	if longest := now.Add(maxBudgetPause); until.After(longest) {
		until = longest
	}
	if until.After(b.spentUntil) {
		b.spentUntil = until
	}
	if !b.logged.Equal(b.spentUntil) {
		b.logged = b.spentUntil
		b.log.Info("the API's request budget is spent; git serves until it resets", "api", b.api, "until", b.spentUntil.UTC().Format(time.RFC3339), "token", b.token)
	}
}

// acquire waits until one request may be sent to the API and returns its
// number: none while the budget is spent or would be by the requests
// already out, and (until an answer has said how much is left) none while
// another is out.
func (b *APIBudget) acquire(ctx context.Context) (int64, error) {
	for {
		b.mu.Lock()
		now := b.now()
		b.renew(now)
		if e := b.spentLocked(now); e != nil {
			b.mu.Unlock()
			noteLimited(ctx, e)
			return 0, e
		}
		switch {
		case b.learned && b.hasBound && b.bound-b.sent <= 0:
			// Nothing is left that the requests out will not use: the
			// next one would be refused, and counted.
			b.spend(now, b.reset)
			b.mu.Unlock()
			continue
		case b.learned || b.probe == nil:
			if !b.learned {
				b.probe = make(chan struct{})
			}
			b.sent++
			seq := b.sent
			b.out[seq] = true
			b.mu.Unlock()
			return seq, nil
		}
		wait := b.probe
		b.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// learn reads what the answer to request seq says of the budget (resp is
// nil when the request failed without one).
func (b *APIBudget) learn(seq int64, resp *http.Response) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.out, seq)
	if resp != nil {
		b.learned = true
	}
	if b.probe != nil && (resp != nil || len(b.out) == 0) {
		// Learned, or the probe failed: the waiters go (one of them as
		// the next probe).
		close(b.probe)
		b.probe = nil
	}
	if resp == nil {
		return
	}
	if r := resp.Header.Get("X-RateLimit-Resource"); r != "" && r != "core" {
		return // another budget (search, GraphQL)
	}
	now := b.now()
	remaining, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Remaining"), 10, 64)
	if err != nil || remaining < 0 {
		return // this API says nothing of a budget
	}
	reset := RateLimitReset(resp)
	bound := remaining + seq
	for other := range b.out {
		if other < seq {
			bound--
		}
	}
	switch {
	case reset.After(b.reset):
		b.reset, b.bound, b.hasBound = reset, bound, true // a newer window
	case !b.hasBound || bound < b.bound:
		b.bound, b.hasBound = bound, true
	}
	if RateLimitedAnswer(resp) {
		until := reset
		if !until.After(now) {
			if wait, ok := retryAfter(resp); ok {
				until = now.Add(wait)
			}
		}
		b.spend(now, until)
	}
}

// RateLimitReset is when resp's rate-limit window resets
// (X-RateLimit-Reset), or the zero time when it does not say.
func RateLimitReset(resp *http.Response) time.Time {
	if resp != nil {
		if secs, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return time.Unix(secs, 0)
		}
	}
	return time.Time{}
}

// RateLimitedAnswer reports whether resp refuses a request for a spent
// budget: 403 or 429 with X-RateLimit-Remaining: 0.
func RateLimitedAnswer(resp *http.Response) bool {
	return resp != nil && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests) &&
		strings.TrimSpace(resp.Header.Get("X-RateLimit-Remaining")) == "0"
}

// RoundTripper sends requests through rt, counting those to the API
// against the budget: one the budget cannot cover fails with a
// *RateLimitedError and is not sent.
func (b *APIBudget) RoundTripper(rt http.RoundTripper) http.RoundTripper {
	return budgetTransport{b: b, rt: rt}
}

type budgetTransport struct {
	b  *APIBudget
	rt http.RoundTripper
}

func (t budgetTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasPrefix(req.URL.String(), t.b.base) {
		return t.rt.RoundTrip(req)
	}
	seq, err := t.b.acquire(req.Context())
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		resp = nil
	}
	t.b.learn(seq, resp)
	if RateLimitedAnswer(resp) {
		if e := t.b.Err(); e != nil {
			noteLimited(req.Context(), e)
		}
	}
	return resp, err
}

// RateLimitedError is an API whose request budget is spent until a time.
type RateLimitedError struct {
	API   string
	Until time.Time
	Token bool
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("%s rate limit is spent until %s; %s", e.API, clock(e.Until), e.advice())
}

// Warning is the one line a plan says when the budget made it go without
// the API.
func (e *RateLimitedError) Warning() string {
	advice := e.advice()
	return fmt.Sprintf("%s rate limit is spent until %s: refs, reachability checks and downloads used git instead, which it does not count. %s%s.", e.API, clock(e.Until), strings.ToUpper(advice[:1]), advice[1:])
}

func (e *RateLimitedError) advice() string {
	if e.Token {
		return "the budget of the token in GITHUB_TOKEN (or GH_TOKEN) is shared by everything using it; retry after the reset"
	}
	return "set GITHUB_TOKEN (or GH_TOKEN) to a GitHub token for 5,000 requests an hour instead of 60, or retry after the reset"
}

func clock(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// IsRateLimited reports whether err is, or wraps, a spent API budget.
func IsRateLimited(err error) bool {
	var e *RateLimitedError
	return errors.As(err, &e)
}

// A budget watch collects, for one plan, the APIs whose spent budget made
// it go without them, so the plan says so once rather than once per
// repository.
type budgetWatchKey struct{}

type budgetWatch struct {
	mu      sync.Mutex
	limited map[string]*RateLimitedError // by API
}

// WatchBudgets returns ctx under which API budgets report the requests
// they refused or turned to git, and the function that returns the
// warnings to show (one per API, the latest reset). A call inside another
// watching one gets ctx back and no warnings: the outer call reports.
func WatchBudgets(ctx context.Context) (context.Context, func() []string) {
	if _, ok := ctx.Value(budgetWatchKey{}).(*budgetWatch); ok {
		return ctx, func() []string { return nil }
	}
	w := &budgetWatch{limited: map[string]*RateLimitedError{}}
	return context.WithValue(ctx, budgetWatchKey{}, w), w.warnings
}

func noteLimited(ctx context.Context, e *RateLimitedError) {
	w, ok := ctx.Value(budgetWatchKey{}).(*budgetWatch)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.limited[e.API]; !ok || e.Until.After(old.Until) {
		w.limited[e.API] = e
	}
}

func (w *budgetWatch) warnings() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, e := range w.limited {
		out = append(out, e.Warning())
	}
	sort.Strings(out)
	return out
}
