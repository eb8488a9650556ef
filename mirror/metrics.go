package mirror

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// metrics are the service's series, written in Prometheus' text format
// (GET /metrics), of the Server's own, so two servers in one process
// (tests) never share counters. They are written here, not with a client
// library: the binary is one for every command, and the libraries run
// work at every start (client_golang's protobuf descriptors and procfs,
// 1.5 to 2 ms of a 50 ms warm re-plan; VictoriaMetrics/metrics reads
// /proc/self/mountinfo and the cgroup's pressure files, logging to
// stderr when it cannot) for a page only the mirror serves (issue 24).
type metrics struct {
	mu     sync.Mutex
	series map[*family]map[string]*series // family → labels (`a="x",b="y"`) → value
	start  time.Time
}

// A family is a metric's name and help, and a histogram's buckets (upper
// bounds, in seconds; nil: a counter).
type family struct {
	name, help string
	buckets    []float64
}

type series struct {
	sum    float64  // a counter's value, a histogram's sum
	counts []uint64 // a histogram's observations by bucket, then above them
}

// Label values are the mirror's own words (routes, operations, outcomes,
// status codes), never a client's, so they need no escaping; labels are
// given in name order, as Prometheus writes them.
var (
	requestsTotal   = &family{"reasonix_mirror_requests_total", "HTTP requests by route and status code.", nil}
	requestSeconds  = &family{"reasonix_mirror_request_duration_seconds", "HTTP request duration by route.", []float64{0.0005, 0.002, 0.008, 0.032, 0.128, 0.512, 2.048, 8.192, 32.768, 131.072}}
	upstreamTotal   = &family{"reasonix_mirror_upstream_requests_total", "Operations this replica made upstream (refs, resolve, reachable, fetch) by outcome.", nil}
	leaseWaitsTotal = &family{"reasonix_mirror_lease_waits_total", "Times a request waited for another replica's upstream operation.", nil}
	leaseWaitSecs   = &family{"reasonix_mirror_lease_wait_seconds", "Time spent waiting for another replica's upstream operation.", []float64{0.01, 0.03, 0.09, 0.27, 0.81, 2.43, 7.29, 21.87, 65.61}}
	takeoversTotal  = &family{"reasonix_mirror_lease_takeovers_total", "Expired leases of other replicas taken over.", nil}
	cacheTotal      = &family{"reasonix_mirror_cache_total", "Requests answered from what the mirror stored (hit) or not (miss), by operation.", nil}
	servedBytes     = &family{"reasonix_mirror_snapshot_bytes_total", "Snapshot archive bytes sent to clients.", nil}
	logAppendsTotal = &family{"reasonix_mirror_log_appends_total", "Records this replica appended to the checksum log.", nil}
)

func newMetrics() *metrics {
	m := &metrics{series: map[*family]map[string]*series{}, start: time.Now()}
	// Every series exists from the start, so a dashboard sees zeros rather
	// than gaps.
	m.add(takeoversTotal, 0)
	m.add(servedBytes, 0)
	m.add(logAppendsTotal, 0)
	for _, op := range []string{"refs", "resolve", "reachable", "fetch"} {
		m.add(leaseWaitsTotal, 0, "op", op)
		m.add(leaseWaitSecs, -1, "op", op)
		m.add(cacheTotal, 0, "op", op, "result", "hit")
		m.add(cacheTotal, 0, "op", op, "result", "miss")
	}
	return m
}

// add adds v to f's counter of these label names and values, or observes
// it in f's histogram (v < 0: only makes the series).
func (m *metrics) add(f *family, v float64, labels ...string) {
	var parts []string
	for i := 0; i+1 < len(labels); i += 2 {
		parts = append(parts, labels[i]+`="`+labels[i+1]+`"`)
	}
	key := strings.Join(parts, ",")
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.series[f] == nil {
		m.series[f] = map[string]*series{}
	}
	s := m.series[f][key]
	if s == nil {
		s = &series{counts: make([]uint64, len(f.buckets)+1)}
		m.series[f][key] = s
	}
	switch {
	case f.buckets == nil:
		s.sum += v
	case v >= 0:
		i, _ := slices.BinarySearch(f.buckets, v)
		s.counts[i]++
		s.sum += v
	}
}

// ServeHTTP writes every series, then the Go runtime's and the process's
// main ones.
func (m *metrics) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	var b strings.Builder
	m.mu.Lock()
	for _, f := range slices.SortedFunc(maps.Keys(m.series), func(a, b *family) int { return strings.Compare(a.name, b.name) }) {
		kind := "counter"
		if f.buckets != nil {
			kind = "histogram"
		}
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, kind)
		for _, l := range slices.Sorted(maps.Keys(m.series[f])) {
			s, braced := m.series[f][l], ""
			if l != "" {
				braced = "{" + l + "}"
			}
			if f.buckets == nil {
				fmt.Fprintf(&b, "%s%s %s\n", f.name, braced, num(s.sum))
				continue
			}
			n := uint64(0)
			for i, c := range s.counts {
				n += c
				le := "+Inf"
				if i < len(f.buckets) {
					le = num(f.buckets[i])
				}
				fmt.Fprintf(&b, "%s_bucket{%s} %d\n", f.name, strings.TrimPrefix(l+`,le="`+le+`"`, ","), n)
			}
			fmt.Fprintf(&b, "%s_sum%s %s\n%s_count%s %d\n", f.name, braced, num(s.sum), f.name, braced, n)
		}
	}
	m.mu.Unlock()
	writeProcess(&b, m.start)
	_, _ = io.WriteString(w, b.String())
}

// num is v as Prometheus' own client writes it: 1234567, not 1.234567e+06.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// writeProcess writes the gauges an operator looks at first, under the
// names client_golang gives them.
func writeProcess(b *strings.Builder, start time.Time) {
	put := func(name, kind, help string, v any) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n%s %v\n", name, help, name, kind, name, v)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	put("go_goroutines", "gauge", "Number of goroutines that currently exist.", runtime.NumGoroutine())
	put("go_memstats_heap_alloc_bytes", "gauge", "Number of heap bytes allocated and currently in use.", ms.HeapAlloc)
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		put("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Seconds())
	}
	statm, _ := os.ReadFile("/proc/self/statm") // size, resident, … in pages
	if f := strings.Fields(string(statm)); len(f) > 1 {
		if pages, err := strconv.Atoi(f[1]); err == nil {
			put("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", pages*os.Getpagesize())
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		put("process_open_fds", "gauge", "Number of open file descriptors.", len(fds))
	}
	put("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", start.Unix())
}
