package app

import (
	"os"
	"strings"
	"time"
)

// The test-only step switches. The crash-safety and daemon tests set them
// on the binary they run; nothing else should.
const (
	// CrashEnv names a step of apply or publication at which the process
	// kills itself with SIGKILL.
	CrashEnv = "REASONIX_TEST_CRASHPOINT"
	// SlowEnv is "STEP=DURATION" (such as "after-staging=2s"): apply pauses
	// that long at that step, so a test can stop the daemon while an
	// install is in flight.
	SlowEnv = "REASONIX_TEST_SLOWSTEP"
)

// stepHook is the installer's hook (installer.Config.StepHook) the test
// switches of the environment ask for; nil when none is set.
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
