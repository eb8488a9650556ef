package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind/installer"
)

// loginCode asks the daemon for a login code with the bearer token.
func (e *env) loginCode() string {
	e.t.Helper()
	r := e.do("POST", "/auth/code", nil, nil)
	if r.status != 200 {
		e.t.Fatalf("auth/code: %d %s", r.status, r.body)
	}
	v := r.json(e.t)
	code, _ := v["code"].(string)
	if len(code) < 40 || v["loginPath"] != "/login?code="+code || v["expiresInSeconds"] != float64(60) {
		e.t.Fatalf("auth/code answer: %s", r.body)
	}
	return code
}

// visit sends GET path with no token and no redirect following.
func (e *env) visit(path string, cookies ...*http.Cookie) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest("GET", e.ts.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// signIn trades a fresh code for a session, as a browser with no session
// yet does; it returns the cookie and the page token.
func (e *env) signIn(previous ...*http.Cookie) (*http.Cookie, string) {
	e.t.Helper()
	resp := e.visit("/login?code="+e.loginCode(), previous...)
	readAll(e.t, resp)
	loc := resp.Header.Get("Location")
	token, ok := strings.CutPrefix(loc, "/#"+SignInFragment)
	if resp.StatusCode != http.StatusSeeOther || !ok || len(token) < 40 {
		e.t.Fatalf("login: %d Location %q", resp.StatusCode, loc)
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 {
		e.t.Fatalf("login set %d cookies", len(cookies))
	}
	c := cookies[0]
	r := e.do("GET", "/session", nil, e.page(c, token))
	if r.status != 200 {
		e.t.Fatalf("session: %d %s", r.status, r.body)
	}
	if strings.Contains(string(r.body), token) || strings.Contains(string(r.body), c.Value) {
		e.t.Fatalf("GET /session repeats a secret: %s", r.body)
	}
	return c, token
}

// page is what the daemon's own page sends with a request: the cookie,
// the page token and the browser's same-origin mark, and no bearer token.
func (e *env) page(c *http.Cookie, token string) hdr {
	return hdr{"Authorization": "", "Cookie": c.Name + "=" + c.Value, PageTokenHeader: token, "Sec-Fetch-Site": "same-origin"}
}

func TestLoginCodes(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	e := newEnv(t, envOpts{now: clock.Now})

	// Only the token holder gets codes: not anonymous clients, not a
	// browser session.
	e.do("POST", "/auth/code", nil, hdr{"Authorization": ""}).wantError(t, 401, CodeUnauthorized)
	cookie, token := e.signIn()
	e.do("POST", "/auth/code", nil, e.page(cookie, token)).wantError(t, 401, CodeUnauthorized)

	if !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" || cookie.Secure {
		t.Fatalf("cookie attributes: %+v", cookie)
	}
	if !strings.HasPrefix(cookie.Name, "reasonix_session_") || cookie.MaxAge != int(SessionMax/time.Second) {
		t.Fatalf("cookie: %+v", cookie)
	}

	used := e.loginCode()
	readAll(t, e.visit("/login?code="+used))
	expired := e.loginCode()
	clock.Advance(CodeTTL + time.Second)
	cases := []struct {
		name, query string
		status      int
		says        string
	}{
		{"reused", "code=" + used, 403, "already used"},
		{"expired", "code=" + expired, 403, "expired"},
		{"unknown", "code=" + strings.Repeat("A", 43), 403, "not valid here"},
		{"missing", "", 400, "has no code"},
	}
	for _, c := range cases {
		resp := e.visit("/login?" + c.query)
		body := readAll(t, resp)
		if resp.StatusCode != c.status || !strings.Contains(body, c.says) || !strings.Contains(body, "reasonix studio") {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
		}
		if len(resp.Cookies()) != 0 {
			t.Errorf("%s: a refused login set a cookie", c.name)
		}
		if resp.Header.Get("Content-Security-Policy") != pageCSP || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: headers %v", c.name, resp.Header)
		}
	}
	// A HEAD (a link preview) does not spend a code.
	headed := e.loginCode()
	req, _ := http.NewRequest("HEAD", e.ts.URL+"/login?code="+headed, nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("HEAD /login: %v %v", resp, err)
	}
	if resp := e.visit("/login?code=" + headed); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("a code after a HEAD: %d %s", resp.StatusCode, readAll(t, resp))
	}
	// A code used within its minute works, at the edge too.
	fresh := e.loginCode()
	clock.Advance(CodeTTL - time.Second)
	if resp := e.visit("/login?code=" + fresh); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("a code 59 s old: %d %s", resp.StatusCode, readAll(t, resp))
	}
	// The query string, which holds the code, is never logged.
	if strings.Contains(e.log.String(), used) || strings.Contains(e.log.String(), "code=") {
		t.Fatal("a login code reached the log")
	}
}

func TestSessionAuthorizes(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	e := newEnv(t, envOpts{now: clock.Now})
	src := plugin(t, t.TempDir(), "weather", "1.0.0")
	if r := e.installByPlanID(e.plan(installer.Request{Source: mustSource(src)}).PlanID); r.status != 200 {
		t.Fatalf("install: %s", r.body)
	}
	cookie, token := e.signIn()
	jar := cookie.Name + "=" + cookie.Value
	own := e.ts.URL
	other := "http://127.0.0.1:1"
	wrong := token[:len(token)-1] + "x"
	disable := map[string]any{"name": "weather", "enabled": false}
	same := "same-origin"
	cases := []struct {
		name, method, path string
		h                  hdr
		body               any
		status             int
		code               string
	}{
		// What the page sends.
		{"list from the page", "GET", "/plugins", hdr{"Cookie": jar, PageTokenHeader: token, "Sec-Fetch-Site": same}, nil, 200, ""},
		{"list from a browser without fetch metadata", "GET", "/plugins", hdr{"Cookie": jar, PageTokenHeader: token, "Origin": own}, nil, 200, ""},
		{"events from the page", "GET", "/events?progress=bad", hdr{"Cookie": jar, PageTokenHeader: token, "Sec-Fetch-Site": same}, nil, 400, CodeBadRequest},
		// The cookie replayed by a server on another port, which has
		// nothing else: it may forge headers, not the page token.
		{"replayed cookie alone", "GET", "/plugins", hdr{"Cookie": jar}, nil, 403, CodeForbidden},
		{"replayed cookie, forged same-origin", "GET", "/plugins", hdr{"Cookie": jar, "Sec-Fetch-Site": same}, nil, 401, CodeSignedOut},
		{"replayed cookie, forged Origin", "GET", "/plugins", hdr{"Cookie": jar, "Origin": own}, nil, 401, CodeSignedOut},
		{"replayed cookie reads the session", "GET", "/session", hdr{"Cookie": jar, "Sec-Fetch-Site": same}, nil, 401, CodeSignedOut},
		{"replayed cookie exports", "GET", "/plugins/weather/export", hdr{"Cookie": jar, "Sec-Fetch-Site": same}, nil, 401, CodeSignedOut},
		{"replayed cookie follows progress", "GET", "/events?progress=abcdefgh", hdr{"Cookie": jar, "Sec-Fetch-Site": same}, nil, 401, CodeSignedOut},
		{"replayed cookie disables", "POST", "/plugins/enabled", hdr{"Cookie": jar, "Sec-Fetch-Site": same, "Origin": own}, disable, 401, CodeSignedOut},
		{"replayed cookie removes", "DELETE", "/plugins/weather", hdr{"Cookie": jar, "Sec-Fetch-Site": same}, nil, 401, CodeSignedOut},
		{"replayed cookie plans", "POST", "/plugins/plan", hdr{"Cookie": jar, "Sec-Fetch-Site": same}, map[string]string{"source": src}, 401, CodeSignedOut},
		{"replayed cookie signs out", "POST", "/logout", hdr{"Cookie": jar, "Sec-Fetch-Site": same}, nil, 401, CodeSignedOut},
		{"wrong page token", "POST", "/plugins/enabled", hdr{"Cookie": jar, PageTokenHeader: wrong, "Sec-Fetch-Site": same}, disable, 401, CodeSignedOut},
		// The page token without the browser's same-origin mark, or from
		// a page of another origin.
		{"token without a same-origin mark", "GET", "/plugins", hdr{"Cookie": jar, PageTokenHeader: token}, nil, 403, CodeForbidden},
		{"token, navigated to", "GET", "/plugins", hdr{"Cookie": jar, PageTokenHeader: token, "Sec-Fetch-Site": "none"}, nil, 403, CodeForbidden},
		{"list asked by another loopback port", "GET", "/plugins", hdr{"Cookie": jar, PageTokenHeader: token, "Sec-Fetch-Site": "same-site"}, nil, 403, CodeForbidden},
		{"list asked cross-site", "GET", "/plugins", hdr{"Cookie": jar, PageTokenHeader: token, "Sec-Fetch-Site": "cross-site"}, nil, 403, CodeForbidden},
		{"export asked by another port", "GET", "/plugins/weather/export", hdr{"Cookie": jar, PageTokenHeader: token, "Origin": other}, nil, 403, CodeForbidden},
		{"mutation from another port", "POST", "/plugins/enabled", hdr{"Cookie": jar, PageTokenHeader: token, "Sec-Fetch-Site": same, "Origin": other}, disable, 403, CodeForbidden},
		{"mutation same-site", "POST", "/plugins/enabled", hdr{"Cookie": jar, PageTokenHeader: token, "Sec-Fetch-Site": "same-site"}, disable, 403, CodeForbidden},
		// The page token alone is nothing either.
		{"token without the cookie", "GET", "/plugins", hdr{PageTokenHeader: token, "Sec-Fetch-Site": same}, nil, 401, CodeUnauthorized},
		{"unknown cookie", "GET", "/plugins", hdr{"Cookie": cookie.Name + "=nope", PageTokenHeader: token, "Sec-Fetch-Site": same}, nil, 401, CodeSignedOut},
		{"cookie of another port", "GET", "/plugins", hdr{"Cookie": "reasonix_session_1=" + cookie.Value, PageTokenHeader: token, "Sec-Fetch-Site": same}, nil, 401, CodeUnauthorized},
		{"wrong token beside a good cookie", "GET", "/plugins", hdr{"Cookie": jar, PageTokenHeader: token, "Sec-Fetch-Site": same, "Authorization": "Bearer " + strings.Repeat("0", 64)}, nil, 401, CodeUnauthorized},
		{"session route with the token only", "GET", "/session", nil, nil, 401, CodeUnauthorized},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := hdr{"Authorization": ""}
			for k, v := range c.h {
				h[k] = v
			}
			r := e.do(c.method, c.path, c.body, h)
			if strings.Contains(string(r.body), token) {
				t.Fatalf("the answer holds the page token: %s", r.body)
			}
			if c.code == "" {
				if r.status != c.status {
					t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
				}
				return
			}
			r.wantError(t, c.status, c.code)
		})
	}
	if reg := string(e.registryBytes()); !strings.Contains(reg, `"enabled": true`) {
		t.Fatalf("a refused request changed the registry: %s", reg)
	}

	// With its page token, the page can do what it asks for.
	r := e.do("POST", "/plugins/enabled", disable, hdr{"Authorization": "", "Cookie": jar, PageTokenHeader: token, "Origin": own, "Sec-Fetch-Site": same})
	if r.status != 200 || !strings.Contains(string(e.registryBytes()), `"enabled": false`) {
		t.Fatalf("disable with the session: %d %s", r.status, r.body)
	}

	// Refused replays do not keep a session alive; idle sessions end, and
	// so do old ones, however busy.
	for range 3 {
		clock.Advance(SessionIdle / 2)
		e.do("GET", "/plugins", nil, hdr{"Authorization": "", "Cookie": jar, "Sec-Fetch-Site": same}).wantError(t, 401, CodeSignedOut)
	}
	e.do("GET", "/plugins", nil, e.page(cookie, token)).wantError(t, 401, CodeSignedOut)
	cookie, token = e.signIn()
	for i := time.Duration(0); i < SessionMax; i += SessionIdle / 2 {
		clock.Advance(SessionIdle / 2)
		r := e.do("GET", "/plugins", nil, e.page(cookie, token))
		if i+SessionIdle/2 < SessionMax && r.status != 200 {
			t.Fatalf("a busy session ended after %v: %d", i+SessionIdle/2, r.status)
		}
	}
	e.do("GET", "/plugins", nil, e.page(cookie, token)).wantError(t, 401, CodeSignedOut)

	// Sign-out ends the session at once.
	cookie, token = e.signIn()
	if r := e.do("POST", "/logout", nil, e.page(cookie, token)); r.status != 204 {
		t.Fatalf("logout: %d %s", r.status, r.body)
	}
	e.do("GET", "/plugins", nil, e.page(cookie, token)).wantError(t, 401, CodeSignedOut)
}

// TestNewerSignIn: a sign-in in a browser that already has a session ends
// that session (its cookie came with the sign-in), and a page still holding
// its page token is told why; a sign-in from another browser (no cookie)
// leaves the first session alone.
func TestNewerSignIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	first, firstToken := e.signIn()
	otherBrowser, otherToken := e.signIn()
	second, secondToken := e.signIn(first)

	for _, c := range []struct {
		name   string
		h      hdr
		status int
		code   string
	}{
		{"the new session", e.page(second, secondToken), 200, ""},
		{"a tab with the old page token", e.page(second, firstToken), 401, CodeSessionReplaced},
		{"the old session's cookie and token", e.page(first, firstToken), 401, CodeSessionReplaced},
		{"the old cookie with the new token", e.page(first, secondToken), 401, CodeSignedOut},
		{"another browser's session", e.page(otherBrowser, otherToken), 200, ""},
	} {
		r := e.do("GET", "/plugins", nil, c.h)
		if c.code == "" {
			if r.status != c.status {
				t.Errorf("%s: %d %s", c.name, r.status, r.body)
			}
			continue
		}
		r.wantError(t, c.status, c.code)
		if c.code == CodeSessionReplaced && !strings.Contains(string(r.body), "signed out by a newer sign-in") {
			t.Errorf("%s: %s", c.name, r.body)
		}
	}
	// Neither the cookies nor the page tokens reach the log.
	for _, secret := range []string{first.Value, second.Value, firstToken, secondToken, otherToken} {
		if strings.Contains(e.log.String(), secret) {
			t.Fatal("a session secret reached the log")
		}
	}
}

func TestPageIsPublicAndHoldsNoSecret(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	for _, path := range []string{"/", "/assets/app.js", "/assets/app.css"} {
		resp := e.visit(path)
		body := readAll(t, resp)
		if resp.StatusCode != 200 || strings.Contains(body, testToken) || len(body) < 500 {
			t.Fatalf("%s: %d (%d bytes)", path, resp.StatusCode, len(body))
		}
		h := resp.Header
		if h.Get("Content-Security-Policy") != pageCSP || h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%s: headers %v", path, h)
		}
		etag := h.Get("ETag")
		req, _ := http.NewRequest("GET", e.ts.URL+path, nil)
		req.Header.Set("If-None-Match", etag)
		again, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		again.Body.Close()
		if etag == "" || again.StatusCode != http.StatusNotModified {
			t.Fatalf("%s: revalidation %q → %d", path, etag, again.StatusCode)
		}
	}
	if js := readAll(t, e.visit("/assets/app.js")); strings.Contains(js, ".innerHTML") || strings.Contains(js, "insertAdjacentHTML") || strings.Contains(js, "document.write") {
		t.Fatal("the script writes HTML")
	}
	for _, path := range []string{"/assets/index.html", "/assets/login.tmpl", "/assets/nope.js", "/assets/../server.go"} {
		if resp := e.visit(path); resp.StatusCode == 200 {
			t.Errorf("%s served", path)
		}
	}
	// JSON answers carry a policy under which nothing runs or frames.
	r := e.do("GET", "/plugins", nil, nil)
	if r.header.Get("Content-Security-Policy") != apiCSP || r.header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("API headers: %v", r.header)
	}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data ProgressEvent
}

// readEvents reads an event stream to its end.
func readEvents(t *testing.T, body io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Fatalf("event data %q: %v", line, err)
			}
		case line == "" && cur.name != "":
			out = append(out, cur)
			cur = sseEvent{}
		}
	}
	return out
}

func TestProgressStreams(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	market := writeTree(t, filepath.Join(t.TempDir(), "market"), map[string]string{
		".claude-plugin/marketplace.json": `{"name":"m","owner":{"name":"x"},"plugins":[` +
			`{"name":"a","source":"./a"},{"name":"b","source":"./b"},{"name":"n","source":{"source":"npm","package":"x"}}]}`,
	})
	plugin(t, market, "a", "1.0.0")
	plugin(t, market, "b", "1.0.0")

	for _, c := range []struct {
		name     string
		lateSubs bool // subscribe after the plan answered
	}{{"subscribed first", false}, {"subscribed late", true}} {
		t.Run(c.name, func(t *testing.T) {
			id := "plan-" + strings.ReplaceAll(c.name, " ", "-")
			var events []sseEvent
			got := make(chan struct{})
			subscribe := func() {
				req, _ := http.NewRequest("GET", e.ts.URL+"/events?progress="+id, nil)
				req.Header.Set("Authorization", "Bearer "+testToken)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					close(got)
					return
				}
				if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
					t.Errorf("events: %d %v", resp.StatusCode, resp.Header)
				}
				events = readEvents(t, resp.Body)
				resp.Body.Close()
				close(got)
			}
			if !c.lateSubs {
				go subscribe()
				time.Sleep(50 * time.Millisecond)
			}
			r := e.do("POST", "/plugins/plan", map[string]string{"source": market}, hdr{ProgressHeader: id})
			if r.status != 200 {
				t.Fatalf("plan: %d %s", r.status, r.body)
			}
			if c.lateSubs {
				go subscribe()
			}
			select {
			case <-got:
			case <-time.After(10 * time.Second):
				t.Fatal("the event stream did not end after the plan")
			}
			if len(events) == 0 {
				t.Fatal("no events")
			}
			last := events[len(events)-1]
			if last.name != "done" || last.data.Phase != "done" || last.data.Status != "planned" ||
				last.data.Total != 3 || last.data.Entries != 3 {
				t.Fatalf("last event: %+v (all: %+v)", last, events)
			}
			for _, ev := range events[:len(events)-1] {
				if ev.name != "progress" {
					t.Fatalf("event before the end: %+v", ev)
				}
			}
		})
	}

	// A stream belongs to whoever made it: a browser session cannot follow
	// the token holder's stream (it gets a fresh, empty one of its own).
	cookie, token := e.signIn()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.ts.URL+"/events?progress=plan-subscribed-first", nil)
	for k, v := range e.page(cookie, token) {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The stream stays open (nothing will finish it): read until the
	// deadline cuts it.
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	events := readEvents(t, strings.NewReader(string(data)))
	if len(events) != 1 || events[0].name != "progress" || events[0].data.Phase != "waiting" {
		t.Fatalf("another client's stream leaked: %+v", events)
	}

	// A request refused before any work still ends its stream.
	r := e.do("POST", "/plugins/plan", map[string]string{"source": "relative/path"}, hdr{ProgressHeader: "refused-early"})
	r.wantError(t, 400, "install.invalid_source")
	req, _ = http.NewRequest("GET", e.ts.URL+"/events?progress=refused-early", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	early, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	evs := readEvents(t, early.Body)
	early.Body.Close()
	if len(evs) != 1 || evs[0].name != "done" || evs[0].data.Status != "refused" {
		t.Fatalf("stream of a refused plan: %+v", evs)
	}

	// Bad ids are refused.
	for _, id := range []string{"short", strings.Repeat("x", 65), "has space", "a/b/c/d/e"} {
		e.do("POST", "/plugins/plan", map[string]string{"source": market}, hdr{ProgressHeader: id}).wantError(t, 400, CodeBadRequest)
		e.do("GET", "/events?progress="+url.QueryEscape(id), nil, nil).wantError(t, 400, CodeBadRequest)
	}
}

func TestAddrFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "home")
	path := installer.Home{Dir: dir}.AddrPath()
	if err := WriteAddrFile(path, "127.0.0.1:4242"); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadAddrFile(path); err != nil || got != "127.0.0.1:4242" {
		t.Fatalf("read: %q %v", got, err)
	}
	// Another daemon's address is not ours to remove.
	if err := RemoveAddrFile(path, "127.0.0.1:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal("removed another daemon's address")
	}
	if err := RemoveAddrFile(path, "127.0.0.1:4242"); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAddrFile(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after remove: %v", err)
	}
	for content, want := range map[string]string{
		"example.com:80\n":    "not a loopback",
		"192.168.1.2:7878\n":  "not a loopback",
		"127.0.0.1\n":         "HOST:PORT",
		"127.0.0.1:0\n":       "HOST:PORT",
		"\n":                  "HOST:PORT",
		"[::1]:7878\n":        "",
		"localhost:7878\r\n ": "",
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadAddrFile(path)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", content, err, want)
		}
	}
}

// TestProgressFanout: a request that joins a shared plan late hears what it
// missed, then what follows.
func TestProgressFanout(t *testing.T) {
	t.Parallel()
	var f progressFanout
	early := newProgressStream(time.Now())
	early.begin(false)
	f.add(early)
	report := reporter(f.update)
	report.Start(10)
	report.Resolved(4, 2, 2048)
	late := newProgressStream(time.Now())
	late.begin(true)
	f.add(late)
	f.add(nil)                 // a request without a stream
	report.Resolved(3, 1, 100) // out of order: never goes back
	for name, p := range map[string]*progressStream{"early": early, "late": late} {
		got, done, _ := p.snapshot()
		if done || got.Phase != "resolving" || got.Total != 10 || got.Entries != 4 || got.Repos != 2 || got.Bytes != 2048 {
			t.Errorf("%s: %+v done=%v", name, got, done)
		}
	}
	report.Finish()
	if got, _, _ := late.snapshot(); got.Phase != "applying" {
		t.Errorf("an install's stream after resolving: %q", got.Phase)
	}
	if got, _, _ := early.snapshot(); got.Phase != "resolved" {
		t.Errorf("a plan's stream after resolving: %q", got.Phase)
	}
	late.finish("applied")
	reporter(late.update).Resolved(9, 9, 9) // nothing changes a finished stream
	if got, done, _ := late.snapshot(); !done || got.Phase != "done" || got.Status != "applied" || got.Entries != 4 {
		t.Errorf("finished: %+v done=%v", got, done)
	}
}

// TestShutdownEndsEventStreams: an open event stream does not hold a
// shutdown for its grace period.
func TestShutdownEndsEventStreams(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	srv, err := New(Config{Installer: e.in, Token: testToken, ShutdownTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/events?progress=nobody-reports-here", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("events: %d", resp.StatusCode)
	}
	start := time.Now()
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an open event stream held the shutdown")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
}

// TestLoginOnlyAtLoopback: a daemon reachable beyond loopback
// (--allow-remote) does not sign a browser in there, where the browser
// would not mark the page's requests and the session would cross a network
// in clear; the code stays unspent.
func TestLoginOnlyAtLoopback(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	srv, err := New(Config{Installer: e.in, Token: testToken, AllowRemote: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); srv.Close() })
	r := doURL(t, ts.URL, "POST", "/auth/code", nil, nil)
	code, _ := r.json(t)["code"].(string)
	req, _ := http.NewRequest("GET", ts.URL+"/login?code="+code, nil)
	req.Host = "192.0.2.7:7878"
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 || !strings.Contains(body, "loopback address") {
		t.Fatalf("login at a remote address: %d %v %s", resp.StatusCode, resp.Cookies(), body)
	}
	req, _ = http.NewRequest("GET", ts.URL+"/login?code="+code, nil)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the code after a refused remote sign-in: %d", resp.StatusCode)
	}
}

// TestSessionTablesBounded: what sign-ins make the daemon remember stays
// bounded, dropping the oldest first: sessions (least recently used) and
// the page tokens of replaced sessions.
func TestSessionTablesBounded(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	st := newSessionStore(clock.Now)
	signIn := func(previous string) (string, string) {
		t.Helper()
		code, _, err := st.newCode()
		if err != nil {
			t.Fatal(err)
		}
		cookie, token, err := st.redeem(code, previous)
		if err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
		return cookie, token
	}
	firstCookie, firstToken := signIn("")
	keptCookie, keptToken := signIn("")
	for range maxSessions - 2 {
		signIn("")
	}
	if _, v := st.check(keptCookie, keptToken); v != nil { // used: no longer the oldest
		t.Fatalf("a session among the first %d: %v", maxSessions, v)
	}
	signIn("")
	if len(st.sessions) != maxSessions {
		t.Fatalf("%d sessions kept, want %d", len(st.sessions), maxSessions)
	}
	if _, v := st.check(firstCookie, firstToken); v == nil || !strings.Contains(v.msg, "the session expired") {
		t.Fatalf("the least recently used session was kept: %v", v)
	}
	if _, v := st.check(keptCookie, keptToken); v != nil {
		t.Fatalf("a recently used session was dropped: %v", v)
	}

	cookie, token := signIn("")
	for range maxReplaced + 10 {
		cookie, token = signIn(cookie)
	}
	if len(st.replaced) > maxReplaced {
		t.Fatalf("%d replaced page tokens kept, bound %d", len(st.replaced), maxReplaced)
	}
	next, _ := signIn(cookie)
	if _, v := st.check(next, token); v == nil || v.code != CodeSessionReplaced {
		t.Fatalf("the latest replaced page token: %v", v)
	}
	clock.Advance(codeMemory + time.Second)
	st.mu.Lock()
	st.sweep(clock.Now())
	left := len(st.replaced)
	st.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d replaced page tokens outlived their memory", left)
	}
}
