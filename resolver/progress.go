package resolver

import "context"

// Progress hears about a bulk plan's work so a terminal can show it; the
// resolver never draws anything itself.
type Progress interface {
	// Start announces n entries to resolve.
	Start(n int)
	// Resolved reports entries done, with the repositories fetched and the
	// bytes they brought so far.
	Resolved(entries int, repos int, bytes int64)
	// Finish ends the display.
	Finish()
}

type noProgress struct{}

func (noProgress) Start(int)                {}
func (noProgress) Resolved(int, int, int64) {}
func (noProgress) Finish()                  {}

type progressKey struct{}

// WithProgress makes p hear about the bulk work done under ctx, instead of
// the resolver's configured Progress (the daemon streams one request's
// progress to the page that asked).
func WithProgress(ctx context.Context, p Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

func (s *Sources) progress(ctx context.Context) Progress {
	if p, ok := ctx.Value(progressKey{}).(Progress); ok && p != nil {
		return p
	}
	return s.cfg.Progress
}
