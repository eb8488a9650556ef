// Command load is the daemon's load test (issue 5; not part of go test):
// it starts an in-process `reasonix serve` on loopback over a temporary
// home holding -plugins installed plugins (installed from generated local
// folders), then runs -readers concurrent GET /plugins clients and
// -planners concurrent POST /plugins/plan clients for -duration, and
// reports requests, errors, throughput and latency percentiles. It exits 1
// on any error.
//
//	go run ./bench/load [-plugins 100] [-readers 200] [-planners 20] [-duration 10s]
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"reasonix.io/plugind/app"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/server"
	"reasonix.io/plugind/source"
)

func main() {
	plugins := flag.Int("plugins", 100, "installed plugins")
	readers := flag.Int("readers", 200, "concurrent GET /plugins clients")
	planners := flag.Int("planners", 20, "concurrent POST /plugins/plan clients")
	duration := flag.Duration("duration", 10*time.Second, "how long the clients run")
	logRequests := flag.Bool("log", false, "log every request to stderr")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the load phase to this file")
	flag.Parse()
	profile = *cpuProfile
	if err := run(*plugins, *readers, *planners, *duration, *logRequests); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(nPlugins, nReaders, nPlanners int, dur time.Duration, logRequests bool) error {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "reasonix-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// Wired as the daemon is (app.Open), offline: every plan is of a
	// local folder.
	env := map[string]string{"REASONIX_HOME": filepath.Join(tmp, "home"), "REASONIX_OFFLINE": "1"}
	a, err := app.Open(ctx, app.OpenOptions{Getenv: func(k string) string { return env[k] }, Daemon: true})
	if err != nil {
		return err
	}
	defer a.Close()
	if a.Store == nil || a.Cache == nil {
		return fmt.Errorf("home %s: %v %v", env["REASONIX_HOME"], a.StoreErr, a.CacheErr)
	}
	in := a.Installer

	start := time.Now()
	for i := range nPlugins {
		src, err := writePlugin(filepath.Join(tmp, "src"), fmt.Sprintf("plugin-%03d", i))
		if err != nil {
			return err
		}
		if _, err := in.Install(ctx, installer.Request{Source: source.Local(src)}, installer.Approval{Yes: true}); err != nil {
			return fmt.Errorf("install %s: %w", src, err)
		}
	}
	planSources := make([]string, nPlanners)
	for i := range planSources {
		if planSources[i], err = writePlugin(filepath.Join(tmp, "plan"), fmt.Sprintf("candidate-%02d", i)); err != nil {
			return err
		}
	}
	fmt.Printf("setup: %d plugins installed in %s\n", nPlugins, time.Since(start).Round(time.Millisecond))

	var b [32]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	logger := slog.New(slog.DiscardHandler)
	if logRequests {
		logger = server.NewLogger(os.Stderr, slog.LevelInfo)
	}
	srv, err := server.New(server.Config{Installer: in, Token: token, Log: logger})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serveCtx, ln) }()
	base := "http://" + ln.Addr().String()

	client := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns: nReaders + nPlanners, MaxIdleConnsPerHost: nReaders + nPlanners,
			IdleConnTimeout: time.Minute,
		},
	}
	c := &clients{http: client, base: base, token: token}

	// The listing must hold every plugin before the clock starts.
	body, status, err := c.get("/plugins")
	if err != nil || status != 200 {
		return fmt.Errorf("warm-up GET /plugins: %d %v", status, err)
	}
	var list struct {
		Plugins []json.RawMessage `json:"plugins"`
	}
	if err := json.Unmarshal(body, &list); err != nil || len(list.Plugins) != nPlugins {
		return fmt.Errorf("warm-up GET /plugins lists %d plugins (%v), want %d", len(list.Plugins), err, nPlugins)
	}
	fmt.Printf("GET /plugins body: %d bytes\n", len(body))
	fmt.Printf("load: %d GET /plugins clients + %d POST /plugins/plan clients for %s on %s (GOMAXPROCS %d)\n",
		nReaders, nPlanners, dur, base, runtime.GOMAXPROCS(0))

	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	deadline := time.Now().Add(dur)
	reads := make([]*stats, nReaders)
	plans := make([]*stats, nPlanners)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range reads {
		reads[i] = &stats{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				t := time.Now()
				n, status, err := c.discard("/plugins")
				reads[i].add(time.Since(t), err == nil && status == 200 && n == int64(len(body)), status, err)
			}
		}()
	}
	for i := range plans {
		plans[i] = &stats{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := installer.Request{Source: source.Local(planSources[i])}
			for time.Now().Before(deadline) {
				t := time.Now()
				status, err := c.plan(req)
				plans[i].add(time.Since(t), err == nil && status == 200, status, err)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	stop()
	if err := <-served; err != nil {
		return err
	}

	r, p := merge(reads), merge(plans)
	all := merge([]*stats{r, p})
	fmt.Printf("\n%-18s %9s %7s %10s %9s %9s %9s %9s\n", "route", "requests", "errors", "req/s", "p50", "p90", "p99", "max")
	for _, row := range []struct {
		name string
		s    *stats
	}{{"GET /plugins", r}, {"POST /plugins/plan", p}, {"total", all}} {
		row.s.print(row.name, elapsed)
	}
	for _, e := range all.errSamples {
		fmt.Println("error:", e)
	}
	if all.errors > 0 {
		return fmt.Errorf("%d errors", all.errors)
	}
	return nil
}

var profile string

type clients struct {
	http  *http.Client
	base  string
	token string
}

func (c *clients) get(path string) ([]byte, int, error) {
	req, err := http.NewRequest("GET", c.base+path, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return body, resp.StatusCode, err
}

// discard is get without keeping the body (the listing does not change
// during the run, so its length is checked against the warm-up's).
func (c *clients) discard(path string) (int64, int, error) {
	req, err := http.NewRequest("GET", c.base+path, nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return n, resp.StatusCode, err
}

func (c *clients) plan(r installer.Request) (int, error) {
	data, _ := json.Marshal(r)
	req, err := http.NewRequest("POST", c.base+"/plugins/plan", bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out installer.Response
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode == 200 && (!out.OK || out.PlanID == "") {
		return resp.StatusCode, errors.New("plan answered 200 without a planId")
	}
	return resp.StatusCode, nil
}

// stats is one client's (or, merged, one route's) record.
type stats struct {
	lat        []time.Duration
	errors     int
	errSamples []string
}

func (s *stats) add(d time.Duration, ok bool, status int, err error) {
	s.lat = append(s.lat, d)
	if !ok {
		s.errors++
		if len(s.errSamples) < 3 {
			s.errSamples = append(s.errSamples, fmt.Sprintf("status %d: %v", status, err))
		}
	}
}

func merge(parts []*stats) *stats {
	out := &stats{}
	for _, p := range parts {
		out.lat = append(out.lat, p.lat...)
		out.errors += p.errors
		for _, e := range p.errSamples {
			if len(out.errSamples) < 5 {
				out.errSamples = append(out.errSamples, e)
			}
		}
	}
	slices.Sort(out.lat)
	return out
}

func (s *stats) pct(p float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	i := int(p * float64(len(s.lat)-1))
	return s.lat[i]
}

func (s *stats) print(name string, elapsed time.Duration) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }
	fmt.Printf("%-18s %9d %7d %10.0f %9s %9s %9s %9s\n", name, len(s.lat), s.errors,
		float64(len(s.lat))/elapsed.Seconds(), ms(s.pct(0.50)), ms(s.pct(0.90)), ms(s.pct(0.99)), ms(s.pct(1)))
}

// writePlugin generates a small Claude-format plugin: two skills, a
// command, an agent, a hook and an MCP server.
func writePlugin(parent, name string) (string, error) {
	dir := filepath.Join(parent, name)
	files := map[string]string{
		".claude-plugin/plugin.json": `{"name":"` + name + `","version":"1.0.0","description":"generated for the load test"}`,
		"skills/alpha/SKILL.md":      "---\nname: alpha\ndescription: First skill of " + name + "\nallowed-tools: Read, Grep\n---\nDo alpha things.\n",
		"skills/beta/SKILL.md":       "---\nname: beta\ndescription: Second skill of " + name + "\n---\nDo beta things.\n",
		"commands/run.md":            "---\ndescription: Run it\nargument-hint: <target>\n---\nRun $1\n",
		"agents/helper.md":           "---\nname: helper\ndescription: Helps\n---\nYou help.\n",
		"hooks/hooks.json":           `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"echo hi"}]}]}}`,
		".mcp.json":                  `{"mcpServers":{"svc":{"command":"svc-mcp","args":["--stdio"]}}}`,
	}
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}
