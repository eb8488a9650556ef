// Package peakrss runs a command and reports what it cost: the peak resident
// set of its own address space, and its CPU time.
//
// Why not the rusage os/exec already gives: ru_maxrss keeps the high-water
// mark of every address space a process had, and exec records the one it
// replaces. os/exec starts a child with vfork, in its parent's address space,
// so the child of a benchmark or a test binary holding 200 MiB of fixtures
// reports 200 MiB for /bin/true. Run starts the command from a helper
// instead: the calling program re-executed, which calls Serve first thing,
// while it is a few MiB, and forks the command from there (or, when the
// calling program is built with the race detector, a small helper program
// built for it: helper.go).
package peakrss

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Usage is what a finished command cost.
type Usage struct {
	// PeakRSS is the high-water mark, in bytes, of the command's resident
	// set (its own, not the helper's it was forked from).
	PeakRSS int64
	// CPU is its user and system time.
	CPU time.Duration
}

// helperEnv marks the re-executed program as the helper.
const helperEnv = "PEAKRSS_HELPER"

// reportFD is the helper's descriptor for its report (the first of
// exec.Cmd.ExtraFiles).
const reportFD = 3

// Serve turns this process into the helper when Run started it as one: it
// runs the command named by its arguments, writes its usage to Run, and
// exits with its status. Otherwise it returns at once. Call it first in
// main (or TestMain), before the process grows.
func Serve() {
	if os.Getenv(helperEnv) == "" || len(os.Args) < 2 {
		return
	}
	os.Unsetenv(helperEnv)
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = dieWithParent()
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(127)
	}
	report := os.NewFile(reportFD, "peakrss-report")
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		fmt.Fprintf(report, "%d %d\n", ru.Maxrss, cpu)
	}
	report.Close()
	code := cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	os.Exit(code)
}

// Run runs cmd, which must not have been started, through the helper (its
// Path, Args, Env, Dir, Stdin, Stdout and Stderr are used), and returns
// what it cost. A non-zero exit is an *exec.ExitError with its code, as
// from cmd.Run. ctx kills the helper, and with it the command.
func Run(ctx context.Context, cmd *exec.Cmd) (Usage, error) {
	self, err := helperPath()
	if err != nil {
		return Usage{}, err
	}
	h := exec.CommandContext(ctx, self, append([]string{cmd.Path}, cmd.Args[1:]...)...)
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	h.Env = append(env[:len(env):len(env)], helperEnv+"=1")
	h.Dir, h.Stdin, h.Stdout, h.Stderr = cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr
	r, w, err := os.Pipe()
	if err != nil {
		return Usage{}, fmt.Errorf("peakrss: %w", err)
	}
	defer r.Close()
	h.ExtraFiles = []*os.File{w}
	err = h.Start()
	w.Close()
	if err != nil {
		return Usage{}, fmt.Errorf("peakrss: %w", err)
	}
	report, rerr := io.ReadAll(r)
	err = h.Wait()
	var u Usage
	var kib int64
	if _, serr := fmt.Sscan(strings.TrimSpace(string(report)), &kib, &u.CPU); serr != nil || rerr != nil {
		if err == nil {
			err = fmt.Errorf("peakrss: no report from the helper (%q): does %s call peakrss.Serve first?", report, self)
		}
		return Usage{}, err
	}
	u.PeakRSS = kib << 10
	return u, err
}
