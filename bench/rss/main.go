// Command rss is the peak-memory benchmark of the hardening issue and SPEC
// §14: it serves repositories that are cheap to download and expensive to
// hold — one 300 MiB blob, one 1 GiB blob (zeros: a few hundred KiB on the
// wire), 25,000 small files, and a small plugin in a folder beside a huge
// file — from the fake GitHub on loopback, runs the real reasonix binary
// against each over git and over archives, and reports the outcome and the
// peak RSS of the reasonix process. Every run must stay under 64 MiB.
//
// Then large marketplaces (issue 23, markets.go): a rich one shaped like
// the 269-entry real marketplace that first went over 64 MiB, a 1,000-entry
// one over 200 repositories, each planned, installed and added as a known
// marketplace, and eight large repositories fetched over git at once.
//
// It also serves what a hostile git host would (issue 21): packs crafted to
// cost their reader, a chain of REF deltas stored last first and a million
// tiny objects, over git only. Each must finish or be refused in under 2 s
// of the process's CPU time.
//
// The RSS is the reasonix process's own (internal/peakrss): the rusage of a
// child os/exec starts counts this process's resident set as well.
//
//	go run ./bench/rss            (builds ./reasonix into a temp dir)
//	go run ./bench/rss -bin ./reasonix -runs 3
//	go run ./bench/rss -only marketplace   (the cases whose name says so)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/peakrss"
)

const limitMiB = 64

func main() {
	peakrss.Serve() // runCase's helper: returns unless started as one
	bin := flag.String("bin", "", "reasonix binary (default: build one)")
	runs := flag.Int("runs", 1, "runs per case; the highest RSS counts")
	only := flag.String("only", "", "run only the cases whose name contains this")
	flag.Parse()
	if err := bench(*bin, *runs, *only); err != nil {
		fmt.Fprintln(os.Stderr, "rss bench:", err)
		os.Exit(1)
	}
}

type benchCase struct {
	name, source, want string // want: an error code, or "ok"
	// gitOnly: a crafted pack, which only git brings.
	gitOnly bool
	// maxCPU fails a run whose reasonix process takes more CPU time (0: no
	// bound). CPU, not wall time: on a shared machine the wall time counts
	// whatever else runs; both are printed.
	maxCPU time.Duration
	// prepare builds the case's repository, only when the case runs.
	prepare func()
	// market, when set, is the marketplace the case runs against (on a
	// fake of its own), and args its command line, whose empty argument
	// is the marketplace's source; otherwise: install source --yes.
	market *lazyMarket
	args   []string
}

// command is c's reasonix command line, and the fake it runs against.
func (c benchCase) command(shared *fakegithub.Server) ([]string, *fakegithub.Server, error) {
	if c.market == nil {
		return []string{"plugin", "install", c.source, "--yes"}, shared, nil
	}
	fake, src, err := c.market.get()
	if err != nil {
		return nil, nil, err
	}
	args := append([]string(nil), c.args...)
	for i, a := range args {
		if a == "" {
			args[i] = src
		}
	}
	return args, fake, nil
}

func bench(bin string, runs int, only string) error {
	work, err := os.MkdirTemp("", "reasonix-rss-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if bin == "" {
		bin = filepath.Join(work, "reasonix")
		build := exec.Command("go", "build", "-o", bin, "./cmd/reasonix")
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // as the README builds it
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build: %w", err)
		}
	}
	fake, err := fakegithub.Start(filepath.Join(work, "fake"))
	if err != nil {
		if err := os.MkdirAll(filepath.Join(work, "fake"), 0o755); err != nil {
			return err
		}
		if fake, err = fakegithub.Start(filepath.Join(work, "fake")); err != nil {
			return err
		}
	}
	defer fake.Close()
	plugin := map[string]string{
		"plugin/.claude-plugin/plugin.json": `{"name":"small","version":"1.0.0"}`,
		"plugin/skills/s/SKILL.md":          "---\ndescription: small\n---\n",
	}
	fmt.Fprintln(os.Stderr, "building repositories…")
	start := time.Now()
	r300 := fake.CreateRepo("rss", "blob300")
	r300.Commit("main", plugin)
	r300.CommitLargeFile("main", "assets/blob.bin", 300<<20)
	r1g := fake.CreateRepo("rss", "blob1g")
	r1g.Commit("main", plugin)
	r1g.CommitLargeFile("main", "assets/blob.bin", 1<<30)
	many := fake.CreateRepo("rss", "files25k")
	many.Commit("main", plugin)
	many.CommitManyFiles("main", "data", 25000, 64)
	// A marketplace whose own repository holds the 300 MiB blob, with a
	// relative entry, and git-subdir and github entries into blob300 (issue
	// 13: the budget counts the plugin, not the monorepo).
	sha300 := r300.Commit("main", map[string]string{"README.md": "blob300\n"})
	market := fake.CreateRepo("rss", "market300")
	doc, err := json.Marshal(map[string]any{
		"name": "market300", "owner": map[string]string{"name": "rss"},
		"plugins": []map[string]any{
			{"name": "rel", "source": "./plugin"},
			{"name": "sub", "source": map[string]any{"source": "git-subdir", "url": "https://github.com/rss/blob300.git", "path": "plugin", "sha": sha300}},
			{"name": "gh", "source": map[string]any{"source": "github", "repo": "rss/blob300", "path": "plugin", "sha": sha300}},
		},
	})
	if err != nil {
		return err
	}
	market.Commit("main", map[string]string{
		".claude-plugin/marketplace.json":   string(doc),
		"plugin/.claude-plugin/plugin.json": `{"name":"rel","version":"1.0.0"}`,
		"plugin/skills/s/SKILL.md":          "---\ndescription: rel\n---\n",
	})
	market.CommitLargeFile("main", "assets/blob.bin", 300<<20)
	fmt.Fprintf(os.Stderr, "repositories ready in %s\n", time.Since(start).Round(time.Millisecond))

	cases := []benchCase{
		{name: "300 MiB blob, whole repository", source: "git:github.com/rss/blob300", want: "install.budget_exceeded"},
		{name: "300 MiB blob, plugin folder beside it", source: "https://github.com/rss/blob300/tree/main/plugin", want: "ok"},
		{name: "1 GiB blob, whole repository", source: "git:github.com/rss/blob1g", want: "install.budget_exceeded"},
		{name: "1 GiB blob, plugin folder beside it", source: "https://github.com/rss/blob1g/tree/main/plugin", want: "ok"},
		{name: "25,000 files, whole repository", source: "git:github.com/rss/files25k", want: "install.budget_exceeded"},
		{name: "25,000 files, plugin folder beside them", source: "https://github.com/rss/files25k/tree/main/plugin", want: "ok"},
		{name: "300 MiB marketplace: 3 kinds of entry", source: "git:github.com/rss/market300", want: "ok"},
	}
	cases = append(cases, craftedCases(fake)...)
	markets := marketCases(work)
	for _, c := range markets {
		defer c.market.close()
	}
	cases = append(cases, markets...)
	fmt.Printf("%-50s %-8s %-26s %8s %8s %10s %s\n", "case", "via", "outcome", "wall", "cpu", "peak RSS", "")
	failed := false
	for _, c := range cases {
		if !strings.Contains(c.name, only) {
			continue
		}
		if c.prepare != nil {
			c.prepare()
		}
		vias := []string{"git", "archive"}
		if c.gitOnly {
			vias = vias[:1]
		}
		for _, via := range vias {
			var worst result
			for i := 0; i < runs; i++ {
				res, err := runCase(bin, fake, work, c, via)
				if err != nil {
					return err
				}
				if res.rssKiB > worst.rssKiB {
					worst = res
				}
			}
			verdict := "ok"
			if worst.outcome != c.want || worst.rssKiB > limitMiB<<10 || (c.maxCPU > 0 && worst.cpu > c.maxCPU) {
				verdict, failed = "FAIL", true
			}
			fmt.Printf("%-50s %-8s %-26s %8s %8s %7.1f MiB %s\n", c.name, via, worst.outcome, worst.wall.Round(time.Millisecond), worst.cpu.Round(time.Millisecond), float64(worst.rssKiB)/1024, verdict)
		}
	}
	if failed {
		return fmt.Errorf("a case gave the wrong outcome, went over %d MiB or took too long", limitMiB)
	}
	return nil
}

type result struct {
	outcome   string
	wall, cpu time.Duration // cpu: the reasonix process's, whatever else runs
	rssKiB    int64
}

// runCase runs c in a fresh home, returning its outcome, times and the
// reasonix process's peak RSS.
func runCase(bin string, shared *fakegithub.Server, work string, c benchCase, via string) (result, error) {
	args, fake, err := c.command(shared)
	if err != nil {
		return result{}, err
	}
	home, err := os.MkdirTemp(work, "home-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(home)
	env := append(os.Environ(), "REASONIX_HOME="+home)
	env = append(env, fake.Env()...)
	if via == "archive" {
		env = append(env, "REASONIX_GIT=off")
	}
	start := time.Now()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var stdout strings.Builder
	cmd.Stdout = &stdout
	usage, runErr := peakrss.Run(context.Background(), cmd) // the outcome is in the JSON
	res := result{wall: time.Since(start), cpu: usage.CPU, rssKiB: usage.PeakRSS >> 10}
	out := []byte(stdout.String())
	// Plans and installs answer {ok, errorCode}; marketplace add --json
	// the marketplace, or an error.
	var resp struct {
		OK        *bool  `json:"ok"`
		ErrorCode string `json:"errorCode"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return res, fmt.Errorf("%s: not JSON (%v): %s", c.name, err, strings.TrimSpace(string(out)))
	}
	switch {
	case resp.ErrorCode != "":
		res.outcome = resp.ErrorCode
	case resp.OK != nil && *resp.OK, resp.OK == nil && runErr == nil:
		res.outcome = "ok"
	default:
		res.outcome = fmt.Sprintf("failed (%v)", runErr)
	}
	return res, nil
}
