package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"

	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/resolver/host"
)

// termProgress is what a person sees on a terminal while a command waits
// (SPEC §11: progress on stderr, only on a terminal): a bar of entries for
// a bulk plan, and otherwise one status line, redrawn in place, saying what
// the command is waiting on — connecting to a host, bytes received, files
// written, a host that has gone silent. Events a person should keep — a
// host that stopped answering, a retry and its wait — are printed as lines
// of their own above it. Nothing is drawn before a second has passed, and
// every line fits the terminal, so nothing is left behind when it redraws.
type termProgress struct {
	mu  sync.Mutex
	con *console

	bar *progressbar.ProgressBar // a bulk plan's entries, when one runs

	begun  time.Time // the first event
	status string    // what the status line says ("" none yet)
	shown  bool      // the status line is on screen
	spin   int
	silent map[string]bool // hosts told silent, until they answer again
	ticker *time.Ticker
	quit   chan struct{}
}

var (
	_ resolver.Progress = (*termProgress)(nil)
	_ host.Watcher      = (*termProgress)(nil)
	_ io.Writer         = (*termProgress)(nil)
)

// statusDelay is how long a command works before its status line shows.
const statusDelay = time.Second

// Start implements resolver.Progress: n entries to resolve.
func (p *termProgress) Start(n int) {
	if n < 2 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	p.bar = progressbar.NewOptions(n,
		progressbar.OptionSetWriter(p.con.w),
		progressbar.OptionSetDescription("entries"),
		progressbar.OptionShowCount(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionUseANSICodes(p.con.redraw),
		// The bar gives up its width to the rest of the line on a narrow
		// terminal; never more than the terminal has.
		progressbar.OptionSetWidth(p.barWidth()),
	)
}

// Resolved implements resolver.Progress.
func (p *termProgress) Resolved(entries, repos int, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		return
	}
	if repos > 0 {
		// Cut to what the terminal leaves beside the bar and its counts.
		desc := fmt.Sprintf("entries (%d repos, %s)", repos, humanize.IBytes(uint64(max(bytes, 0))))
		p.bar.Describe(ansi.Truncate(desc, max(8, p.con.width-p.barWidth()-24), "…"))
	}
	_ = p.bar.Set(entries)
}

func (p *termProgress) barWidth() int { return max(10, min(40, p.con.width-40)) }

// Finish implements resolver.Progress.
func (p *termProgress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
}

// Requesting implements host.Watcher.
func (p *termProgress) Requesting(hostname string) func() {
	p.event("connecting to %s…", hostname)
	return func() {}
}

// Silent implements host.Watcher: the first silence of a host is a line
// of its own, naming it; while it lasts, the status line counts.
func (p *termProgress) Silent(hostname string, d, limit time.Duration) {
	p.mu.Lock()
	told := p.silent[hostname]
	p.silent[hostname] = true
	p.mu.Unlock()
	if !told {
		p.println(p.con.warn(fmt.Sprintf("%s has sent nothing for %s; still waiting (gives up after %s)", safeText(hostname), d, limit)))
	}
	p.event("waiting for %s: nothing for %s (gives up after %s)", hostname, d, limit)
}

// Retrying implements host.Watcher.
func (p *termProgress) Retrying(what string, attempt, of int, wait time.Duration, why error) {
	p.println(p.con.warn(fmt.Sprintf("retrying %s (%d/%d) in %s…", safeText(what), attempt, of, wait.Round(100*time.Millisecond))) +
		" " + safeLine(why.Error(), 0))
	p.event("retrying %s (%d/%d)…", what, attempt, of)
}

// Received implements host.Watcher.
func (p *termProgress) Received(hostname string, n int64) {
	p.mu.Lock()
	delete(p.silent, hostname)
	p.mu.Unlock()
	p.event("receiving from %s: %s", hostname, humanize.IBytes(uint64(max(n, 0))))
}

// Wrote implements host.Watcher.
func (p *termProgress) Wrote(repo string, n int64) {
	p.event("writing the files of %s: %s", repo, humanize.IBytes(uint64(max(n, 0))))
}

// event makes the status line say something new.
func (p *termProgress) event(format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = safeText(s)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = fmt.Sprintf(format, args...)
	if p.begun.IsZero() {
		p.begun = time.Now()
		p.ticker = time.NewTicker(150 * time.Millisecond)
		p.quit = make(chan struct{})
		go p.tick(p.ticker, p.quit)
	}
}

// tick redraws the status line while the command works.
func (p *termProgress) tick(t *time.Ticker, quit chan struct{}) {
	for {
		select {
		case <-quit:
			return
		case <-t.C:
			p.mu.Lock()
			p.drawLocked()
			p.mu.Unlock()
		}
	}
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (p *termProgress) drawLocked() {
	if p.bar != nil || p.status == "" || time.Since(p.begun) < statusDelay {
		return
	}
	p.spin = (p.spin + 1) % len(spinner)
	elapsed := time.Since(p.begun).Truncate(time.Second)
	line := fmt.Sprintf("%s %s (%s)", spinner[p.spin], p.status, elapsed)
	// One column spare: a line that fills the last column makes some
	// terminals wrap, and the next redraw would leave it behind.
	p.eraseLocked()
	fmt.Fprint(p.con.w, ansi.Truncate(line, p.con.width-1, "…"))
	p.shown = true
}

// eraseLocked takes the status line off the screen, the cursor back at
// the start of its row.
func (p *termProgress) eraseLocked() {
	if p.con.redraw {
		fmt.Fprint(p.con.w, "\r"+ansi.EraseEntireLine)
		return
	}
	// TERM=dumb: no escape codes, only carriage returns and blanks.
	fmt.Fprint(p.con.w, "\r"+strings.Repeat(" ", p.con.width-1)+"\r")
}

func (p *termProgress) clearLocked() {
	if p.shown {
		p.eraseLocked()
		p.shown = false
	}
}

// println prints a line of its own above the status line or the bar.
func (p *termProgress) println(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	fmt.Fprintln(p.con.w, p.con.fit(line))
	if p.bar != nil {
		_ = p.bar.RenderBlank()
	}
}

// Write lets log lines (warnings) through without tearing the status
// line: it is cleared first and drawn again at the next tick, and each
// line is fitted to the terminal.
func (p *termProgress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	text := strings.TrimSuffix(string(b), "\n")
	for _, line := range strings.Split(text, "\n") {
		if _, err := fmt.Fprintln(p.con.w, p.con.fit(line)); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// Stop takes the progress off the screen for good, before the command's
// output is printed.
func (p *termProgress) Stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ticker != nil {
		p.ticker.Stop()
		close(p.quit)
		p.ticker = nil
	}
	if p.bar != nil {
		_ = p.bar.Clear()
		p.bar = nil
	}
	p.clearLocked()
	p.status = ""
}
