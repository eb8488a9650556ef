package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var (
	linkPattern    = regexp.MustCompile(`http://127\.0\.0\.1:(\d+)/login\?code=[A-Za-z0-9_-]{43}`)
	startedPattern = regexp.MustCompile(`started the daemon \(pid (\d+);`)
)

// stopDetached stops a daemon `studio` started (not a child of this
// process) by its pid, and waits until it has removed serve.addr, which a
// clean shutdown does.
func stopDetached(t *testing.T, home string, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("stop daemon %d: %v", pid, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := os.Stat(filepath.Join(home, "serve.addr"))
		if os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon %d still has serve.addr 30 s after SIGTERM", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// signInWith follows a sign-in link as a browser would, reads the plugins
// with the session it got (the cookie, the page token from the redirect's
// fragment and the browser's same-origin mark), and checks that the cookie
// alone, which a browser also sends to other ports, opens nothing.
func signInWith(t *testing.T, link string) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	token, ok := strings.CutPrefix(resp.Header.Get("Location"), "/#signin=")
	if resp.StatusCode != http.StatusSeeOther || !ok || len(token) < 40 {
		t.Fatalf("sign-in link: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	base := strings.SplitN(link, "/login", 2)[0]
	get := func(path string, h map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	page := map[string]string{"Sec-Fetch-Site": "same-origin", "X-Reasonix-Page-Token": token}
	if code, body := get("/plugins", page); code != 200 {
		t.Fatalf("plugins with the session: %d %s", code, body)
	}
	if code, body := get("/session", page); code != 200 || strings.Contains(body, token) {
		t.Fatalf("GET /session: %d %s", code, body)
	}
	for _, h := range []map[string]string{nil, {"Sec-Fetch-Site": "same-origin"}, {"Origin": base}} {
		for _, path := range []string{"/plugins", "/session"} {
			if code, body := get(path, h); code < 400 || strings.Contains(body, token) {
				t.Fatalf("GET %s with the cookie alone (%v): %d %s", path, h, code, body)
			}
		}
	}
	// The link works once.
	resp, err = client.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the link worked twice: %d", resp.StatusCode)
	}
}

// TestStudioStartsTheDaemon: with no browser opener and no daemon (only a
// stale serve.addr), studio starts one in the background, prints a sign-in
// link and exits 0; the next run reuses that daemon.
func TestStudioStartsTheDaemon(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	noBrowser := []string{"PATH=" + t.TempDir()}
	if err := os.WriteFile(filepath.Join(home, "serve.addr"), []byte("127.0.0.1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	r := runBinary(t, home, noBrowser, "studio")
	m := startedPattern.FindStringSubmatch(r.stderr)
	if m != nil {
		pid, _ := strconv.Atoi(m[1])
		t.Cleanup(func() {
			if syscall.Kill(pid, 0) == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
	}
	if r.code != 0 || m == nil {
		t.Fatalf("studio: %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	pid, _ := strconv.Atoi(m[1])
	link := linkPattern.FindString(r.stdout)
	if link == "" || !strings.Contains(r.stdout, "within a minute") {
		t.Fatalf("no sign-in link printed: %s", r.stdout)
	}
	addr, err := os.ReadFile(filepath.Join(home, "serve.addr"))
	if err != nil || !strings.Contains(link, "http://"+strings.TrimSpace(string(addr))+"/") {
		t.Fatalf("serve.addr %q (%v) is not where the link points: %s", addr, err, link)
	}
	if info, err := os.Stat(filepath.Join(home, "serve.token")); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("token: %v %v", info, err)
	}
	if strings.Contains(r.stdout+r.stderr, strings.TrimSpace(readFile(t, filepath.Join(home, "serve.token")))) {
		t.Fatal("studio printed the token")
	}
	signInWith(t, link)

	again := runBinary(t, home, noBrowser, "studio")
	if again.code != 0 || strings.Contains(again.stderr, "started the daemon") {
		t.Fatalf("second studio: %d %s %s", again.code, again.stdout, again.stderr)
	}
	second := linkPattern.FindString(again.stdout)
	if second == "" || second == link || linkPattern.FindStringSubmatch(second)[1] != linkPattern.FindStringSubmatch(link)[1] {
		t.Fatalf("second link %q after %q", second, link)
	}
	signInWith(t, second)

	// --no-open prints the link even where a browser could open it.
	if r := runBinary(t, home, nil, "studio", "--no-open"); r.code != 0 || linkPattern.FindString(r.stdout) == "" {
		t.Fatalf("--no-open: %d %s %s", r.code, r.stdout, r.stderr)
	}

	stopDetached(t, home, pid)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStudioOpensTheBrowser: with a daemon running, studio hands the link
// to xdg-open; when the opener fails, it prints the link and still exits 0.
func TestStudioOpensTheBrowser(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	d := startDaemon(t, home, nil)
	addr := strings.TrimPrefix(d.url, "http://")
	if got := strings.TrimSpace(readFile(t, filepath.Join(home, "serve.addr"))); got != addr {
		t.Fatalf("serve.addr = %q, daemon at %q", got, addr)
	}

	bin := t.TempDir()
	opened := filepath.Join(t.TempDir(), "opened")
	script := "#!/bin/sh\nprintf '%s' \"$1\" > " + opened + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runBinary(t, home, []string{"PATH=" + bin}, "studio")
	if r.code != 0 || !strings.Contains(r.stdout, "Opened "+d.url+"/ in your browser") || strings.Contains(r.stdout, "code=") {
		t.Fatalf("studio: %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "started the daemon") {
		t.Fatal("studio started a second daemon")
	}
	link := readFile(t, opened)
	if !linkPattern.MatchString(link) || !strings.HasPrefix(link, d.url+"/login?code=") {
		t.Fatalf("xdg-open got %q", link)
	}
	signInWith(t, link)

	broken := "#!/bin/sh\necho 'no display' >&2\nexit 3\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(broken), 0o755); err != nil {
		t.Fatal(err)
	}
	r = runBinary(t, home, []string{"PATH=" + bin}, "studio")
	if r.code != 0 || linkPattern.FindString(r.stdout) == "" || !strings.Contains(r.stderr, "no display") {
		t.Fatalf("studio with a failing opener: %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	// A clean stop removes serve.addr.
	if code := d.stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	if _, err := os.Stat(filepath.Join(home, "serve.addr")); !os.IsNotExist(err) {
		t.Fatalf("serve.addr left after a clean stop: %v", err)
	}
}
