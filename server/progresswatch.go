package server

import (
	"time"

	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/secrets"
)

// Waiting is what a stream's work waits on, as the resolver's network
// layer reports it (host.Watcher): the page says which host is silent, for
// how long, and which retry is under way, for a single source as for a
// marketplace. The fields are part of every progress event.
type Waiting struct {
	// Host is the host asked last.
	Host string `json:"host,omitempty"`
	// SilentMs is how long Host has sent nothing while a request waits on
	// it (0 while it answers); LimitMs is when that request gives up.
	SilentMs int64 `json:"silentMs,omitempty"`
	LimitMs  int64 `json:"limitMs,omitempty"`
	// Received counts the bytes of Host's answer so far; Written the bytes
	// of files a fetch has written.
	Received int64 `json:"received,omitempty"`
	Written  int64 `json:"written,omitempty"`
	// A retry: of what, which attempt of how many, after how long a wait,
	// and why the attempt before failed (credentials masked).
	RetryWhat    string `json:"retryWhat,omitempty"`
	RetryAttempt int    `json:"retryAttempt,omitempty"`
	RetryMax     int    `json:"retryMax,omitempty"`
	RetryWaitMs  int64  `json:"retryWaitMs,omitempty"`
	RetryWhy     string `json:"retryWhy,omitempty"`
}

// noRetry clears a retry once the host answers again.
func (w *Waiting) noRetry() {
	w.RetryWhat, w.RetryAttempt, w.RetryMax, w.RetryWaitMs, w.RetryWhy = "", 0, 0, 0, ""
}

// Requesting implements host.Watcher.
func (p *progressStream) Requesting(h string) func() {
	p.update(func(e *ProgressEvent) { e.Host, e.SilentMs, e.LimitMs = h, 0, 0 })
	return func() {}
}

// Silent implements host.Watcher.
func (p *progressStream) Silent(h string, d, limit time.Duration) {
	p.update(func(e *ProgressEvent) { e.Host, e.SilentMs, e.LimitMs = h, d.Milliseconds(), limit.Milliseconds() })
}

// Retrying implements host.Watcher.
func (p *progressStream) Retrying(what string, attempt, maxAttempts int, wait time.Duration, why error) {
	reason := ""
	if why != nil {
		reason = secrets.Mask(why.Error())
	}
	p.update(func(e *ProgressEvent) {
		e.RetryWhat, e.RetryAttempt, e.RetryMax, e.RetryWaitMs, e.RetryWhy = what, attempt, maxAttempts, wait.Milliseconds(), reason
		e.SilentMs, e.LimitMs = 0, 0
	})
}

// Received implements host.Watcher.
func (p *progressStream) Received(h string, n int64) {
	p.update(func(e *ProgressEvent) {
		e.Host, e.SilentMs, e.LimitMs, e.Received = h, 0, 0, n
		e.noRetry()
	})
}

// Wrote implements host.Watcher.
func (p *progressStream) Wrote(_ string, n int64) {
	p.update(func(e *ProgressEvent) { e.Written = n })
}

var _ host.Watcher = (*progressStream)(nil)

// The fanout of a shared plan tells every request that joined it.

func (f *progressFanout) each(do func(p *progressStream)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.streams {
		do(p)
	}
}

// Requesting implements host.Watcher.
func (f *progressFanout) Requesting(h string) func() {
	f.each(func(p *progressStream) { p.Requesting(h) })
	return func() {}
}

// Silent implements host.Watcher.
func (f *progressFanout) Silent(h string, d, limit time.Duration) {
	f.each(func(p *progressStream) { p.Silent(h, d, limit) })
}

// Retrying implements host.Watcher.
func (f *progressFanout) Retrying(what string, attempt, maxAttempts int, wait time.Duration, why error) {
	f.each(func(p *progressStream) { p.Retrying(what, attempt, maxAttempts, wait, why) })
}

// Received implements host.Watcher.
func (f *progressFanout) Received(h string, n int64) {
	f.each(func(p *progressStream) { p.Received(h, n) })
}

// Wrote implements host.Watcher.
func (f *progressFanout) Wrote(repo string, n int64) {
	f.each(func(p *progressStream) { p.Wrote(repo, n) })
}

var _ host.Watcher = (*progressFanout)(nil)
