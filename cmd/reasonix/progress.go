package main

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"reasonix.io/plugind"
)

// barProgress draws a bulk plan's progress on a terminal: one bar of
// entries, with repositories and bytes fetched in its description.
type barProgress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func newBarProgress(w io.Writer) *barProgress { return &barProgress{w: w} }

func (p *barProgress) Start(n int) {
	if n < 2 {
		return
	}
	p.bar = progressbar.NewOptions(n,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription("marketplace entries"),
		progressbar.OptionShowCount(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond))
}

func (p *barProgress) Resolved(entries, repos int, bytes int64) {
	if p.bar == nil {
		return
	}
	if repos > 0 {
		p.bar.Describe(fmt.Sprintf("marketplace entries (%d repos, %s fetched)", repos, plugind.HumanBytes(bytes)))
	}
	_ = p.bar.Set(entries)
}

func (p *barProgress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
}
