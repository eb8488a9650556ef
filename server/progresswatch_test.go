package server

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestProgressWatch: what the network layer reports reaches every stream
// of a shared plan as the page reads it: the silent host and its limit, a
// retry (with any credential in its reason masked) that an answer clears,
// and the bytes received.
func TestProgressWatch(t *testing.T) {
	t.Parallel()
	a, b := newProgressStream(time.Now()), newProgressStream(time.Now())
	fan := &progressFanout{}
	fan.add(a)
	fan.add(b)
	report := reporter(fan.update)

	steps := []struct {
		name   string
		report func()
		want   Waiting
	}{
		{"requesting", func() { report.Requesting("api.github.com")() }, Waiting{Host: "api.github.com"}},
		{"silent", func() { report.Silent("api.github.com", 3*time.Second, 30*time.Second) },
			Waiting{Host: "api.github.com", SilentMs: 3000, LimitMs: 30000}},
		{"retrying", func() {
			report.Retrying("api.github.com", 2, 4, 4*time.Second, errors.New("GET https://x-access-token:ghp_abcdefghijklmnopqrstuvwxyz0123456789@api.github.com/: EOF"))
		}, Waiting{Host: "api.github.com", RetryWhat: "api.github.com", RetryAttempt: 2, RetryMax: 4, RetryWaitMs: 4000}},
		{"received", func() { report.Received("codeload.github.com", 2048) }, Waiting{Host: "codeload.github.com", Received: 2048}},
		{"wrote", func() { report.Wrote("github.com/acme/tools", 4096) }, Waiting{Host: "codeload.github.com", Received: 2048, Written: 4096}},
	}
	for _, s := range steps {
		s.report()
		for i, p := range []*progressStream{a, b} {
			got, _, _ := p.snapshot()
			w := got.Waiting
			why := w.RetryWhy
			w.RetryWhy = ""
			if w != s.want {
				t.Errorf("%s: stream %d has %+v, want %+v", s.name, i, w, s.want)
			}
			if s.name == "retrying" && (why == "" || strings.Contains(why, "ghp_abcdefghijklmnopqrstuvwxyz0123456789")) {
				t.Errorf("%s: the reason is %q: empty, or with the token in it", s.name, why)
			}
		}
	}
	// A stream begun again starts with nothing to wait on.
	a.begin(false)
	if got, _, _ := a.snapshot(); got.Waiting != (Waiting{}) {
		t.Errorf("a stream begun again remembers %+v", got.Waiting)
	}
}
