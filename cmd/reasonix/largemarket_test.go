package main

import (
	"fmt"
	"testing"
	"time"

	"reasonix.io/plugind/internal/bulkmarket"
	"reasonix.io/plugind/internal/fakegithub"
)

// Issue 23, item 3: a cold install and marketplace add of a large
// marketplace shaped like the 269-entry real one that went over 64 MiB
// (long entries, 22 files per plugin, backups, planned skills, docs and
// catalogs beside them: about 14,000 files; relative, github, url and
// git-subdir entries) each peak under SPEC §14's 64 MiB of RSS, measured
// as the process's own peak (internal/peakrss). --yes plans what --dry-run
// plans before it installs, so the dry-run's peak is covered (bench/rss
// measures it apart). Each runs in a home of its own, both at once: the
// peak is each process's, whatever the other does, and the test stays
// short.
func TestLargeMarketplaceUnder64MiB(t *testing.T) {
	t.Parallel()
	const limitRSS = 64 << 20 // SPEC §14
	gh := fakegithub.New(t)
	shape := bulkmarket.Shape{Entries: 269, Repos: 12, Relative: 200, Rich: true}
	m, err := bulkmarket.Build(gh, shape)
	if err != nil {
		t.Fatal(err)
	}
	env := gh.Env()
	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, r result)
	}{
		{"yes", []string{"plugin", "install", m.Source, "--yes"}, func(t *testing.T, r result) {
			if n := countActions(t, r, "installed"); r.code != 0 || n != shape.Entries {
				t.Errorf("exit %d, %d of %d entries installed: %.1000s\n%.2000s", r.code, n, shape.Entries, r.stdout, r.stderr)
			}
		}},
		{"marketplace add", []string{"marketplace", "add", m.Source, "--json"}, func(t *testing.T, r result) {
			if got := fmt.Sprint(r.json(t)["entries"]); r.code != 0 || got != fmt.Sprint(shape.Entries) {
				t.Errorf("exit %d, %s entries: %.1000s\n%.2000s", r.code, got, r.stdout, r.stderr)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := runMeasured(t, 2*time.Minute, t.TempDir(), env, tc.args...)
			tc.check(t, got.result)
			t.Logf("%s: %s (%s of CPU), peak RSS %.1f MiB", tc.name, got.took.Round(time.Millisecond), got.usage.CPU.Round(time.Millisecond), float64(got.usage.PeakRSS)/(1<<20))
			if got.usage.PeakRSS > limitRSS {
				t.Errorf("%s peaked at %.1f MiB of RSS, over SPEC §14's 64 MiB", tc.name, float64(got.usage.PeakRSS)/(1<<20))
			}
		})
	}
}

// countActions counts a plan's or install's actions of the given status.
func countActions(t *testing.T, r result, status string) int {
	t.Helper()
	n := 0
	for _, a := range actionsOf(t, r) {
		if a["status"] == status {
			n++
		}
	}
	return n
}
