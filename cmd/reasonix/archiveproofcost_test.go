package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"reasonix.io/plugind/internal/bulkmarket"
	"reasonix.io/plugind/internal/fakegithub"
)

// proofCost sizes TestArchiveProofCost: ENTRIESxREPOS. The measurement of
// issue 27 is
//
//	go test ./cmd/reasonix -run TestArchiveProofCost -v -proof-cost 300x50 -proof-cost-base /path/to/old/reasonix
//
// (the 300/51 marketplace; the base binary's counts are logged beside).
var (
	proofCost     = flag.String("proof-cost", "40x8", "TestArchiveProofCost's size: ENTRIESxREPOS")
	proofCostBase = flag.String("proof-cost-base", "", "TestArchiveProofCost: a reasonix binary from before, whose counts are logged beside")
)

// What proving archives costs a cold bulk install (SPEC §17, §14): at most
// one commit read per archive downloaded, none for a pin the API already
// compared with a ref (the answer names its tree) — over git when git is
// on (no REST request: the API budget is left alone), through the API
// (git/commits/{sha}) when it is off — and no tree walk, which only a
// mismatch needs; every plugin installs, with the same digests either way.
func TestArchiveProofCost(t *testing.T) {
	t.Parallel()
	var entries, repos int
	if _, err := fmt.Sscanf(*proofCost, "%dx%d", &entries, &repos); err != nil {
		t.Fatalf("-proof-cost %q: want ENTRIESxREPOS: %v", *proofCost, err)
	}
	gh := fakegithub.New(t)
	m, err := bulkmarket.Build(gh, bulkmarket.Shape{Entries: entries, Repos: repos})
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	for _, mode := range []struct {
		name string
		env  []string
	}{{"git on", gh.Env()}, {"git off", append(gh.Env(), "REASONIX_GIT=off")}} {
		if *proofCostBase != "" {
			gh.ResetCounts()
			cmd := exec.Command(*proofCostBase, "plugin", "install", m.Source, "--yes")
			cmd.Env = append(append(os.Environ(), "REASONIX_HOME="+t.TempDir()), mode.env...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s, base: %v\n%.2000s", mode.name, err, out)
			}
			t.Logf("%s, base:   %+v", mode.name, gh.Counts())
		}
		gh.ResetCounts()
		got := installedDigests(t, runBinary(t, t.TempDir(), mode.env, "plugin", "install", m.Source, "--yes"), entries)
		c := gh.Counts()
		t.Logf("%s, proven: %+v", mode.name, c)
		if want == nil {
			want = got
		} else {
			checkSameDigests(t, mode.name, want, got)
		}
		if c.APITrees != 0 {
			t.Errorf("%s: %d tree reads, want none (only a mismatch walks the tree)", mode.name, c.APITrees)
		}
		// One commit read for each archive whose pin was not compared.
		reads := c.CommitReads + c.APIGitCommits
		if c.Archive == 0 || reads+c.APICompare < c.Archive || reads > c.Archive-min(c.APICompare, c.Archive) {
			t.Errorf("%s: %d commit reads (%d over git) for %d archives after %d compares; want one for each archive whose pin was not compared", mode.name, reads, c.CommitReads, c.Archive, c.APICompare)
		}
		if gitOff := mode.name == "git off"; gitOff && c.Git() != 0 || !gitOff && c.APIGitCommits != 0 {
			t.Errorf("%s: %d git requests, %d commit reads through the API; want git when it is on, the API when it is off", mode.name, c.Git(), c.APIGitCommits)
		}
	}
}
