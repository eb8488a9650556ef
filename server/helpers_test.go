package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/lockfile"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/store"
)

const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// env is one daemon over one home, served by httptest on 127.0.0.1.
type env struct {
	t    *testing.T
	home installer.Home
	db   *cache.DB
	in   *installer.Installer
	srv  *Server
	ts   *httptest.Server
	log  *syncBuffer

	hookMu sync.Mutex
	hook   func(step string)
}

type envOpts struct {
	home string             // default: a fresh temp dir
	gh   *fakegithub.Server // remote sources go here when set
	// github, when set instead, is where github.com's git and API go (a
	// host that misbehaves), and timeout how long a silent host is waited
	// for.
	github  string
	timeout time.Duration
	now     func() time.Time  // the sessions' clock; default time.Now
	project *lockfile.Project // the project the daemon serves
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	if o.home == "" {
		o.home = filepath.Join(t.TempDir(), "home")
	}
	e := &env{t: t, home: installer.Home{Dir: o.home}, log: &syncBuffer{}}
	st, err := store.Open(e.home.StoreDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.db, err = cache.OpenWith(context.Background(), e.home.CachePath(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hcfg := resolver.HostConfig{}
	switch {
	case o.gh != nil:
		hcfg.GitHubURL, hcfg.APIURL = o.gh.URL, o.gh.APIURL
	case o.github != "":
		hcfg.GitHubURL, hcfg.APIURL = o.github, o.github+"/api/v3"
		hcfg.Net.Timeout, hcfg.Net.Retries = o.timeout, 1
	default:
		// Nothing here may reach the internet.
		hcfg.GitHubURL, hcfg.APIURL = "http://127.0.0.1:1", "http://127.0.0.1:1/api/v3"
	}
	hosts, err := resolver.NewHosts(hcfg)
	if err != nil {
		t.Fatal(err)
	}
	rcfg := resolver.Config{Store: st, Cache: e.db, Hosts: hosts}
	e.in = installer.New(installer.Config{
		Home: e.home, Sources: resolver.New(rcfg), Cache: e.db, NoWorkingDir: true,
		StepHook: func(step string) {
			e.hookMu.Lock()
			h := e.hook
			e.hookMu.Unlock()
			if h != nil {
				h(step)
			}
		},
	})
	e.srv, err = New(Config{Installer: e.in, Token: testToken, Log: NewLogger(e.log, -4), Now: o.now, Project: o.project})
	if err != nil {
		t.Fatal(err)
	}
	e.ts = httptest.NewServer(e.srv.Handler())
	t.Cleanup(e.close)
	return e
}

// close stops the daemon and closes its cache, as a process exit would.
func (e *env) close() {
	if e.ts != nil {
		e.ts.Close()
		e.srv.Close()
		e.db.Close()
		e.ts = nil
	}
}

func (e *env) setHook(h func(string)) {
	e.hookMu.Lock()
	e.hook = h
	e.hookMu.Unlock()
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("status %d: body is not a JSON object (%v): %q", r.status, err, r.body)
	}
	return v
}

func (r reply) response(t *testing.T) *installer.Response {
	t.Helper()
	var v installer.Response
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("status %d: body is not a response (%v): %q", r.status, err, r.body)
	}
	return &v
}

// wantError asserts an error answer: status, {ok:false, error, errorCode}.
func (r reply) wantError(t *testing.T, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type = %q, want JSON; body %s", ct, r.body)
	}
	v := r.json(t)
	if v["ok"] != false || v["error"] == "" || v["error"] == nil || v["errorCode"] != code {
		t.Fatalf("error body = %s, want ok:false, an error and errorCode %q", r.body, code)
	}
}

type hdr map[string]string

// do sends a request with the token (unless hdr sets Authorization, "" for
// none) and returns the answer.
func (e *env) do(method, path string, body any, h hdr) reply {
	e.t.Helper()
	return doURL(e.t, e.ts.URL, method, path, body, h)
}

func doURL(t testing.TB, base, method, path string, body any, h hdr) reply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	case io.Reader:
		rd = b
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	for k, v := range h {
		switch {
		case strings.EqualFold(k, "Host"):
			req.Host = v
		case v == "":
			req.Header.Del(k)
		default:
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: data}
}

func (e *env) registryBytes() []byte {
	e.t.Helper()
	b, err := os.ReadFile(e.home.RegistryPath())
	if err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
	return b
}

// plan plans src through the API and returns the response.
func (e *env) plan(req installer.Request) *installer.Response {
	e.t.Helper()
	r := e.do("POST", "/plugins/plan", req, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("plan %s: %d %s", req.Source, r.status, r.body)
	}
	return r.response(e.t)
}

// approving is the body of POST /plugins/install that approves planID
// for req.
func approving(t testing.TB, req installer.Request, planID string) installBody {
	t.Helper()
	id, err := installer.ParsePlanID(planID)
	if err != nil {
		t.Fatal(err)
	}
	return installBody{wireRequest: wireRequest{Request: req, Source: req.Source.String()}, PlanID: id}
}

// installByPlanID approves planID through the API.
func (e *env) installByPlanID(planID string) reply {
	e.t.Helper()
	return e.do("POST", "/plugins/install", map[string]string{"planId": planID}, nil)
}

// writeTree writes files (path → content) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// plugin writes a small Claude-format plugin named name and returns its
// (absolute) folder. The MCP server carries a credential literal, so
// export has something to strip.
func plugin(t testing.TB, parent, name, version string) string {
	t.Helper()
	return writeTree(t, filepath.Join(parent, name), map[string]string{
		".claude-plugin/plugin.json": `{"name":"` + name + `","version":"` + version + `","description":"test plugin"}`,
		"skills/hello/SKILL.md":      "---\nname: hello\ndescription: Say hello\n---\nHello " + version + ".\n",
		"commands/wave.md":           "---\ndescription: Wave\nargument-hint: <who>\n---\nWave at $1\n",
		".mcp.json":                  `{"mcpServers":{"weather":{"command":"weather-mcp","env":{"WEATHER_API_KEY":"sk-live-not-a-real-key-123456"}}}}`,
	})
}

// syncBuffer is a sink safe for concurrent writers (handlers' logs,
// Chromium's two output pipes).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testClock is a settable clock for session and code expiry.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock { return &testClock{t: time.Now()} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Close cancels in-flight work, for servers tests use through Handler
// only (Serve does it itself when it stops).
func (s *Server) Close() {
	s.drain()
	s.stop()
}

// mustSource is source.FromText for a source a test names itself: it
// panics on an error, as regexp.MustCompile does.
func mustSource(text string) source.Source {
	s, err := source.FromText(text)
	if err != nil {
		panic(err)
	}
	return s
}
