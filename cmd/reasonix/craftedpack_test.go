package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind/internal/fakegithub"
)

// Issue 21, item 1: a hostile git host answers a fetch with a pack crafted
// to cost its reader — deltas stored last first (resolved pass after pass,
// 40,000 took 17-35 s), or a million tiny objects (a record and two map
// entries each: 147 MB of RSS at 500,000). What the attacker gets through
// the real binary, from the command line and through a marketplace's url
// and git-subdir entries: a small crafted pack is indexed in well under
// the time the old indexer took, a large one is refused from its header
// with install.budget_exceeded naming the count and the bound, and every
// run stays under SPEC §14's 64 MiB with nothing written outside the home.
func TestCraftedPacksBoundedThroughTheBinary(t *testing.T) {
	t.Parallel()
	h := newHostile(t, fakegithub.WithPlainGit())
	env := []string{"REASONIX_URL_REWRITE=https://git.evil.test/=" + h.gh.URL + "/"}
	pins := map[string]string{}
	crafted := func(name string, extra []fakegithub.PackObject) string {
		repo := h.gh.CreateRepoAt("evil/" + name)
		pins[name] = repo.Commit("main", pluginTree(name))
		repo.ServeCraftedPack(pins[name], extra)
		return "https://git.evil.test/evil/" + name + ".git"
	}
	const limitRSS = 64 << 20 // SPEC §14
	// Seconds of the process's CPU where the old indexer took 28 (40,000
	// deltas) to hours (400,000); CPU, not wall time, which on a shared
	// machine counts whatever else runs.
	const limitCPU = 5 * time.Second
	timed := func(t *testing.T, args ...string) result {
		t.Helper()
		m := runMeasured(t, 2*time.Minute, h.home, env, args...)
		r, u, wall := m.result, m.usage, m.took
		if u.CPU > limitCPU {
			t.Errorf("%v took %s of CPU", args, u.CPU)
		}
		if u.PeakRSS > limitRSS {
			t.Errorf("%v peaked at %.1f MiB of RSS", args, float64(u.PeakRSS)/(1<<20))
		}
		t.Logf("%s: exit %d in %s (%s of CPU), peak RSS %.1f MiB", args[2], r.code, wall.Round(time.Millisecond), u.CPU.Round(time.Millisecond), float64(u.PeakRSS)/(1<<20))
		return r
	}

	// Under the bound: indexed and installed.
	chain40k := crafted("chain40k", fakegithub.ReversedDeltaChain(40_000))
	r := timed(t, "plugin", "install", chain40k, "--yes")
	if r.code != 0 {
		t.Fatalf("40,000 reversed deltas: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runBinary(t, h.home, env, "plugin", "remove", "chain40k", "--yes")
	if r.code != 0 {
		t.Fatalf("remove: %s %s", r.stdout, r.stderr)
	}
	h.unchanged(t)

	// Over it: refused from the pack's header, naming the count and the
	// bound (ten objects a file of the 20,000-file budget).
	big := map[string]string{
		"chain400k": crafted("chain400k", fakegithub.ReversedDeltaChain(400_000)),
		"tiny1m":    crafted("tiny1m", fakegithub.TinyBlobs(1_000_000)),
	}
	for name, src := range big {
		r := timed(t, "plugin", "install", src, "--yes")
		if r.code != 1 {
			t.Fatalf("%s: exit %d, want 1\n%s\n%s", name, r.code, r.stdout, r.stderr)
		}
		out := r.json(t)
		msg, _ := out["error"].(string)
		if out["errorCode"] != "install.budget_exceeded" || !strings.Contains(msg, "objects, more than the 200000 a fetch of one commit may index") {
			t.Fatalf("%s: %v", name, out)
		}
		h.unchanged(t)
	}

	// As marketplace entries: those entries are blocked, the others
	// install.
	market := h.gh.CreateRepoAt("evil/market")
	market.Commit("main", map[string]string{
		".claude-plugin/marketplace.json": fmt.Sprintf(`{"name":"m","owner":{"name":"o"},"plugins":[
			{"name":"chain400k","source":{"source":"url","url":%q,"sha":%q}},
			{"name":"tiny1m","source":{"source":"git-subdir","url":%q,"path":".","sha":%q}},
			{"name":"fine","source":"./fine"}]}`, big["chain400k"], pins["chain400k"], big["tiny1m"], pins["tiny1m"]),
		"fine/.claude-plugin/plugin.json": `{"name":"fine"}`,
		"fine/skills/s/SKILL.md":          "---\ndescription: fine\n---\n",
	})
	r = timed(t, "plugin", "install", "https://git.evil.test/evil/market.git", "--dry-run")
	acts := actionsOf(t, r)
	for _, name := range []string{"chain400k", "tiny1m"} {
		if acts[name]["status"] != "blocked" || acts[name]["errorCode"] != "install.budget_exceeded" {
			t.Errorf("%s: %v", name, acts[name])
		}
	}
	if acts["fine"]["status"] != "ready" {
		t.Errorf("fine: %v", acts["fine"])
	}
	h.unchanged(t)
}
