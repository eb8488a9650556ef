package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"reasonix.io/plugind/installer"
)

// sibling opens another tab in p's browser context: the same cookies and
// the same storage, as a second tab of one browser.
func (p *tab) sibling() *tab {
	p.t.Helper()
	ctx, cancel := chromedp.NewContext(p.ctx)
	p.t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		p.t.Fatalf("open a second tab: %v", err)
	}
	s := &tab{t: p.t, e: p.e, ctx: ctx}
	s.wide()
	return s
}

// TestBrowserCookieReplayFromAnotherPort is the attack on the session
// cookie: a browser signed in to the daemon opens a page of another server
// on the same loopback host. Cookies ignore ports, so the browser sends
// that server the daemon's session cookie. The server replays it from a
// program, with whatever headers it likes: it reads nothing and changes
// nothing, and the page of the daemon still works afterwards.
func TestBrowserCookieReplayFromAnotherPort(t *testing.T) {
	e := newEnv(t, envOpts{})
	src := plugin(t, t.TempDir(), "victim", "1.0.0")
	if r := e.installByPlanID(e.plan(installer.Request{Source: src}).PlanID); r.status != 200 {
		t.Fatalf("install: %s", r.body)
	}
	before := e.registryBytes()

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

	p := newTab(t, e)
	p.signIn()
	token := eval[string](p, `localStorage.getItem("reasonix.pageToken")`)
	p.do(chromedp.Navigate(other.URL))
	p.visible("#storage")
	if got := p.text("#storage"); got != "null" {
		t.Fatalf("the other origin read the page token: %q", got)
	}

	// What the other server received.
	mu.Lock()
	cookieHeader := strings.Join(leaked, "; ")
	mu.Unlock()
	name := "reasonix_session_" + e.ts.URL[strings.LastIndex(e.ts.URL, ":")+1:]
	if !strings.Contains(cookieHeader, name+"=") {
		t.Fatalf("the browser did not send the daemon's cookie to the other port (got %q): the attack is not being tested", cookieHeader)
	}
	if strings.Contains(cookieHeader, token) {
		t.Fatal("the page token reached the other port")
	}

	// The replay: the cookie, and every header a program can forge.
	forged := []hdr{
		{"Authorization": "", "Cookie": cookieHeader},
		{"Authorization": "", "Cookie": cookieHeader, "Sec-Fetch-Site": "same-origin"},
		{"Authorization": "", "Cookie": cookieHeader, "Sec-Fetch-Site": "same-origin", "Origin": e.ts.URL, "Sec-Fetch-Mode": "cors"},
		{"Authorization": "", "Cookie": cookieHeader, "Sec-Fetch-Site": "same-origin", PageTokenHeader: "guess"},
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
		{"POST", "/plugins/plan", map[string]any{"source": src}},
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
			req, _ := http.NewRequest(a.method, e.ts.URL+a.path, body)
			for k, v := range h {
				if v != "" {
					req.Header.Set(k, v)
				}
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
	if !bytes.Equal(e.registryBytes(), before) {
		t.Fatalf("a replayed cookie changed the registry:\n%s", e.registryBytes())
	}

	// The page itself still works: the replays did not sign it out.
	p.open("/#installed")
	p.visible(`#installed-list article[data-name="victim"]`)
}

// TestBrowserTabsShareSignIn: tabs of one browser share the newest
// sign-in (a second sign-in does not break the first tab), and a tab left
// holding a replaced session's page token says so plainly, with a reload.
func TestBrowserTabsShareSignIn(t *testing.T) {
	e := newEnv(t, envOpts{})
	first := newTab(t, e)
	first.signIn()
	oldToken := eval[string](first, `localStorage.getItem("reasonix.pageToken")`)

	// A tab opened later is signed in by the same sign-in.
	second := first.sibling()
	second.open("/#installed")
	second.visible("#screen-installed")

	// A newer sign-in (in the second tab) ends the first session; the
	// first tab goes on with the newer one, without a reload.
	second.signIn()
	newToken := eval[string](second, `localStorage.getItem("reasonix.pageToken")`)
	if newToken == oldToken {
		t.Fatal("the second sign-in kept the page token")
	}
	first.click(`#tabs a[data-screen="installed"]`)
	first.visible("#screen-installed")
	first.until("the list loaded", `document.getElementById("installed-notice").hidden`)
	if !eval[bool](first, `document.getElementById("screen-signin").hidden`) {
		t.Fatalf("the first tab was signed out by the second sign-in: %s", first.bodyText())
	}

	// A tab that still holds the replaced session's page token (as one
	// with no shared storage would) is told why, and offered a reload.
	first.do(chromedp.Evaluate[chromedp.Void](`localStorage.setItem("reasonix.pageToken", ` + jsString(oldToken) + `)`))
	first.click(`#tabs a[data-screen="add"]`)
	first.click(`#tabs a[data-screen="installed"]`)
	first.visible("#screen-signin")
	if got := first.text("#signin-reason"); got != "Signed out by a newer sign-in — reload" {
		t.Fatalf("a replaced tab says %q", got)
	}
	first.visible("#signin-reload")
	first.shot("signin-replaced")
}
