// Package headless gives browser tests a real headless Chromium (Debian's
// chromium package), driven by chromedp: one browser per test binary,
// started on first use, and a fresh browser context (its own cookies and
// storage) per tab. Everything stays on loopback: the browser is given a
// dead proxy, so only loopback addresses, which bypass proxies, can be
// reached.
package headless

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ChromiumPath is where the browser is expected.
const ChromiumPath = "/usr/bin/chromium"

// browser is the one Chromium of a test binary.
type browser struct {
	once    sync.Once
	ctx     context.Context
	stop    func()
	dir     string
	reason  string // why Chromium could not start
	missing bool   // it is not installed at all (the only reason to skip)
}

var shared browser

// Stop stops the browser, if one started; TestMain calls it after m.Run.
func Stop() {
	if shared.stop != nil {
		shared.stop()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
}

// NewTab opens a tab in a browser context of its own at 1280×800, closed
// at the end of the test. A test is skipped only when Chromium is not
// installed; one that is installed but cannot start fails the test.
func NewTab(t *testing.T) context.Context {
	t.Helper()
	shared.once.Do(shared.start)
	switch {
	case shared.ctx == nil && shared.missing:
		t.Skip("browser test skipped: " + shared.reason)
	case shared.ctx == nil:
		t.Fatal(shared.reason)
	}
	ctx, cancel := chromedp.NewContext(shared.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// The first run opens the tab and binds it to the context it is given:
	// that must be the tab's own, not one with a deadline.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return ctx
}

func (b *browser) start() {
	if _, err := os.Stat(ChromiumPath); err != nil {
		b.reason = fmt.Sprintf("%s is missing (install Debian's chromium package; .ci/run does): %v", ChromiumPath, err)
		b.missing = true
		return
	}
	dir, err := os.MkdirTemp("", "reasonix-chromium-")
	if err != nil {
		b.reason = err.Error()
		return
	}
	b.dir = dir
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(ChromiumPath),
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
	// keep what it printed for the failure message, in a file (Chromium
	// writes from two pipes, and an *os.File takes concurrent writes).
	var (
		ctx                    context.Context
		cancelCtx, cancelAlloc context.CancelFunc
		output                 *os.File
	)
	for attempt := 1; attempt <= 3; attempt++ {
		if output, err = os.Create(filepath.Join(dir, fmt.Sprintf("output-%d.txt", attempt))); err != nil {
			b.reason = err.Error()
			return
		}
		var alloc context.Context
		alloc, cancelAlloc = chromedp.NewExecAllocator(context.Background(), append(opts, chromedp.CombinedOutput(output))...)
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
		_ = output.Close()
		time.Sleep(time.Duration(attempt) * 500 * time.Millisecond)
	}
	if err != nil {
		data, _ := os.ReadFile(output.Name())
		out := string(data)
		if len(out) > 2000 {
			out = "…" + out[len(out)-2000:]
		}
		b.reason = fmt.Sprintf("Chromium (%s) cannot start after 3 attempts: %v; it printed: %s", ChromiumPath, err, out)
		return
	}
	b.ctx = ctx
	b.stop = func() { cancelCtx(); cancelAlloc() }
}
