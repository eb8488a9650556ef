package mirror

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the service's Prometheus series (GET /metrics), on a registry
// of the Server's own, so two servers in one process (tests) never share
// counters.
type metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.CounterVec   // route, code
	duration   *prometheus.HistogramVec // route
	upstream   *prometheus.CounterVec   // op, outcome
	leaseWaits *prometheus.CounterVec   // op
	waitTime   *prometheus.HistogramVec // op
	takeovers  prometheus.Counter
	cache      *prometheus.CounterVec // op, result (hit|miss)
	served     prometheus.Counter     // snapshot bytes sent
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reasonix_mirror_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "reasonix_mirror_request_duration_seconds", Help: "HTTP request duration by route.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"route"}),
		upstream: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reasonix_mirror_upstream_requests_total", Help: "Operations this replica made upstream (refs, resolve, reachable, fetch) by outcome.",
		}, []string{"op", "outcome"}),
		leaseWaits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reasonix_mirror_lease_waits_total", Help: "Times a request waited for another replica's upstream operation.",
		}, []string{"op"}),
		waitTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "reasonix_mirror_lease_wait_seconds", Help: "Time spent waiting for another replica's upstream operation.",
			Buckets: prometheus.ExponentialBuckets(0.01, 3, 9),
		}, []string{"op"}),
		takeovers: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "reasonix_mirror_lease_takeovers_total", Help: "Expired leases of other replicas taken over.",
		}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reasonix_mirror_cache_total", Help: "Requests answered from what the mirror stored (hit) or not (miss), by operation.",
		}, []string{"op", "result"}),
		served: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "reasonix_mirror_snapshot_bytes_total", Help: "Snapshot archive bytes sent to clients.",
		}),
	}
	reg.MustRegister(m.requests, m.duration, m.upstream, m.leaseWaits, m.waitTime, m.takeovers, m.cache, m.served,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Every series exists from the start, so a dashboard sees zeros rather
	// than gaps.
	for _, op := range []string{"refs", "resolve", "reachable", "fetch"} {
		m.leaseWaits.WithLabelValues(op)
		m.waitTime.WithLabelValues(op)
		m.cache.WithLabelValues(op, "hit")
		m.cache.WithLabelValues(op, "miss")
	}
	return m
}
