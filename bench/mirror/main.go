// Command mirror is the team mirror's benchmark (SPEC §15; not part of go
// test), on loopback against real engines (REASONIX_TEST_POSTGRES and
// REASONIX_TEST_S3, as `eval "$(.ci/engines start)"` sets them) and a fake
// GitHub:
//
//  1. the fleet: -machines machines (separate homes, each listing every
//     replica) bulk-install a -entries/-repos marketplace at once through
//     -fleet-replicas replicas; it reports the wall time and what upstream
//     saw (content fetches per repo@SHA, ref requests);
//  2. load: for 1 and 3 replicas, -workers concurrent clients run warm ref
//     lookups (GET /v1/resolve) and then warm snapshot downloads (GET
//     /v1/snapshot, body read whole) for -duration each; it reports
//     requests per second and p50/p99 latency.
//
// Everything it creates (a database, a bucket, temp dirs) is removed at the
// end. It exits 1 on any error.
//
//	eval "$(.ci/engines start)"; go run ./bench/mirror [-entries 300 -repos 50 -machines 20] [-duration 5s -workers 16]
//
// With -log-cost N it measures instead what the checksum log costs a cold
// install (logcost.go): N pairs of installs, with the log and without.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"reasonix.io/plugind/internal/bulkmarket"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/mirrortest"
	"reasonix.io/plugind/mirror"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/objects"
	"reasonix.io/plugind/mirror/policy"
)

type options struct {
	entries, repos, machines, fleetReplicas, workers int
	logCost                                          int
	log                                              bool
	duration                                         time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.entries, "entries", 300, "marketplace entries")
	flag.IntVar(&o.repos, "repos", 50, "repositories the entries live in")
	flag.IntVar(&o.machines, "machines", 20, "machines installing the marketplace at once")
	flag.IntVar(&o.fleetReplicas, "fleet-replicas", 3, "replicas serving the fleet")
	flag.IntVar(&o.workers, "workers", 16, "concurrent clients of the load phase")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "how long each load measurement runs (at most 60s)")
	flag.IntVar(&o.logCost, "log-cost", 0, "instead of the fleet and load: cold installs through one replica with the checksum log and without, this many pairs (see logcost.go)")
	flag.BoolVar(&o.log, "log", false, "the fleet's replicas serve the checksum log, every machine checks against it (through its first replica), and the log must hold each installed plugin once")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench/mirror:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if o.duration > time.Minute {
		o.duration = time.Minute
	}
	if err := run(o); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "bench/mirror:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	admin, endpoint := os.Getenv(mirrortest.EnvPostgres), os.Getenv(mirrortest.EnvS3)
	if admin == "" || endpoint == "" {
		return fmt.Errorf("%s and %s must name the engines: eval \"$(.ci/engines start)\"", mirrortest.EnvPostgres, mirrortest.EnvS3)
	}
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "reasonix-bench-mirror-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dsn, drop, err := mirrortest.NewDatabase(ctx, admin)
	if err != nil {
		return err
	}
	defer func() { _ = drop() }()
	bucket, remove, err := mirrortest.NewBucket(endpoint)
	if err != nil {
		return err
	}
	defer func() { _ = remove() }()
	eng := &mirrortest.Engines{DSN: dsn, Endpoint: endpoint, Bucket: bucket}
	if eng.DB, err = meta.Open(ctx, dsn); err != nil {
		return err
	}
	defer eng.DB.Close()
	if eng.Objects, err = objects.Open(ctx, objects.Config{Endpoint: endpoint, Bucket: bucket}); err != nil {
		return err
	}
	token, err := eng.DB.CreateToken(ctx, "bench", policy.Scopes{})
	if err != nil {
		return err
	}
	ghDir := filepath.Join(tmp, "gh")
	if err := os.Mkdir(ghDir, 0o755); err != nil {
		return err
	}
	gh, err := fakegithub.Start(ghDir)
	if err != nil {
		return err
	}
	defer gh.Close()
	t0 := time.Now()
	src, err := bulkmarket.Fleet(gh, "bulk", o.entries, o.repos)
	if err != nil {
		return err
	}
	fmt.Printf("fake GitHub: %d-entry marketplace over %d repositories built in %s\n", o.entries, o.repos, time.Since(t0).Round(time.Millisecond))
	up, err := mirrortest.Upstream(gh)
	if err != nil {
		return err
	}
	if o.logCost > 0 {
		return logCost(ctx, o, eng, up, token, gh, tmp)
	}
	var reps []*mirrortest.Replica
	defer func() {
		for _, r := range reps {
			_ = r.Stop()
		}
	}()
	var logKey *mirror.LogKey
	if o.log {
		keyPath := filepath.Join(tmp, "log.key")
		if _, err := mirror.CreateLogKey("bench.example.test", keyPath); err != nil {
			return err
		}
		if logKey, err = mirror.ReadLogKey(keyPath); err != nil {
			return err
		}
	}
	for i := range max(3, o.fleetReplicas) {
		r, err := eng.Start(mirrortest.Options{Upstream: up, ReplicaID: fmt.Sprintf("bench-%d", i), RefTTL: time.Hour, LogKey: logKey})
		if err != nil {
			return err
		}
		reps = append(reps, r)
	}

	gh.ResetCounts()
	installed, err := fleet(ctx, o, reps[:o.fleetReplicas], logKey, token, gh, src, tmp)
	if err != nil {
		return err
	}
	if o.log {
		n, err := mirrortest.FleetLogHoldsEachOnce(ctx, eng.DB, gh, "bulk", o.repos, installed)
		if err != nil {
			return err
		}
		fmt.Printf("checksum log: %d records, each installed plugin once, with the digest every machine installed\n", n)
	}
	if err := upstreamReport(gh, o.repos); err != nil {
		return err
	}

	targets, err := snapshotTargets(ctx, eng)
	if err != nil {
		return err
	}
	fmt.Printf("\nload: %d workers, %s per measurement, warm (everything already stored)\n", o.workers, o.duration)
	fmt.Printf("%-10s %-9s %9s %9s %9s %9s %7s\n", "op", "replicas", "requests", "req/s", "p50", "p99", "errors")
	for _, n := range []int{1, 3} {
		urls := make([]string, n)
		for i := range n {
			urls[i] = reps[i].URL
		}
		resolve := func(i int) string {
			return urls[i%len(urls)] + "/v1/resolve?repo=" + url.QueryEscape(src+".git")
		}
		if err := load(o, "ref", n, token, resolve); err != nil {
			return err
		}
		snap := func(i int) string {
			return urls[i%len(urls)] + targets[i%len(targets)]
		}
		if err := load(o, "snapshot", n, token, snap); err != nil {
			return err
		}
	}
	return nil
}

// fleet installs the marketplace on o.machines machines at once, each
// checking against the checksum log its first replica serves when logKey
// is set, and returns what they installed (name → digest).
func fleet(ctx context.Context, o options, reps []*mirrortest.Replica, logKey *mirror.LogKey, token string, gh *fakegithub.Server, src, tmp string) (map[string]string, error) {
	urls := make([]string, len(reps))
	for i, r := range reps {
		urls[i] = r.URL
	}
	errs := make([]error, o.machines)
	digests := make([]map[string]string, o.machines)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range o.machines {
		order := append(append([]string{}, urls[i%len(urls):]...), urls[:i%len(urls)]...)
		home := filepath.Join(tmp, fmt.Sprintf("home-%02d", i))
		var env map[string]string
		if logKey != nil {
			env = map[string]string{"REASONIX_CHECKSUM_LOG": logKey.Verifier + " " + order[0] + "/log"}
		}
		wg.Go(func() {
			d, err := mirrortest.InstallThroughMirror(ctx, home, order, token, env, gh, src)
			if err != nil {
				errs[i] = fmt.Errorf("machine %d: %w", i, err)
				return
			}
			digests[i] = d
		})
	}
	wg.Wait()
	wall := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, d := range digests {
		if len(d) != o.entries {
			return nil, fmt.Errorf("machine %d installed %d plugins, want %d", i, len(d), o.entries)
		}
		for name, dg := range d {
			if dg != digests[0][name] {
				return nil, fmt.Errorf("machine %d: %s has digest %s, machine 0 %s", i, name, dg, digests[0][name])
			}
		}
	}
	with := ""
	if logKey != nil {
		with = ", each checked against the checksum log"
	}
	fmt.Printf("fleet: %d machines installed the %d-entry / %d-repo marketplace through %d replicas in %s (same %d digests everywhere%s)\n",
		o.machines, o.entries, o.repos, len(reps), wall.Round(time.Millisecond), o.entries, with)
	return digests[0], nil
}

// upstreamReport prints what the fake GitHub saw during the fleet run and
// fails unless every repo@SHA was fetched once.
func upstreamReport(gh *fakegithub.Server, repos int) error {
	var content, refs, other int
	for r := range repos + 1 {
		name := fmt.Sprintf("repo%02d", r)
		if r == repos {
			name = "market"
		}
		c := gh.RepoCounts("bulk", name)
		if c.Content() != 1 {
			return fmt.Errorf("bulk/%s: %d content fetches, want 1", name, c.Content())
		}
		content += c.Content()
		refs += c.InfoRefs + c.APICommits + c.APIRefs
		other += c.Total - c.Content() - c.InfoRefs - c.APICommits - c.APIRefs
	}
	fmt.Printf("upstream: %d content fetches for %d repo@SHA, %d ref requests (git advertisements + REST ref lookups), %d other requests\n",
		content, repos+1, refs, other)
	return nil
}

// snapshotTargets are the snapshot requests the fleet made (the folders
// each repository's entries name), read back from the mirror's snapshots
// table.
func snapshotTargets(ctx context.Context, eng *mirrortest.Engines) ([]string, error) {
	db := eng.DB.SQLDB()
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT repo, sha, paths FROM snapshots WHERE paths <> '' ORDER BY created_at DESC LIMIT 1000`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var repo, sha, paths string
		if err := rows.Scan(&repo, &sha, &paths); err != nil {
			return nil, err
		}
		q := url.Values{"repo": {"https://" + repo + ".git"}, "sha": {sha}, "path": meta.SplitPaths(paths)}
		out = append(out, "/v1/snapshot?"+q.Encode())
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("the fleet left no snapshots to download")
	}
	slices.Sort(out)
	return out, nil
}

// load runs o.workers clients against target(i) for o.duration and prints
// the throughput and latency.
func load(o options, op string, replicas int, token string, target func(int) string) error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.workers * 2}}
	defer client.CloseIdleConnections()
	var next atomic.Int64
	var errs atomic.Int64
	var firstErr atomic.Value
	lat := make([][]time.Duration, o.workers)
	deadline := time.Now().Add(o.duration)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range o.workers {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				i := int(next.Add(1))
				req, _ := http.NewRequest(http.MethodGet, target(i), nil)
				req.Header.Set("Authorization", "Bearer "+token)
				t := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("%s: %s", op, resp.Status)
					}
				}
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				lat[w] = append(lat[w], time.Since(t))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[min(len(all)-1, int(p*float64(len(all))))]
	}
	fmt.Printf("%-10s %-9d %9d %9.0f %9s %9s %7d\n", op, replicas, len(all), float64(len(all))/elapsed.Seconds(),
		pct(0.50).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond), errs.Load())
	if e := firstErr.Load(); e != nil {
		return fmt.Errorf("%d failed requests, first: %v", errs.Load(), e)
	}
	return nil
}
