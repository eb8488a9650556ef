package mirror

import (
	"net/http"
	"strings"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
)

// metrics are the service's Prometheus series (GET /metrics), in a set of
// the Server's own, so two servers in one process (tests) never share
// counters. VictoriaMetrics/metrics rather than Prometheus' client_golang:
// the binary is one for every command, and client_golang's package
// initialisers (its protobuf descriptors, procfs, expvar) ran at the
// start of each, 2 to 4 ms of a 50 ms warm re-plan (issue 24).
type metrics struct {
	set                         *vm.Set
	requestBuckets, waitBuckets []float64 // upper bounds, in seconds
}

// Label values here are the mirror's own words (routes, operations,
// outcomes, status codes), never a client's, so they need no escaping.
// Labels are given in name order, as Prometheus writes them.
const (
	requestsTotal   = "reasonix_mirror_requests_total"           // code, route
	requestSeconds  = "reasonix_mirror_request_duration_seconds" // route
	upstreamTotal   = "reasonix_mirror_upstream_requests_total"  // op, outcome: ok, not_found, error
	leaseWaitsTotal = "reasonix_mirror_lease_waits_total"        // op: waits for another replica's operation
	leaseWaitSecs   = "reasonix_mirror_lease_wait_seconds"       // op
	takeoversTotal  = "reasonix_mirror_lease_takeovers_total"    // expired leases of other replicas taken over
	cacheTotal      = "reasonix_mirror_cache_total"              // op, result: answered from what the mirror stored (hit) or not (miss)
	servedBytes     = "reasonix_mirror_snapshot_bytes_total"     // snapshot archive bytes sent to clients
)

func newMetrics() *metrics {
	// The series' TYPE lines, which Prometheus reads to know a counter
	// from a histogram; the switch is the library's, for the process.
	vm.ExposeMetadata(true)
	m := &metrics{set: vm.NewSet(),
		requestBuckets: vm.ExponentialBuckets(0.0005, 4, 10), waitBuckets: vm.ExponentialBuckets(0.01, 3, 9)}
	// Every series exists from the start, so a dashboard sees zeros rather
	// than gaps.
	m.count(takeoversTotal)
	m.count(servedBytes)
	for _, op := range []string{"refs", "resolve", "reachable", "fetch"} {
		m.count(leaseWaitsTotal, "op", op)
		m.set.GetOrCreatePrometheusHistogramExt(series(leaseWaitSecs, "op", op), m.waitBuckets)
		m.count(cacheTotal, "op", op, "result", "hit")
		m.count(cacheTotal, "op", op, "result", "miss")
	}
	return m
}

// count is the counter of name with these label names and values.
func (m *metrics) count(name string, labels ...string) *vm.Counter {
	return m.set.GetOrCreateCounter(series(name, labels...))
}

func (m *metrics) request(route, code string, d time.Duration) {
	m.count(requestsTotal, "code", code, "route", route).Inc()
	m.set.GetOrCreatePrometheusHistogramExt(series(requestSeconds, "route", route), m.requestBuckets).Update(d.Seconds())
}

func (m *metrics) waited(op string, d time.Duration) {
	m.set.GetOrCreatePrometheusHistogramExt(series(leaseWaitSecs, "op", op), m.waitBuckets).Update(d.Seconds())
}

// ServeHTTP writes the series in Prometheus' text format, then the Go
// runtime's and the process's.
func (m *metrics) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	m.set.WritePrometheus(w)
	vm.WriteProcessMetrics(w)
}

// series is name{label="value",...} from alternating label names and values.
func series(name string, labels ...string) string {
	if len(labels) == 0 {
		return name
	}
	var b strings.Builder
	b.WriteString(name)
	sep := "{"
	for i := 0; i < len(labels); i += 2 {
		b.WriteString(sep + labels[i] + `="` + labels[i+1] + `"`)
		sep = ","
	}
	b.WriteString("}")
	return b.String()
}
