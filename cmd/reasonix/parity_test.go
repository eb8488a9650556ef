package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/parity"
)

// The parity goldens of issue 22: what Claude Code 2.1.197 made of each
// entry of a marketplace (testdata/parity/goldens/MARKETPLACE/PLUGIN.json,
// recorded by bench/claude-side-by-side.sh --goldens), held against what
// reasonix plans and installs from the same marketplace. Every entry is
// either equal, or differs only as testdata/parity/allowed.json allows, or
// is on testdata/parity/pending-core.json (known differences pending issue
// 22 core, printed, and failing once they no longer differ so). Anything
// else fails.
const (
	parityDir     = "testdata/parity"
	parityGoldens = parityDir + "/goldens"
)

// TestParityFixture installs testdata/parity/fixture (one entry per
// inventory rule of issue 22: strict:false component paths, a marketplace
// root entry listing skills, declared components replacing default folders,
// nested agents and commands, bare-form hooks, conflicting manifests,
// defaultEnabled, displayName, MCP servers and hooks in files and inline)
// and compares every entry with Claude's golden.
func TestParityFixture(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	fixture := filepath.Join(parityDir, "fixture")
	inst := run(t, home, nil, "plugin", "install", fixture, "--yes")
	if inst.code != 0 && inst.code != 1 {
		t.Fatalf("install %s: exit %d\n%s\n%s", fixture, inst.code, inst.stdout, inst.stderr)
	}
	list := run(t, home, nil, "plugin", "list", "--json")
	if list.code != 0 {
		t.Fatalf("list: exit %d\n%s", list.code, list.stderr)
	}
	checkParity(t, "fixture", filepath.Join(fixture, ".claude-plugin", "marketplace.json"),
		parityRun{response: inst.stdout, list: list.stdout, manifest: installedManifest}, true, nil)
}

// parityRun is one install of a marketplace: reasonix's response, `plugin
// list --json` after it ("" after a dry run), and how to read a plugin's
// .claude-plugin/plugin.json (nil when it has none).
type parityRun struct {
	response, list string
	manifest       func(o *parity.Ours) ([]byte, error)
}

// installedManifest reads an installed plugin's manifest.
func installedManifest(o *parity.Ours) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(o.Root, ".claude-plugin", "plugin.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// checkParity compares reasonix's install response and plugin list with
// the goldens of one marketplace. With every set, each entry must have a
// golden (the fixture); otherwise entries Claude did not try (a repository
// not brought here) are counted and left out. notHere, when set, says why
// an entry cannot be compared here ("" when it can).
func checkParity(t *testing.T, market, marketJSON string, r parityRun, every bool, notHere func(parity.Entry) string) []parity.Result {
	t.Helper()
	results := compareParity(t, market, marketJSON, r, every, notHere)
	pending, err := parity.LoadPending(filepath.Join(parityDir, "pending-core.json"))
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv(parity.ResultsEnv); dir != "" {
		if err := parity.WriteResults(filepath.Join(dir, market+".json"), results); err != nil {
			t.Fatal(err)
		}
	}
	v := pending.Judge(market, results)
	t.Logf("parity %s: %s; %d differences pending issue 22 core, %d failing", market, parity.Count(results), len(v.Pending), len(v.Failures))
	if len(v.Allowed) > 0 {
		t.Logf("%s: allowed differences:\n  %s", market, strings.Join(v.Allowed, "\n  "))
	}
	if len(v.Unseen) > 0 {
		t.Logf("%s: reasonix items from files claude plugin details cannot show (declared one by one, or in a subfolder):\n  %s", market, strings.Join(v.Unseen, "\n  "))
	}
	if len(v.Pending) > 0 {
		t.Logf("%s: known differences pending issue 22 core:\n  %s", market, strings.Join(v.Pending, "\n  "))
	}
	for _, f := range v.Failures {
		t.Errorf("%s: %s", market, f)
	}
	return results
}

// compareParity compares every entry that has a golden, in the
// marketplace's order.
func compareParity(t *testing.T, market, marketJSON string, r parityRun, every bool, notHere func(parity.Entry) string) []parity.Result {
	t.Helper()
	allowed, err := parity.LoadAllowed(filepath.Join(parityDir, "allowed.json"))
	if err != nil {
		t.Fatal(err)
	}
	goldens, err := parity.ReadGoldens(filepath.Join(parityGoldens, market))
	if err != nil {
		t.Fatal(err)
	}
	_, entries, err := parity.ReadMarketplace(marketJSON)
	if err != nil {
		t.Fatal(err)
	}
	var list []byte
	if r.list != "" {
		list = []byte(r.list)
	}
	ours, err := parity.ReadOurs([]byte(r.response), list)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.response)
	}
	var results []parity.Result
	isEntry := map[string]bool{}
	untried, incomparable := 0, 0
	for _, e := range entries {
		isEntry[e.Name] = true
		g := goldens[e.Name]
		if g == nil {
			if every {
				t.Errorf("%s: no golden for entry %s: record them again (testdata/parity/README.md)", market, e.Name)
			}
			untried++
			continue
		}
		if notHere != nil {
			if why := notHere(e); why != "" {
				t.Logf("%s: %s is not compared: %s", market, e.Name, why)
				incomparable++
				continue
			}
		}
		o := ours.Get(e.Name)
		results = append(results, parity.Compare(market, g, o, e, allowed, detailsBlind(t, r, o, e)))
	}
	for name := range goldens {
		if !isEntry[name] {
			t.Errorf("%s: golden %s is not an entry of the marketplace: record them again", market, name)
		}
	}
	t.Logf("%s: %d entries, %d compared, %d not tried by Claude (their repository was not brought here), %d not comparable here",
		market, len(entries), len(results), untried, incomparable)
	return results
}

// detailsBlind reads, from the plugin's manifest and its entry, which
// command and agent files `claude plugin details` cannot show
// (parity.DetailsBlind).
func detailsBlind(t *testing.T, r parityRun, o *parity.Ours, e parity.Entry) parity.DetailsBlind {
	t.Helper()
	if o == nil || !o.Installed() {
		return parity.DetailsBlind{}
	}
	manifest, err := r.manifest(o)
	if err != nil {
		t.Fatal(err)
	}
	return parity.DetailsView(manifest, e.Raw)
}

// TestParityCorpus holds reasonix to Claude's goldens on the corpus
// marketplaces (testdata/parity/goldens/OWNER__NAME): each is served by a
// fake GitHub from its skeletons (testdata/parity/skeletons/OWNER__NAME;
// the repositories reduced to the names that decide an inventory, with the
// manifests the corpus holds read from REASONIX_CORPUS), planned with
// `reasonix plugin install https://github.com/OWNER/NAME --dry-run
// --allow-unpinned` (Claude installs unpinned entries too; the plan says
// what an install would do, which TestParityFixture checks by installing),
// and compared entry by entry. It needs REASONIX_CORPUS, not the
// repositories. With REASONIX_PARITY_MIRRORS naming the fetched
// repositories too, it also installs from them and requires the same
// outcome of every entry: the skeletons stand for the repositories. testdata/parity/README.md says how
// to record goldens and skeletons again.
func TestParityCorpus(t *testing.T) {
	t.Parallel()
	corpus := fakegithub.CorpusDir(t)
	mirrors := os.Getenv(parity.MirrorsEnv)
	dirs, err := os.ReadDir(parityGoldens)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		market := d.Name()
		if !d.IsDir() || market == "fixture" {
			continue
		}
		t.Run(market, func(t *testing.T) {
			t.Parallel()
			mcorpus := filepath.Join(corpus, market)
			skeletons, err := parity.ReadSkeletons(filepath.Join(parityDir, "skeletons", market))
			if err != nil {
				t.Fatalf("%v (write them: bench/parity-goldens.sh --skeletons-only MARKETPLACE; testdata/parity/README.md)", err)
			}
			byName := entriesByName(t, market, mcorpus, skeletons)
			var served map[string]string
			planned := installCorpusMarket(t, market, mcorpus, byName, true, func(gh *fakegithub.Server) map[string]string {
				if served, err = parity.Serve(gh, skeletons, mcorpus); err != nil {
					t.Fatal(err)
				}
				return served
			})
			planned.manifest = func(o *parity.Ours) ([]byte, error) {
				return parity.ServedFile(skeletons, served, mcorpus, o.Source, ".claude-plugin/plugin.json")
			}
			repo := strings.Replace(market, "__", "/", 1)
			notHere := func(e parity.Entry) string {
				if sub := parity.SubmoduleOf(skeletons, repo, e); sub != "" {
					return "its folder holds the submodule " + sub + ", whose repository is not here"
				}
				return ""
			}
			results := checkParity(t, market, filepath.Join(mcorpus, "marketplace.json"), planned, false, notHere)
			if mirrors == "" {
				return
			}
			installed := installCorpusMarket(t, market, mcorpus, byName, false, func(gh *fakegithub.Server) map[string]string {
				return serveMirrors(t, gh, mirrors, skeletons)
			})
			installed.manifest = installedManifest
			real := compareParity(t, market, filepath.Join(mcorpus, "marketplace.json"), installed, false, notHere)
			for i := range results {
				if !slices.Equal(results[i].Differences, real[i].Differences) || !slices.Equal(results[i].Allowed, real[i].Allowed) {
					t.Errorf("%s: the skeleton is not faithful: from the skeletons %q %q (%s), from the repositories %q %q (%s)",
						results[i].Plugin, results[i].Differences, results[i].Allowed, results[i].ReasonixError,
						real[i].Differences, real[i].Allowed, real[i].ReasonixError)
				}
			}
		})
	}
}

// entriesByName lists the entries of a marketplace whose repository is a
// plugin too, which Claude tried (they have goldens): installing that
// repository installs the plugin at its root, so they are installed one by
// one by name, as Claude installs them. nil for any other marketplace.
func entriesByName(t *testing.T, market, mcorpus string, skeletons []*parity.Skeleton) []string {
	t.Helper()
	if !parity.RootIsPlugin(skeletons, strings.Replace(market, "__", "/", 1)) {
		return nil
	}
	goldens, err := parity.ReadGoldens(filepath.Join(parityGoldens, market))
	if err != nil {
		t.Fatal(err)
	}
	_, entries, err := parity.ReadMarketplace(filepath.Join(mcorpus, "marketplace.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if goldens[e.Name] != nil {
			out = append(out, e.Name)
		}
	}
	return out
}

// installCorpusMarket serves one corpus marketplace with serve (which
// returns the served commit of each pinned one, or nil), installs it with
// reasonix (or plans it: dryRun) and returns the response and, after an
// install, `plugin list --json`. With byName, it adds the marketplace and
// installs those entries by name (NAME@MARKET), one response of them all.
func installCorpusMarket(t *testing.T, market, mcorpus string, byName []string, dryRun bool, serve func(*fakegithub.Server) map[string]string) parityRun {
	t.Helper()
	gh := fakegithub.New(t)
	served := serve(gh)
	repo := strings.Replace(market, "__", "/", 1)
	if served != nil {
		doc, err := os.ReadFile(filepath.Join(mcorpus, "marketplace.json"))
		if err != nil {
			t.Fatal(err)
		}
		if pinned := parity.RewritePins(doc, served); !bytes.Equal(pinned, doc) {
			owner, name, _ := strings.Cut(repo, "/")
			r := gh.Repo(owner, name)
			before := r.Head("main")
			after := r.Commit("main", map[string]string{".claude-plugin/marketplace.json": string(pinned)})
			for orig, now := range served {
				if now == before { // the marketplace's commit is this one now
					served[orig] = after
				}
			}
		}
	}
	home := t.TempDir()
	mode := "--yes"
	if dryRun {
		mode = "--dry-run"
	}
	var r parityRun
	if byName == nil {
		inst := run(t, home, gh.Env(), "plugin", "install", "https://github.com/"+repo, mode, "--allow-unpinned")
		if inst.code != 0 && inst.code != 1 {
			t.Fatalf("install %s: exit %d\n%s\n%s", repo, inst.code, inst.stdout, inst.stderr)
		}
		r.response = inst.stdout
	} else {
		r.response = installByName(t, home, gh.Env(), repo, filepath.Join(mcorpus, "marketplace.json"), mode, byName)
	}
	if dryRun {
		return r
	}
	list := run(t, home, nil, "plugin", "list", "--json")
	if list.code != 0 {
		t.Fatalf("list: exit %d\n%s", list.code, list.stderr)
	}
	r.list = list.stdout
	return r
}

// installByName adds the marketplace repo and installs (mode --yes) or
// plans (--dry-run) each of names from it by name; the responses are
// merged into one.
func installByName(t *testing.T, home string, env []string, repo, marketJSON, mode string, names []string) string {
	t.Helper()
	add := run(t, home, env, "marketplace", "add", "https://github.com/"+repo)
	if add.code != 0 {
		t.Fatalf("marketplace add %s: exit %d\n%s\n%s", repo, add.code, add.stdout, add.stderr)
	}
	mname, _, err := parity.ReadMarketplace(marketJSON)
	if err != nil {
		t.Fatal(err)
	}
	responses := make([][]byte, 0, len(names))
	for _, name := range names {
		inst := run(t, home, env, "plugin", "install", name+"@"+mname, mode, "--allow-unpinned")
		if inst.code != 0 && inst.code != 1 {
			t.Fatalf("install %s@%s: exit %d\n%s\n%s", name, mname, inst.code, inst.stdout, inst.stderr)
		}
		responses = append(responses, []byte(inst.stdout))
	}
	merged, err := parity.MergeResponses(names, responses)
	if err != nil {
		t.Fatal(err)
	}
	return string(merged)
}

// serveMirrors serves the real repositories the skeletons stand for, with
// their history (repaired where the snapshot's HEAD lacks files: then the
// repaired commit stands for HEAD, and it returns the one for the other,
// for the pins to be rewritten).
func serveMirrors(t *testing.T, gh *fakegithub.Server, mirrors string, skeletons []*parity.Skeleton) map[string]string {
	t.Helper()
	served := map[string]string{}
	done := map[string]bool{}
	for _, s := range skeletons {
		if done[s.Repo] {
			continue
		}
		done[s.Repo] = true
		g := parity.MirrorGitDir(context.Background(), mirrors, s.Repo)
		if g == "" {
			t.Fatalf("%s is not in %s", s.Repo, mirrors)
		}
		head, err := parity.Git(context.Background(), g, nil, "rev-parse", "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		var pinned []string // the other commits its skeletons stand for
		for _, o := range skeletons {
			if o.Repo == s.Repo && o.Commit != head {
				pinned = append(pinned, o.Commit)
			}
		}
		repaired := filepath.Join(t.TempDir(), "repaired.git")
		if _, rebuilt, ok, err := parity.Repair(context.Background(), g, repaired, pinned...); err != nil {
			t.Fatal(err)
		} else if ok {
			g = repaired
			maps.Copy(served, rebuilt)
		}
		if _, err := gh.ImportGitDir(s.Repo, g); err != nil {
			t.Fatal(err)
		}
	}
	return served
}
