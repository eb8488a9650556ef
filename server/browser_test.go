package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// The page is tested in a real headless Chromium (Debian's chromium
// package), driven by chromedp: one browser per test binary, a fresh
// browser context (its own cookies and storage) per tab. Everything stays on
// loopback: the browser is given a dead proxy, so only loopback addresses,
// which bypass proxies, can be reached.
//
// Screenshots of each screen are saved when REASONIX_SCREENSHOTS=DIR is set.

const chromiumPath = "/usr/bin/chromium"

// sharedBrowser is the one Chromium of this test binary, started on first
// use and stopped by TestMain.
var sharedBrowser struct {
	once    sync.Once
	ctx     context.Context
	stop    func()
	dir     string
	reason  string // why Chromium could not start
	missing bool   // it is not installed at all (the only reason to skip)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedBrowser.stop != nil {
		sharedBrowser.stop()
	}
	if sharedBrowser.dir != "" {
		os.RemoveAll(sharedBrowser.dir)
	}
	os.Exit(code)
}

func startBrowser() {
	if _, err := os.Stat(chromiumPath); err != nil {
		sharedBrowser.reason = fmt.Sprintf("%s is missing (install Debian's chromium package; .ci/run does): %v", chromiumPath, err)
		sharedBrowser.missing = true
		return
	}
	dir, err := os.MkdirTemp("", "reasonix-chromium-")
	if err != nil {
		sharedBrowser.reason = err.Error()
		return
	}
	sharedBrowser.dir = dir
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.UserDataDir(dir),
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		// Nothing but loopback (which bypasses proxies) is reachable.
		chromedp.Flag("proxy-server", "http://127.0.0.1:9"),
		chromedp.WindowSize(1280, 800),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	// A loaded machine sometimes loses Chromium during its start-up (it
	// exits before printing its DevTools address): try a few times, and
	// keep what it printed for the failure message.
	var (
		ctx                    context.Context
		cancelCtx, cancelAlloc context.CancelFunc
		output                 bytes.Buffer
	)
	for attempt := 1; attempt <= 3; attempt++ {
		output.Reset()
		var alloc context.Context
		alloc, cancelAlloc = chromedp.NewExecAllocator(context.Background(), append(opts, chromedp.CombinedOutput(&lockedWriter{w: &output}))...)
		ctx, cancelCtx = chromedp.NewContext(alloc)
		start, cancelStart := context.WithTimeout(ctx, 60*time.Second)
		done := make(chan error, 1)
		go func() { done <- chromedp.Do(ctx) }()
		select {
		case err = <-done:
		case <-start.Done():
			err = errors.New("timed out after 60 s")
		}
		cancelStart()
		if err == nil {
			break
		}
		cancelCtx()
		cancelAlloc()
		time.Sleep(time.Duration(attempt) * 500 * time.Millisecond)
	}
	if err != nil {
		sharedBrowser.reason = fmt.Sprintf("Chromium (%s) cannot start after 3 attempts: %v; it printed: %s", chromiumPath, err, tail(output.String(), 2000))
		return
	}
	sharedBrowser.ctx = ctx
	sharedBrowser.stop = func() { cancelCtx(); cancelAlloc() }
}

// tab is one browser tab in a browser context of its own, at 1280×800.
type tab struct {
	t      *testing.T
	e      *env
	ctx    context.Context
	height int64 // of the viewport, restored after a screenshot
}

func newTab(t *testing.T, e *env) *tab {
	t.Helper()
	sharedBrowser.once.Do(startBrowser)
	switch {
	case sharedBrowser.ctx == nil && sharedBrowser.missing:
		t.Skip("browser test skipped: " + sharedBrowser.reason)
	case sharedBrowser.ctx == nil:
		// Installed but broken is a failure, not a reason to pass quietly.
		t.Fatal(sharedBrowser.reason)
	}
	ctx, cancel := chromedp.NewContext(sharedBrowser.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// The first run opens the tab and binds it to the context it is given:
	// that must be the tab's own, not one with a deadline.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	p := &tab{t: t, e: e, ctx: ctx}
	p.wide()
	return p
}

// do runs actions with a deadline.
func (p *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("browser: %v (page says: %s)", err, p.bodyText())
	}
}

func run[T any](p *tab, a chromedp.Action[T]) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		p.t.Fatalf("browser: %v (page says: %s)", err, p.bodyText())
	}
	return v
}

// bodyText is the page's text, for failure messages.
func (p *tab) bodyText() string {
	ctx, cancel := context.WithTimeout(p.ctx, 3*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	if len(s) > 3000 {
		s = s[:3000] + "…"
	}
	return s
}

// logTail is the end of the daemon's log, for failure messages.
func (p *tab) logTail() string {
	log := p.e.log.String()
	if len(log) > 4000 {
		log = "…" + log[len(log)-4000:]
	}
	return log
}

func (p *tab) open(path string) { p.t.Helper(); p.do(chromedp.Navigate(p.e.ts.URL + path)) }

func (p *tab) text(sel string) string {
	p.t.Helper()
	return run(p, chromedp.Text(chromedp.CSS(sel)))
}

func (p *tab) click(sel string) {
	p.t.Helper()
	p.do(chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

func (p *tab) visible(sel string) { p.t.Helper(); p.do(chromedp.WaitVisible(chromedp.CSS(sel))) }

func eval[T any](p *tab, js string) T {
	p.t.Helper()
	return run(p, chromedp.Evaluate[T](js))
}

// until waits for a JavaScript condition to hold.
func (p *tab) until(what, js string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(25*time.Second)))
	if err != nil {
		p.t.Fatalf("waiting for %s: %v\npage says: %s\ndaemon log ends with:\n%s", what, err, p.bodyText(), p.logTail())
	}
}

// shot saves a screenshot of the whole page as DIR/NAME.png when
// REASONIX_SCREENSHOTS=DIR is set.
func (p *tab) shot(name string) {
	p.t.Helper()
	dir := os.Getenv("REASONIX_SCREENSHOTS")
	if dir == "" {
		return
	}
	// Capture the whole page as a viewport that tall, so sticky bars sit
	// where they end up rather than over the middle of the page.
	w := eval[int64](p, `window.innerWidth`)
	h := eval[int64](p, `Math.max(document.documentElement.scrollHeight, window.innerHeight)`)
	p.do(chromedp.EmulateViewport(w, h))
	png := run(p, chromedp.CaptureScreenshot())
	p.do(chromedp.EmulateViewport(w, p.height))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// narrow switches to a phone-sized viewport; wide back to 1280×800.
func (p *tab) narrow() { p.t.Helper(); p.height = 844; p.do(chromedp.EmulateViewport(390, 844)) }
func (p *tab) wide()   { p.t.Helper(); p.height = 800; p.do(chromedp.EmulateViewport(1280, 800)) }

// signIn signs the tab in the way `reasonix studio` does: a code from the
// token holder, opened as /login?code=….
func (p *tab) signIn() {
	p.t.Helper()
	p.open("/login?code=" + p.e.loginCode())
	p.visible("#screen-add")
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// downloadsTo makes the tab's browser context save downloads in dir.
func (p *tab) downloadsTo(dir string) {
	p.t.Helper()
	id := chromedp.FromContext(p.ctx).BrowserContextID
	_, err := chromedp.CallBrowser(p.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, BrowserContextID: id, DownloadPath: dir,
	})
	if err != nil {
		p.t.Fatalf("set download behaviour: %v", err)
	}
}

// lockedWriter serializes Chromium's output, which arrives from two pipes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
