package main

import (
	"strings"
	"time"
)

// slowEnv names the test-only slow-step switch: "STEP=DURATION" (such as
// "after-staging=2s") makes apply pause that long at that step, so the
// daemon tests can stop the process while an install is in flight. Like
// REASONIX_TEST_CRASHPOINT, nothing else should set it.
const slowEnv = "REASONIX_TEST_SLOWSTEP"

func (m *Main) slowStepHook() func(string) {
	step, dur, ok := strings.Cut(m.Getenv(slowEnv), "=")
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
