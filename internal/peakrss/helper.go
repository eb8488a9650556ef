package peakrss

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// helperPackage is the helper a race-built program starts (helper/).
const helperPackage = "reasonix.io/plugind/internal/peakrss/helper"

var (
	helperOnce  sync.Once
	helperBuilt string
	helperErr   error
)

// helperPath is the program Run starts as the helper. The calling program
// itself when it is small at start. A program built with the race
// detector is not: its shadow memory is resident from the start (55 MiB
// and more for a test binary of the whole product), and the command
// forked from it would report that. It gets a helper built without the
// detector instead, once per process (the build cache makes that quick),
// which needs the go command and this module: what a race test has.
func helperPath() (string, error) {
	if !raceBuild {
		return os.Executable()
	}
	helperOnce.Do(func() { helperBuilt, helperErr = buildHelper() })
	return helperBuilt, helperErr
}

// buildHelper builds helperPackage into a per-user folder of the temporary
// directory, under a fresh name renamed into place, so test binaries
// building it at once each start a complete one.
func buildHelper() (string, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("peakrss-helper-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("peakrss: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "build-*")
	if err != nil {
		return "", fmt.Errorf("peakrss: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	build := exec.Command("go", "build", "-o", tmp.Name(), helperPackage)
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("peakrss: build the helper (a race-built program needs one): %v\n%s", err, out)
	}
	path := filepath.Join(dir, "helper")
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("peakrss: %w", err)
	}
	return path, nil
}
