package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"time"
)

// Profiling switches for benchmarks (bench/bulk.sh, bench/rss; issues 13,
// 23 and 24): an execution trace and a CPU profile of the whole run, the
// allocation profile at its end, and the heap profile at its peak. They are read by main only, never
// by Main.Run, so tests cannot turn them on.
const (
	cpuProfileEnv   = "REASONIX_CPUPROFILE"
	allocProfileEnv = "REASONIX_ALLOCPROFILE"
	memProfileEnv   = "REASONIX_MEMPROFILE"
	traceEnv        = "REASONIX_TRACE"
)

// startProfiles starts what the environment asks for and returns the
// function that writes the profiles out; problems are reported on stderr
// and never stop the command.
func startProfiles(getenv func(string) string, stderr io.Writer) (stop func()) {
	// record starts a recorder of the whole run into the file env names
	// and returns what stops it.
	record := func(env string, start func(io.Writer) error, stop func()) func() {
		p := getenv(env)
		if p == "" {
			return func() {}
		}
		f, err := os.Create(p)
		if err == nil {
			err = start(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "reasonix: %s: %v\n", env, err)
			return func() {}
		}
		return func() { stop(); _ = f.Close() }
	}
	stopCPU := record(cpuProfileEnv, pprof.StartCPUProfile, pprof.StopCPUProfile)
	stopTrace := record(traceEnv, trace.Start, trace.Stop)
	allocPath := getenv(allocProfileEnv)
	memPath := getenv(memProfileEnv)
	// Unasked, the runtime samples allocations anyway, into a 1.4 MiB
	// table it touches page by page: about 1 ms of a re-plan in page
	// faults (issue 24).
	runtime.MemProfileRate = 0
	if allocPath != "" || memPath != "" {
		runtime.MemProfileRate = 64 << 10
	}
	stopPeak := func() {}
	if memPath != "" {
		stopPeak = watchPeakHeap(memPath, stderr)
	}
	return func() {
		stopPeak()
		stopCPU()
		stopTrace()
		if allocPath == "" {
			return
		}
		runtime.GC() // the profile is as of the last collection
		if err := writeProfile("allocs", allocPath); err != nil {
			fmt.Fprintf(stderr, "reasonix: %s: %v\n", allocProfileEnv, err)
		}
	}
}

// watchPeakHeap writes the heap profile to path each time the live heap
// (as of the last collection) passes its highest level so far by 1 MiB:
// what is left in path at the end shows what was held at the peak, which
// is what RSS is made of. The profile records allocations as of the last
// completed collection, the same moment the metric describes. At the end
// one line on stderr gives the peaks of the live heap and of all the
// memory the Go runtime holds (heap with its garbage, stacks, metadata),
// to tell them from what is not Go's (the binary's pages, SQLite's).
func watchPeakHeap(path string, stderr io.Writer) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for _, c := range goMemoryClasses {
		samples = append(samples, metrics.Sample{Name: c.metric})
	}
	var peakLive, peakGo uint64
	atPeak := make([]uint64, len(goMemoryClasses))
	go func() {
		defer close(finished)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(samples)
			for _, s := range samples {
				if s.Value.Kind() != metrics.KindUint64 {
					return
				}
			}
			var total uint64
			for i := range goMemoryClasses {
				total += samples[i+1].Value.Uint64()
			}
			if total > peakGo {
				peakGo = total
				for i := range goMemoryClasses {
					atPeak[i] = samples[i+1].Value.Uint64()
				}
			}
			if live := samples[0].Value.Uint64(); live > peakLive+1<<20 {
				peakLive = live
				if err := writeProfile("heap", path); err != nil {
					fmt.Fprintf(stderr, "reasonix: %s: %v\n", memProfileEnv, err)
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		parts := make([]string, len(goMemoryClasses))
		for i, c := range goMemoryClasses {
			parts[i] = fmt.Sprintf("%s %.1f", c.name, float64(atPeak[i])/(1<<20))
		}
		fmt.Fprintf(stderr, "reasonix: %s: peak live heap %.1f MiB, peak Go runtime memory %.1f MiB (%s)\n", memProfileEnv, float64(peakLive)/(1<<20), float64(peakGo)/(1<<20), strings.Join(parts, ", "))
	}
}

// goMemoryClasses are the parts of the memory the Go runtime holds from
// the system (runtime/metrics' /memory/classes, less what it released).
var goMemoryClasses = []struct{ name, metric string }{
	{"objects", "/memory/classes/heap/objects:bytes"},
	{"free", "/memory/classes/heap/free:bytes"},
	{"unused", "/memory/classes/heap/unused:bytes"},
	{"stacks", "/memory/classes/heap/stacks:bytes"},
	{"os stacks", "/memory/classes/os-stacks:bytes"},
	{"metadata", "/memory/classes/metadata/other:bytes"},
	{"mspans", "/memory/classes/metadata/mspan/inuse:bytes"},
	{"other", "/memory/classes/other:bytes"},
	{"profiling", "/memory/classes/profiling/buckets:bytes"},
}

func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = pprof.Lookup(name).WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
