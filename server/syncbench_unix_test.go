//go:build unix

package server

import (
	"net/http"
	"syscall"
	"testing"
	"time"

	"reasonix.io/plugind/internal/bulkmarket"
	"reasonix.io/plugind/internal/fakegithub"
)

// BenchmarkSync300 measures SPEC §16's bar through the daemon: a
// sync --dry-run of a 300-plugin lock (300 entries over 50 repositories)
// against a warm cache, online (one conditional request per branch) and
// offline (none). Run with -benchtime=20x; it logs the requests made.
func BenchmarkSync300(b *testing.B) {
	gh := fakegithub.New(b)
	m, err := bulkmarket.Build(gh, bulkmarket.Shape{Entries: 300, Repos: 50})
	if err != nil {
		b.Fatal(err)
	}
	lock, home := lockOf(b, gh, m)
	_, url := daemonOver(b, gh, home)
	for _, offline := range []bool{false, true} {
		name := map[bool]string{false: "online", true: "offline"}[offline]
		b.Run(name, func(b *testing.B) {
			body := syncBody{Lock: lock, Offline: offline}
			doURL(b, url, "POST", "/sync", body, nil) // warms the daemon's decoded state
			gh.ResetCounts()
			// CPU time too: on a shared machine the wall time says as much
			// about the neighbours (the daemon and the fake run in this
			// process; the fake makes no request here).
			cpu0 := processCPU(b)
			start := time.Now()
			for b.Loop() {
				r := doURL(b, url, "POST", "/sync", body, nil)
				if r.status != http.StatusOK {
					b.Fatalf("POST /sync: %d %s", r.status, r.body)
				}
			}
			b.ReportMetric(float64(gh.Counts().Total)/float64(b.N), "requests/op")
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
			b.Logf("%s: %d syncs, %v each", name, b.N, time.Since(start)/time.Duration(b.N))
		})
	}
}

// processCPU is the CPU time this process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
