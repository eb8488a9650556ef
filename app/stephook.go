package app

import (
	"os"
	"strings"
	"time"
)

// CrashEnv and SlowEnv are test-only switches, which the crash-safety and
// daemon tests set on the binary they run (nothing else should): at the
// step of apply or publication CrashEnv names, the process kills itself
// with SIGKILL; SlowEnv="STEP=DURATION" (such as "after-staging=2s") makes
// apply pause that long at that step, so a test can stop the daemon while
// an install is in flight.
const (
	CrashEnv = "REASONIX_TEST_CRASHPOINT"
	SlowEnv  = "REASONIX_TEST_SLOWSTEP"
)

// stepHook is the installer's StepHook those switches ask for (nil: none).
func stepHook(getenv func(string) string) func(string) {
	if step := getenv(CrashEnv); step != "" {
		return func(s string) {
			if s == step {
				self, err := os.FindProcess(os.Getpid())
				if err == nil {
					_ = self.Kill() // SIGKILL: no deferred function runs
				}
			}
		}
	}
	step, dur, ok := strings.Cut(getenv(SlowEnv), "=")
	if !ok {
		return nil
	}
	d, err := time.ParseDuration(dur)
	if err != nil || d <= 0 {
		return nil
	}
	return func(s string) {
		if s == step {
			time.Sleep(d)
		}
	}
}
