// Command helper is peakrss's helper for programs that cannot be their own:
// those built with the race detector (see peakrss.Run).
package main

import (
	"fmt"
	"os"

	"reasonix.io/plugind/internal/peakrss"
)

func main() {
	peakrss.Serve()
	fmt.Fprintln(os.Stderr, "peakrss helper: run it through peakrss.Run")
	os.Exit(2)
}
