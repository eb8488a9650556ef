package host

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Watcher hears about the network while a person waits on it, so a
// terminal can say what is going on (the CLI draws it; the resolver never
// draws anything). Its methods may be called from many goroutines at once
// and must return quickly.
type Watcher interface {
	// Requesting says a request to host is under way; done is called once
	// its answer has begun (headers) or it failed.
	Requesting(host string) (done func())
	// Silent says host has sent nothing for d while a request waits on it
	// (no answer yet, or an answer that stopped midway); the request gives
	// up at limit. It is called as soon as that is noticed, then about
	// every second while it lasts, d growing.
	Silent(host string, d, limit time.Duration)
	// Retrying says attempt (from 2) of max to reach what starts in wait,
	// the previous one having failed with why.
	Retrying(what string, attempt, max int, wait time.Duration, why error)
	// Received says n bytes have arrived from host so far in one answer.
	Received(host string, n int64)
	// Wrote says n bytes of files of repo have been written so far in one
	// fetch.
	Wrote(repo string, n int64)
}

type watcherKey struct{}

// WithWatcher makes w hear about the network work done under ctx.
func WithWatcher(ctx context.Context, w Watcher) context.Context {
	return context.WithValue(ctx, watcherKey{}, w)
}

// WatcherFrom is the Watcher of ctx: a silent one when none was set.
func WatcherFrom(ctx context.Context) Watcher {
	if w, ok := ctx.Value(watcherKey{}).(Watcher); ok && w != nil {
		return w
	}
	return noWatcher{}
}

type noWatcher struct{}

func (noWatcher) Requesting(string) func()                        { return func() {} }
func (noWatcher) Silent(string, time.Duration, time.Duration)     {}
func (noWatcher) Retrying(string, int, int, time.Duration, error) {}
func (noWatcher) Received(string, int64)                          {}
func (noWatcher) Wrote(string, int64)                             {}

// SilentAfter is how long a host may say nothing before a watcher hears of
// it: past a second a person wonders, and a host that accepts a connection
// and then never answers must be named long before the request gives up.
const SilentAfter = 2 * time.Second

// watchTransport reports every request of a context that has a Watcher:
// that it is under way, any silence of SilentAfter or more — before the
// answer or within its body — and the body's bytes. Requests of a context
// without one pass through untouched.
type watchTransport struct {
	next  http.RoundTripper
	limit time.Duration // when the request gives up (the stall timeout)
	tick  time.Duration // how often silence is looked for
}

// Watch wraps rt so that requests report to their context's Watcher;
// limit is the timeout after which a silent host is given up on.
func Watch(rt http.RoundTripper, limit time.Duration) http.RoundTripper {
	limit = cmp.Or(limit, DefaultTimeout)
	return &watchTransport{next: rt, limit: limit, tick: 250 * time.Millisecond}
}

func (t *watchTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	w, ok := req.Context().Value(watcherKey{}).(Watcher)
	if !ok || w == nil {
		return t.next.RoundTrip(req)
	}
	host := req.URL.Host
	quiet := newSilence(w, host, t.limit, t.tick)
	done := w.Requesting(host)
	quiet.begin()
	resp, err := t.next.RoundTrip(req)
	quiet.end()
	done()
	if err != nil {
		quiet.stop()
		return nil, err
	}
	resp.Body = &watchedBody{ReadCloser: resp.Body, quiet: quiet, w: w, host: host}
	return resp, nil
}

// watchedBody counts an answer's bytes and notices when they stop coming.
type watchedBody struct {
	io.ReadCloser
	quiet *silence
	w     Watcher
	host  string
	n     int64
}

func (b *watchedBody) Read(p []byte) (int, error) {
	b.quiet.begin()
	n, err := b.ReadCloser.Read(p)
	b.quiet.end()
	if n > 0 {
		b.n += int64(n)
		b.w.Received(b.host, b.n)
	}
	return n, err
}

func (b *watchedBody) Close() error {
	b.quiet.stop()
	return b.ReadCloser.Close()
}

// silence measures how long a request has been waiting on its host: from
// begin to end, while the request waits (for the answer, or inside a
// body's Read). A ticker looks while the request lives and tells the
// watcher once the wait passes SilentAfter, then about every second.
type silence struct {
	w      Watcher
	host   string
	limit  time.Duration
	since  atomic.Int64 // unix nanoseconds the current wait began; 0: not waiting
	stop   func()       // ends the watch; once, whoever calls it
	ticker *time.Ticker
	quit   chan struct{}
}

func newSilence(w Watcher, host string, limit, tick time.Duration) *silence {
	s := &silence{w: w, host: host, limit: limit, ticker: time.NewTicker(tick), quit: make(chan struct{})}
	s.stop = sync.OnceFunc(func() { s.ticker.Stop(); close(s.quit) })
	go s.watch()
	return s
}

func (s *silence) begin() { s.since.Store(time.Now().UnixNano()) }
func (s *silence) end()   { s.since.Store(0) }

func (s *silence) watch() {
	var told time.Duration // the wait last reported, to report once a second
	for {
		select {
		case <-s.quit:
			return
		case now := <-s.ticker.C:
			since := s.since.Load()
			if since == 0 {
				told = 0
				continue
			}
			d := now.Sub(time.Unix(0, since))
			if d >= SilentAfter && d-told >= time.Second {
				told = d
				s.w.Silent(s.host, d.Round(time.Second), s.limit)
			}
		}
	}
}
