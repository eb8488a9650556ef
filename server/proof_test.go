package server

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recordingListener accepts connections on loopback and keeps every byte
// clients send, so a test can assert what a squatter received.
type recordingListener struct {
	net.Listener
	mu   sync.Mutex
	seen bytes.Buffer
}

func (l *recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &recordingConn{Conn: c, l: l}, nil
}

func (l *recordingListener) received() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen.String()
}

type recordingConn struct {
	net.Conn
	l *recordingListener
}

func (c *recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.l.mu.Lock()
	c.l.seen.Write(p[:n])
	c.l.mu.Unlock()
	return n, err
}

// relay forwards every connection it accepts to target, byte for byte, as
// a squatter relaying the proof request to the real daemon would.
func relay(t *testing.T, target string) *recordingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rl := &recordingListener{Listener: ln}
	t.Cleanup(func() { rl.Close() })
	go func() {
		for {
			c, err := rl.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	return rl
}

// squatter answers like a daemon that cannot prove anything: /healthz is
// {"ok":true}, and everything else too.
func squatter(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *recordingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rl := &recordingListener{Listener: ln}
	srv := &httptest.Server{Listener: rl, Config: &http.Server{Handler: http.HandlerFunc(answer)}}
	srv.Start()
	t.Cleanup(srv.Close)
	return rl
}

// TestDaemonProof: studio's client sends the token only over a connection
// to a listener that proved it holds it, for the address it dialed.
func TestDaemonProof(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	addr := strings.TrimPrefix(e.ts.URL, "http://")

	// The real daemon proves itself, and the proven connection carries
	// the token's requests.
	d, err := ProveDaemon(context.Background(), addr, testToken)
	if err != nil {
		t.Fatalf("the real daemon: %v", err)
	}
	if d.Addr != addr {
		t.Fatalf("proven address %q, dialed %q", d.Addr, addr)
	}
	for range 2 {
		req, _ := http.NewRequest("POST", "http://"+d.Addr+"/auth/code", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := d.Client.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("a code over the proven connection: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	d.Close()
	req, _ := http.NewRequest("GET", "http://"+d.Addr+"/healthz", nil)
	if _, err := d.Client.Do(req); err == nil || !strings.Contains(err.Error(), "not dialing again") {
		t.Fatalf("a closed proven connection dialed again: %v", err)
	}

	// Another home's token gets no proof from this daemon.
	if _, err := ProveDaemon(context.Background(), addr, strings.Repeat("f", 64)); !errors.Is(err, ErrNotProven) {
		t.Fatalf("another token: %v", err)
	}

	squatters := map[string]func(w http.ResponseWriter, r *http.Request){
		"answers healthz only": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/healthz" {
				writeJSON(w, 200, map[string]any{"ok": true})
				return
			}
			writeError(w, 404, CodeNoRoute, "no")
		},
		"answers anything": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 200, map[string]any{"ok": true, "proof": strings.Repeat("00", 32), "code": "x"})
		},
		"redirects to the daemon": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, e.ts.URL+r.URL.Path, http.StatusTemporaryRedirect)
		},
	}
	for name, answer := range squatters {
		t.Run(name, func(t *testing.T) {
			sq := squatter(t, answer)
			_, err := ProveDaemon(context.Background(), sq.Addr().String(), testToken)
			if !errors.Is(err, ErrNotProven) {
				t.Fatalf("a squatter was taken for the daemon: %v", err)
			}
			if got := sq.received(); strings.Contains(got, testToken) || !strings.Contains(got, "/auth/proof") {
				t.Fatalf("the squatter received: %q", got)
			}
		})
	}

	// A squatter that relays the proof request to the real daemon gets the
	// real daemon's proof, for the real daemon's address: refused.
	rl := relay(t, addr)
	if _, err := ProveDaemon(context.Background(), rl.Addr().String(), testToken); !errors.Is(err, ErrNotProven) {
		t.Fatalf("a relay was taken for the daemon: %v", err)
	}
	if got := rl.received(); strings.Contains(got, testToken) || !strings.Contains(got, "/auth/proof") {
		t.Fatalf("the relay received: %q", got)
	}

	// Nothing listening is not a proof failure: studio starts a daemon.
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	if _, err := ProveDaemon(context.Background(), deadAddr, testToken); err == nil || errors.Is(err, ErrNotProven) {
		t.Fatalf("nothing listening: %v", err)
	}
}

// TestProofRoute: the proof is public, binds the nonce and the address the
// connection reached, and refuses a malformed nonce.
func TestProofRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	addr := strings.TrimPrefix(e.ts.URL, "http://")
	nonce := strings.Repeat("ab", nonceBytes)
	r := e.do("POST", "/auth/proof", map[string]string{"nonce": nonce}, hdr{"Authorization": ""})
	if r.status != 200 {
		t.Fatalf("proof: %d %s", r.status, r.body)
	}
	v := r.json(t)
	want := hex.EncodeToString(ProofMAC(testToken, addr, nonce))
	if v["proof"] != want || v["addr"] != addr {
		t.Fatalf("proof answer %s, want proof %s for %s", r.body, want, addr)
	}
	if strings.Contains(string(r.body), testToken) {
		t.Fatal("the proof answer holds the token")
	}
	for _, bad := range []string{"", "short", strings.Repeat("AB", nonceBytes), strings.Repeat("ab", nonceBytes+1), strings.Repeat("zz", nonceBytes)} {
		e.do("POST", "/auth/proof", map[string]string{"nonce": bad}, hdr{"Authorization": ""}).wantError(t, 400, CodeBadRequest)
	}
	// A proof is for one address and one nonce.
	if bytes.Equal(ProofMAC(testToken, addr, nonce), ProofMAC(testToken, "127.0.0.1:1", nonce)) ||
		bytes.Equal(ProofMAC(testToken, addr, nonce), ProofMAC(testToken, addr, strings.Repeat("cd", nonceBytes))) {
		t.Fatal("the proof does not bind the address and the nonce")
	}
}
