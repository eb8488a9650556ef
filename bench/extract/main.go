// Command extract is the extraction benchmark of SPEC §14: it times
// tarball.ExtractTarGz against `tar -xzf` on the same generated ~200 MiB
// archive and reports throughput and our peak RSS. Run it through
// bench/extract.sh.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/peakrss"
	"reasonix.io/plugind/tarball"
)

func main() {
	peakrss.Serve() // timed's helper: returns unless started as one
	out := flag.String("out", "bench/_out", "directory for the cached archive and scratch extractions")
	mib := flag.Int64("mib", 200, "content size of the generated archive, MiB")
	runs := flag.Int("runs", 3, "timed runs of each extractor; the best counts")
	scratch := flag.String("scratch", "", "where extractions go (default: -out); e.g. /dev/shm to take the disk out of the measurement")
	asFetched := flag.Bool("as-fetched", false, "extract as a GitHub archive fetch into the store does: each file hashed for the store, written read-only, and the tree hashed as git does to prove it against the commit (SPEC §17)")
	child := flag.Bool("child", false, "internal: extract -archive into -dest and print the result")
	archive := flag.String("archive", "", "internal: archive for -child")
	dest := flag.String("dest", "", "internal: destination for -child")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if *child {
		err = extractChild(ctx, *archive, *dest, *asFetched)
	} else {
		err = bench(ctx, *out, *scratch, *mib<<20, *runs, *asFetched)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "extract bench:", err)
		os.Exit(1)
	}
}

// extractChild is the measured process: nothing but the extraction, so its
// peak RSS is the extractor's.
func extractChild(ctx context.Context, archive, dest string, asFetched bool) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	opts := tarball.Options{StripRoot: true, ExpectCommit: benchCommit}
	if asFetched {
		// As resolver/host/github's archive fetch for the store asks.
		opts.Hash, opts.ReadOnly, opts.GitTree = true, true, true
	}
	res, err := tarball.ExtractTarGz(ctx, f, dest, opts)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(childReport{Result: *res, VmHWM: vmHWM()})
}

// childReport is what the measured child prints.
type childReport struct {
	tarball.Result
	VmHWM int64 // bytes, -1 when unknown
}

type run struct {
	wall   time.Duration
	cpu    time.Duration // user+sys
	maxRSS int64         // bytes
}

func bench(ctx context.Context, out, scratch string, content int64, runs int, asFetched bool) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	archive, c, err := cachedArchive(ctx, out, content)
	if err != nil {
		return err
	}
	info, err := os.Stat(archive)
	if err != nil {
		return err
	}
	fmt.Printf("archive  %s\n         %s compressed, %s of content in %d files\n",
		archive, plugind.HumanBytes(info.Size()), plugind.HumanBytes(c.ContentBytes), c.Files)

	self, err := os.Executable()
	if err != nil {
		return err
	}
	if scratch == "" {
		scratch = out
	}
	tarDir, ourDir := filepath.Join(scratch, "x-tar"), filepath.Join(scratch, "x-ours")
	fmt.Printf("extracting into %s\n", scratch)
	defer os.RemoveAll(tarDir)
	defer os.RemoveAll(ourDir)
	var tarRuns, ourRuns []run
	selfRSS := int64(-1)
	var res childReport
	// Interleaved so that a noisy neighbour on the machine hurts both alike.
	for i := 0; i < runs; i++ {
		if err := os.RemoveAll(tarDir); err != nil {
			return err
		}
		if err := os.Mkdir(tarDir, 0o755); err != nil {
			return err
		}
		r, _, err := timed(ctx, "tar", "-xzf", archive, "-C", tarDir)
		if err != nil {
			return fmt.Errorf("tar -xzf: %w", err)
		}
		tarRuns = append(tarRuns, r)

		if err := os.RemoveAll(ourDir); err != nil {
			return err
		}
		args := []string{"-child", "-archive", archive, "-dest", ourDir}
		if asFetched {
			args = append(args, "-as-fetched")
		}
		r, stdout, err := timed(ctx, self, args...)
		if err != nil {
			return fmt.Errorf("ExtractTarGz: %w", err)
		}
		if err := json.Unmarshal(stdout, &res); err != nil {
			return fmt.Errorf("child output %q: %w", stdout, err)
		}
		selfRSS = max(selfRSS, res.VmHWM)
		ourRuns = append(ourRuns, r)
	}
	if res.Files != c.Files {
		return fmt.Errorf("ExtractTarGz wrote %d files, the archive has %d", res.Files, c.Files)
	}
	// The same tree came out of both (tar keeps symlinks, we materialize
	// them; the digest reads through links, so it compares content).
	tarDigest, _, err := plugind.TreeDigest(filepath.Join(tarDir, "acme-bench-"+benchCommit[:7]), plugind.DefaultBudget)
	if err != nil {
		return err
	}
	ourDigest, _, err := plugind.TreeDigest(ourDir, plugind.DefaultBudget)
	if err != nil {
		return err
	}
	if tarDigest != ourDigest {
		return fmt.Errorf("trees differ: tar %s, ours %s", tarDigest, ourDigest)
	}

	tarBest, ourBest := best(tarRuns), best(ourRuns)
	mbps := func(d time.Duration) float64 { return float64(c.ContentBytes) / (1 << 20) / d.Seconds() }
	ratio := tarBest.wall.Seconds() / ourBest.wall.Seconds()
	peak := slices.MaxFunc(ourRuns, func(a, b run) int { return int(a.maxRSS - b.maxRSS) }).maxRSS
	fmt.Printf("tar -xzf      best %7.3fs of %s  %7.1f MiB/s of content  (cpu user+sys %s)\n", tarBest.wall.Seconds(), walls(tarRuns), mbps(tarBest.wall), cpu(tarBest))
	fmt.Printf("ExtractTarGz  best %7.3fs of %s  %7.1f MiB/s of content  (cpu user+sys %s)\n", ourBest.wall.Seconds(), walls(ourRuns), mbps(ourBest.wall), cpu(ourBest))
	fmt.Printf("throughput ratio ours/tar  %.2f  (target >= 0.80: %s)\n", ratio, verdict(ratio >= 0.80))
	fmt.Printf("peak RSS of ExtractTarGz   %s  (target < 64 MiB: %s; the child's own VmHWM: %s; tar -xzf: %s)\n",
		mib(peak), verdict(peak >= 0 && peak < 64<<20), mib(selfRSS), mib(tarBest.maxRSS))
	fmt.Printf("trees identical            %s\n", ourDigest)
	return nil
}

// cachedArchive returns the generated archive for content bytes, making it
// on first use. The name carries the generator version and size.
func cachedArchive(ctx context.Context, out string, content int64) (string, corpus, error) {
	path := filepath.Join(out, fmt.Sprintf("extract-v1-%dMiB.tar.gz", content>>20))
	meta := path + ".json"
	var c corpus
	if b, err := os.ReadFile(meta); err == nil && json.Unmarshal(b, &c) == nil {
		if _, err := os.Stat(path); err == nil {
			return path, c, nil
		}
	}
	fmt.Printf("generating %s ...\n", path)
	start := time.Now()
	c, err := generate(ctx, path, content)
	if err != nil {
		return "", c, fmt.Errorf("generate archive: %w", err)
	}
	b, _ := json.Marshal(c)
	if err := os.WriteFile(meta, b, 0o644); err != nil {
		return "", c, err
	}
	fmt.Printf("generated in %s\n", time.Since(start).Round(time.Millisecond))
	return path, c, nil
}

// timed runs a command and returns its wall time, its peak RSS and CPU
// (peakrss: the command's own, not this bigger process's, which vfork and
// exec would report instead) and its stdout.
func timed(ctx context.Context, name string, args ...string) (run, []byte, error) {
	cmd := exec.Command(name, args...)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	syscall.Sync() // earlier runs' dirty pages are not this run's cost
	start := time.Now()
	u, err := peakrss.Run(ctx, cmd)
	wall := time.Since(start)
	if err != nil {
		return run{}, nil, err
	}
	return run{wall: wall, cpu: u.CPU, maxRSS: u.PeakRSS}, []byte(stdout.String()), nil
}

// vmHWM is this process's peak RSS as the kernel counts it for the current
// address space (unaffected by whoever forked us), or -1.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kib << 10
			}
		}
	}
	return -1
}

func best(rs []run) run {
	return slices.MinFunc(rs, func(a, b run) int { return int(a.wall - b.wall) })
}

func walls(rs []run) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%.3f", r.wall.Seconds()))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func cpu(r run) string {
	return fmt.Sprintf("%.2fs", r.cpu.Seconds())
}

func mib(n int64) string {
	if n < 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
