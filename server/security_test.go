package server

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestRequestChecks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(e.ts.URL, "http://"))
	big := bytes.Repeat([]byte(" "), 2<<20)
	cases := []struct {
		name, method, path string
		h                  hdr
		body               any
		status             int
		code               string // "" for a success
	}{
		{"no token", "GET", "/plugins", hdr{"Authorization": ""}, nil, 401, CodeUnauthorized},
		{"wrong token", "GET", "/plugins", hdr{"Authorization": "Bearer " + strings.Repeat("0", 64)}, nil, 401, CodeUnauthorized},
		{"token prefix", "GET", "/plugins", hdr{"Authorization": "Bearer " + testToken[:32]}, nil, 401, CodeUnauthorized},
		{"token not bearer", "GET", "/plugins", hdr{"Authorization": "Basic " + testToken}, nil, 401, CodeUnauthorized},
		{"bare token", "GET", "/plugins", hdr{"Authorization": testToken}, nil, 401, CodeUnauthorized},
		{"no token on a mutation", "DELETE", "/plugins/x", hdr{"Authorization": ""}, nil, 401, CodeUnauthorized},
		{"no token on an unknown route", "GET", "/nope", hdr{"Authorization": ""}, nil, 401, CodeUnauthorized},
		{"scheme case", "GET", "/plugins", hdr{"Authorization": "bearer " + testToken}, nil, 200, ""},
		{"healthz without token", "GET", "/healthz", hdr{"Authorization": ""}, nil, 200, ""},
		{"host evil", "GET", "/plugins", hdr{"Host": "evil.example"}, nil, 421, CodeForbidden},
		{"host evil with port", "GET", "/plugins", hdr{"Host": "evil.example:" + port}, nil, 421, CodeForbidden},
		{"host evil on healthz", "GET", "/healthz", hdr{"Host": "evil.example"}, nil, 421, CodeForbidden},
		{"host localhost.evil", "GET", "/plugins", hdr{"Host": "localhost.evil.example"}, nil, 421, CodeForbidden},
		{"host lan ip", "GET", "/plugins", hdr{"Host": "192.168.1.10:" + port}, nil, 421, CodeForbidden},
		{"host localhost", "GET", "/plugins", hdr{"Host": "localhost:" + port}, nil, 200, ""},
		{"host LOCALHOST", "GET", "/plugins", hdr{"Host": "LOCALHOST"}, nil, 200, ""},
		{"host ipv6", "GET", "/plugins", hdr{"Host": "[::1]:" + port}, nil, 200, ""},
		{"origin evil", "GET", "/plugins", hdr{"Origin": "https://evil.example"}, nil, 403, CodeForbidden},
		{"origin evil on a mutation", "POST", "/plugins/plan", hdr{"Origin": "https://evil.example"}, `{"source":"/x"}`, 403, CodeForbidden},
		{"origin null", "GET", "/plugins", hdr{"Origin": "null"}, nil, 403, CodeForbidden},
		{"origin rebinding", "GET", "/plugins", hdr{"Origin": "http://localhost.evil.example"}, nil, 403, CodeForbidden},
		{"origin loopback", "GET", "/plugins", hdr{"Origin": "http://localhost:5173"}, nil, 200, ""},
		{"origin 127", "GET", "/plugins", hdr{"Origin": "http://127.0.0.1:" + port}, nil, 200, ""},
		{"2 MiB body", "POST", "/plugins/plan", nil, big, 413, CodeTooLarge},
		{"2 MiB chunked body", "POST", "/plugins/plan", nil, io.MultiReader(strings.NewReader(`{"source":"`), bytes.NewReader(big)), 413, CodeTooLarge},
		{"2 MiB body on enabled", "POST", "/plugins/enabled", nil, big, 413, CodeTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, c.body, c.h)
			if c.code == "" {
				if r.status != c.status {
					t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
				}
				return
			}
			r.wantError(t, c.status, c.code)
			if c.status == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
			if r.header.Get("Access-Control-Allow-Origin") != "" {
				t.Fatal("CORS header sent")
			}
		})
	}
	logs := e.log.String()
	if strings.Contains(logs, testToken) || strings.Contains(logs, testToken[:32]) {
		t.Fatal("the token reached the log")
	}
	for _, want := range []string{`"method":"GET"`, `"path":"/plugins"`, `"status":401`, `"status":421`, `"duration_ms"`} {
		if !strings.Contains(logs, want) {
			t.Fatalf("log lacks %s:\n%s", want, logs)
		}
	}
}

func TestCheckAddr(t *testing.T) {
	t.Parallel()
	cases := []struct {
		addr        string
		allowRemote bool
		remote, ok  bool
	}{
		{"127.0.0.1:7878", false, false, true},
		{"127.0.0.1:0", false, false, true},
		{"localhost:7878", false, false, true},
		{"[::1]:7878", false, false, true},
		{"127.1.2.3:1", false, false, true},
		{"0.0.0.0:7878", false, true, false},
		{":7878", false, true, false},
		{"192.168.1.2:7878", false, true, false},
		{"example.com:7878", false, true, false},
		{"0.0.0.0:7878", true, true, true},
		{":7878", true, true, true},
		{"127.0.0.1", false, false, false},
	}
	for _, c := range cases {
		remote, err := CheckAddr(c.addr, c.allowRemote)
		if (err == nil) != c.ok || (err == nil && remote != c.remote) {
			t.Errorf("CheckAddr(%q, %v) = %v, %v", c.addr, c.allowRemote, remote, err)
		}
		if err != nil && c.remote && !strings.Contains(err.Error(), "--allow-remote") {
			t.Errorf("CheckAddr(%q): error does not name --allow-remote: %v", c.addr, err)
		}
	}
}

func TestAllowRemoteAcceptsIPLiteralsOnly(t *testing.T) {
	t.Parallel()
	s, err := New(Config{Installer: newEnv(t, envOpts{}).in, Token: testToken, AllowRemote: true})
	if err != nil {
		t.Fatal(err)
	}
	h := s.checkHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	for host, want := range map[string]int{"192.168.1.10:7878": 200, "[fe80::1]:7878": 200, "localhost": 200, "evil.example": 421, "nas.local:7878": 421} {
		rec := httptest.NewRecorder()
		req, _ := http.NewRequest("GET", "http://x/plugins", nil)
		req.Host = host
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %s: %d, want %d", host, rec.Code, want)
		}
	}
}

func TestToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "home", "serve.token")
	tok, created, err := LoadOrCreateToken(path)
	if err != nil || !created || len(tok) != 64 {
		t.Fatalf("create: %q %v %v", tok, created, err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode: %v %v", info.Mode(), err)
	}
	again, created, err := LoadOrCreateToken(path)
	if err != nil || created || again != tok {
		t.Fatalf("reload: %q %v %v", again, created, err)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("token dir holds %d entries, want only serve.token", len(ents))
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateToken(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("world-readable token accepted: %v", err)
	}
	short := filepath.Join(dir, "short.token")
	if err := os.WriteFile(short, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateToken(short); err == nil {
		t.Fatal("a 3-character token was accepted")
	}

	// Two daemons starting at once on a fresh home agree on one token.
	race := filepath.Join(dir, "race", "serve.token")
	var wg sync.WaitGroup
	toks := make([]string, 8)
	for i := range toks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, _, err := LoadOrCreateToken(race)
			if err != nil {
				t.Error(err)
			}
			toks[i] = tok
		}()
	}
	wg.Wait()
	for _, tok := range toks {
		if tok != toks[0] {
			t.Fatalf("concurrent starts disagree on the token: %v", toks)
		}
	}
}
