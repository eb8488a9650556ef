package main

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"reasonix.io/plugind/internal/peakrss"
)

// measured is a run of the built binary with what it cost.
type measured struct {
	result
	took  time.Duration
	usage peakrss.Usage // the process's own peak RSS and CPU, not its parent's
}

// runMeasured runs the built binary with REASONIX_HOME=home, killing it
// after limit (a hang is a failure, not a stuck test), and reports its
// wall time, CPU and peak memory.
func runMeasured(t *testing.T, limit time.Duration, home string, env []string, args ...string) measured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	var u peakrss.Usage
	r := runBinaryWith(t, home, env, args, func(cmd *exec.Cmd) (err error) {
		u, err = peakrss.Run(ctx, cmd)
		return err
	})
	if ctx.Err() != nil {
		t.Fatalf("reasonix %v did not finish within %s (killed); stderr: %.2000s", args, limit, r.stderr)
	}
	return measured{result: r, took: time.Since(start), usage: u}
}
