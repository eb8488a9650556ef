package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"reasonix.io/plugind/internal/headless"
)

// The page is tested in a real headless Chromium (internal/headless).
// Screenshots of each screen are saved when REASONIX_SCREENSHOTS=DIR is set.

func TestMain(m *testing.M) {
	code := m.Run()
	headless.Stop()
	os.Exit(code)
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
	p := &tab{t: t, e: e, ctx: headless.NewTab(t)}
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
