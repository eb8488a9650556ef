package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"reasonix.io/plugind/internal/headless"
)

// TestStudioCookieUselessOnAnotherPort is the attack on the page's session
// cookie, end to end: the real daemon that `reasonix studio` starts, the
// sign-in link it prints opened in a real Chromium, then a page of another
// server on the same loopback host. Cookies ignore ports, so the browser
// sends that server the daemon's session cookie; the server replays it from
// a program, with every header a program can forge. It reads nothing and
// changes nothing, and the daemon's page still works afterwards.
func TestStudioCookieUselessOnAnotherPort(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	victim := writeNamedPlugin(t, t.TempDir(), "victim")
	if r := runBinary(t, home, nil, "plugin", "install", victim, "--yes"); r.code != 0 {
		t.Fatalf("install: %d %s", r.code, r.stderr)
	}
	before := readFile(t, filepath.Join(home, "plugin-packages.json"))
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
	link := linkPattern.FindString(r.stdout)
	daemon := strings.SplitN(link, "/login", 2)[0]

	var mu sync.Mutex
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Header.Get("Cookie"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><body><p id="storage"></p><script>
document.getElementById("storage").textContent = String(localStorage.getItem("reasonix.pageToken"));
</script></body>`)
	}))
	t.Cleanup(other.Close)

	tab := headless.NewTab(t)
	browse := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(tab, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("browser: %v", err)
		}
	}
	text := func(js string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(tab, 30*time.Second)
		defer cancel()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("browser: %v", err)
		}
		return v
	}
	browse(chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#screen-add")))
	token := text(`localStorage.getItem("reasonix.pageToken") || ""`)
	if len(token) < 40 || strings.Contains(text(`location.href`), token) {
		t.Fatalf("after sign-in: token %q at %s", token, text(`location.href`))
	}
	browse(chromedp.Navigate(other.URL), chromedp.WaitVisible(chromedp.CSS("#storage")))
	if got := text(`document.getElementById("storage").textContent`); got != "null" {
		t.Fatalf("the other origin read the page token: %q", got)
	}

	// What the other server received: the cookie, and nothing else.
	mu.Lock()
	cookie := strings.Join(leaked, "; ")
	mu.Unlock()
	name := "reasonix_session_" + daemon[strings.LastIndex(daemon, ":")+1:]
	if !strings.Contains(cookie, name+"=") {
		t.Fatalf("the browser did not send the daemon's cookie to the other port (got %q): the attack is not being tested", cookie)
	}
	if strings.Contains(cookie, token) {
		t.Fatal("the page token reached the other port")
	}

	forged := []map[string]string{
		{"Cookie": cookie},
		{"Cookie": cookie, "Sec-Fetch-Site": "same-origin"},
		{"Cookie": cookie, "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Origin": daemon},
		{"Cookie": cookie, "Sec-Fetch-Site": "same-origin", "X-Reasonix-Page-Token": "guess"},
	}
	attempts := []struct {
		method, path string
		body         any
	}{
		{"GET", "/session", nil},
		{"GET", "/plugins", nil},
		{"GET", "/plugins/victim/export", nil},
		{"GET", "/events?progress=replayed-stream", nil},
		{"GET", "/marketplaces", nil},
		{"POST", "/plugins/enabled", map[string]any{"name": "victim", "enabled": false}},
		{"POST", "/plugins/plan", map[string]any{"source": victim}},
		{"DELETE", "/plugins/victim", nil},
		{"POST", "/extensions/reload", nil},
		{"POST", "/auth/code", nil},
		{"POST", "/logout", nil},
	}
	// An accepted progress stream would stay open: every replay is bounded.
	client := &http.Client{Timeout: 5 * time.Second}
	for _, h := range forged {
		for _, a := range attempts {
			var body io.Reader
			if a.body != nil {
				data, _ := json.Marshal(a.body)
				body = bytes.NewReader(data)
			}
			req, _ := http.NewRequest(a.method, daemon+a.path, body)
			for k, v := range h {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Errorf("%s %s with %v: %v", a.method, a.path, h, err)
				continue
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode < 400 || bytes.Contains(got, []byte("victim")) || bytes.Contains(got, []byte(token)) {
				t.Errorf("%s %s with %v: the replay got %d %s (%v)", a.method, a.path, h, resp.StatusCode, got, err)
			}
		}
	}
	if after := readFile(t, filepath.Join(home, "plugin-packages.json")); after != before {
		t.Fatalf("a replayed cookie changed the registry:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(home, "plugins", "victim")); err != nil {
		t.Fatalf("the victim's copy: %v", err)
	}

	// The page itself still works: the replays did not sign it out.
	browse(chromedp.Navigate(daemon+"/#installed"), chromedp.WaitVisible(chromedp.CSS(`#installed-list article[data-name="victim"]`)))
	stopDetached(t, home, pid)
}
