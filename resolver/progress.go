package resolver

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
