package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// measured is a run of the built binary with what it cost.
type measured struct {
	result
	took   time.Duration
	maxRSS int64 // bytes, the process's peak resident set
}

// runMeasured runs the built binary with REASONIX_HOME=home, killing it
// after limit (a hang is a failure, not a stuck test), and reports its
// time and peak memory.
func runMeasured(t *testing.T, limit time.Duration, home string, env []string, args ...string) measured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = append(append(os.Environ(), "REASONIX_HOME="+home), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	m := measured{result: result{stdout: out.String(), stderr: errb.String()}, took: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("reasonix %v did not finish within %s (killed); stderr: %.2000s", args, limit, errb.String())
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		m.code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.maxRSS = ru.Maxrss << 10 // Linux reports KiB
	}
	return m
}
