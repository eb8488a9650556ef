package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// Profiling switches for benchmarks (bench/bulk.sh, issue 13): a CPU
// profile of the whole run, and the allocation profile at its end. They
// are read by main only, never by Main.Run, so tests cannot turn them on.
const (
	cpuProfileEnv   = "REASONIX_CPUPROFILE"
	allocProfileEnv = "REASONIX_ALLOCPROFILE"
)

// startProfiles starts what the environment asks for and returns the
// function that writes the profiles out; problems are reported on stderr
// and never stop the command.
func startProfiles(getenv func(string) string, stderr io.Writer) (stop func()) {
	var cpu *os.File
	if p := getenv(cpuProfileEnv); p != "" {
		f, err := os.Create(p)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "reasonix: %s: %v\n", cpuProfileEnv, err)
		} else {
			cpu = f
		}
	}
	allocPath := getenv(allocProfileEnv)
	if allocPath != "" {
		runtime.MemProfileRate = 64 << 10
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			_ = cpu.Close()
		}
		if allocPath == "" {
			return
		}
		f, err := os.Create(allocPath)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "reasonix: %s: %v\n", allocProfileEnv, err)
		}
	}
}
