package server

import (
	"time"

	"reasonix.io/plugind/resolver"
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

// reporter turns what the resolver reports (resolver.Progress) and what
// its network layer reports (host.Watcher) into changes of a progress
// state: one stream's (progressStream.update), or a shared plan's
// (progressFanout.update), which passes each change on to every stream
// that joined it.
type reporter func(change func(*ProgressEvent))

var (
	_ resolver.Progress = reporter(nil)
	_ host.Watcher      = reporter(nil)
)

// Start implements resolver.Progress.
func (r reporter) Start(n int) {
	r(func(e *ProgressEvent) { e.Phase, e.Total = "resolving", n })
}

// Resolved implements resolver.Progress.
func (r reporter) Resolved(entries, repos int, bytes int64) {
	r(func(e *ProgressEvent) {
		// Reports race each other from the fetch goroutines: never go back.
		e.Entries, e.Repos, e.Bytes = max(e.Entries, entries), max(e.Repos, repos), max(e.Bytes, bytes)
	})
}

// Finish implements resolver.Progress.
func (r reporter) Finish() { r(resolvingDone) }

// resolvingDone is the phase after resolving: applying for an install.
func resolvingDone(e *ProgressEvent) {
	e.Phase = "resolved"
	if e.install {
		e.Phase = "applying"
	}
}

// Requesting implements host.Watcher.
func (r reporter) Requesting(h string) func() {
	r(func(e *ProgressEvent) { e.Host, e.SilentMs, e.LimitMs = h, 0, 0 })
	return func() {}
}

// Silent implements host.Watcher.
func (r reporter) Silent(h string, d, limit time.Duration) {
	r(func(e *ProgressEvent) { e.Host, e.SilentMs, e.LimitMs = h, d.Milliseconds(), limit.Milliseconds() })
}

// Retrying implements host.Watcher.
func (r reporter) Retrying(what string, attempt, maxAttempts int, wait time.Duration, why error) {
	reason := ""
	if why != nil {
		reason = secrets.Mask(why.Error())
	}
	r(func(e *ProgressEvent) {
		e.RetryWhat, e.RetryAttempt, e.RetryMax, e.RetryWaitMs, e.RetryWhy = what, attempt, maxAttempts, wait.Milliseconds(), reason
		e.SilentMs, e.LimitMs = 0, 0
	})
}

// Received implements host.Watcher: the host answers, so a retry is over.
func (r reporter) Received(h string, n int64) {
	r(func(e *ProgressEvent) {
		e.Host, e.SilentMs, e.LimitMs, e.Received = h, 0, 0, n
		e.RetryWhat, e.RetryAttempt, e.RetryMax, e.RetryWaitMs, e.RetryWhy = "", 0, 0, 0, ""
	})
}

// Wrote implements host.Watcher.
func (r reporter) Wrote(_ string, n int64) {
	r(func(e *ProgressEvent) { e.Written = n })
}
