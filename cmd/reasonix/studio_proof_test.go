package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// tap is a loopback listener that keeps every byte its clients send: what
// a squatter on the daemon's old port would receive.
type tap struct {
	net.Listener
	mu   sync.Mutex
	seen bytes.Buffer
}

func (l *tap) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &tapConn{Conn: c, l: l}, nil
}

func (l *tap) received() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen.String()
}

type tapConn struct {
	net.Conn
	l *tap
}

func (c *tapConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.l.mu.Lock()
	c.l.seen.Write(p[:n])
	c.l.mu.Unlock()
	return n, err
}

// listenOn listens on addr, retrying while the port is still held by the
// process that just died.
func listenOn(t *testing.T, addr string) *tap {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			l := &tap{Listener: ln}
			t.Cleanup(func() { l.Close() })
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("listen on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// studioStartedOwnDaemon runs studio (no browser) over home, expects it to
// refuse what serve.addr names (warning on stderr) and start a daemon of
// its own, and checks that its link signs in. It stops that daemon.
func studioStartedOwnDaemon(t *testing.T, home, refused string) {
	t.Helper()
	r := runBinary(t, home, []string{"PATH=" + t.TempDir()}, "studio")
	m := startedPattern.FindStringSubmatch(r.stderr)
	if m == nil || r.code != 0 {
		t.Fatalf("studio: %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	pid, _ := strconv.Atoi(m[1])
	t.Cleanup(func() {
		if syscall.Kill(pid, 0) == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if !strings.Contains(r.stderr, refused) || !strings.Contains(r.stderr, "did not prove it is this home's daemon") ||
		!strings.Contains(r.stderr, "the token was not sent there") {
		t.Fatalf("studio did not say why it passed %s by: %s", refused, r.stderr)
	}
	link := linkPattern.FindString(r.stdout)
	if link == "" || strings.Contains(link, refused) {
		t.Fatalf("studio's link %q (the refused listener is %s)", link, refused)
	}
	if addr := strings.TrimSpace(readFile(t, filepath.Join(home, "serve.addr"))); !strings.Contains(link, "http://"+addr+"/") {
		t.Fatalf("serve.addr names %s, the link %s", addr, link)
	}
	signInWith(t, link)
	stopDetached(t, home, pid)
}

// TestStudioRefusesASquatter: a daemon killed by SIGKILL leaves serve.addr
// behind, and another program listens on that port and answers /healthz
// like a daemon. studio sends it no token and starts its own daemon.
func TestStudioRefusesASquatter(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	d := startDaemon(t, home, nil)
	token := d.token
	addr := strings.TrimPrefix(d.url, "http://")
	d.kill()
	if got := strings.TrimSpace(readFile(t, filepath.Join(home, "serve.addr"))); got != addr {
		t.Fatalf("serve.addr after SIGKILL: %q, want %q", got, addr)
	}

	sq := listenOn(t, addr)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok": true, "code": "squatted", "proof": "`+strings.Repeat("00", 32)+`"}`)
	})}
	go func() { _ = srv.Serve(sq) }()
	t.Cleanup(func() { srv.Close() })

	studioStartedOwnDaemon(t, home, addr)
	got := sq.received()
	if !strings.Contains(got, "POST /auth/proof") {
		t.Fatalf("studio never asked the squatter for a proof: %q", got)
	}
	if strings.Contains(got, token) || strings.Contains(strings.ToLower(got), "authorization") {
		t.Fatalf("the squatter received the token: %q", got)
	}
}

// TestStudioRefusesARelay: a listener on serve.addr's port that relays
// every byte to the home's real daemon gets that daemon's proof, bound to
// the daemon's own address: studio refuses it, sends it no token, and
// starts a daemon of its own.
func TestStudioRefusesARelay(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	d := startDaemon(t, home, nil)
	target := strings.TrimPrefix(d.url, "http://")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	relay := &tap{Listener: ln}
	t.Cleanup(func() { relay.Close() })
	go func() {
		for {
			c, err := relay.Accept()
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
	relayAddr := relay.Addr().String()
	if err := os.WriteFile(filepath.Join(home, "serve.addr"), []byte(relayAddr+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	studioStartedOwnDaemon(t, home, relayAddr)
	got := relay.received()
	if !strings.Contains(got, "POST /auth/proof") || strings.Contains(got, d.token) || strings.Contains(strings.ToLower(got), "authorization") {
		t.Fatalf("the relay received: %q", got)
	}
	if code := d.stop(); code != 0 {
		t.Fatalf("the real daemon exited %d", code)
	}
}

// TestServeProgressCapPerSession: through the real daemon, one browser
// session cannot take every progress stream: past its share it is refused
// (429, saying why), and another session still gets its own.
func TestServeProgressCapPerSession(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	d := startDaemon(t, home, nil)
	type session struct{ cookie, token string }
	signIn := func() session {
		t.Helper()
		code, _ := d.do("POST", "/auth/code", nil).json(t)["code"].(string)
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(d.url + "/login?code=" + code)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		token, _ := strings.CutPrefix(resp.Header.Get("Location"), "/#signin=")
		if len(resp.Cookies()) != 1 || token == "" {
			t.Fatalf("sign-in: %d %v %q", resp.StatusCode, resp.Cookies(), resp.Header.Get("Location"))
		}
		c := resp.Cookies()[0]
		return session{c.Name + "=" + c.Value, token}
	}
	open := func(s session, id string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", d.url+"/events?progress="+id, nil)
		req.Header.Set("Cookie", s.cookie)
		req.Header.Set("X-Reasonix-Page-Token", s.token)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusOK {
			t.Cleanup(func() { resp.Body.Close() }) // the stream stays open
			return resp.StatusCode, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	greedy, other := signIn(), signIn()
	const share = 16
	for i := range share {
		if code, body := open(greedy, "greedy-stream-"+strconv.Itoa(i)); code != 200 {
			t.Fatalf("stream %d: %d %s", i+1, code, body)
		}
	}
	code, body := open(greedy, "greedy-stream-over")
	if code != http.StatusTooManyRequests || !strings.Contains(body, "16 progress streams") || !strings.Contains(body, "server.busy") {
		t.Fatalf("over the share: %d %s", code, body)
	}
	if code, body := open(other, "other-stream-1"); code != 200 {
		t.Fatalf("another session: %d %s", code, body)
	}
}
