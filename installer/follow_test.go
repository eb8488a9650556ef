package installer

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind/internal/fakegithub"
)

// followFixture is the scenario of the update issue, on GitHub or on a
// plain git host: a marketplace at commit A lists three plugins — "pinned"
// (a url entry pinned to a commit of another repository), "rel" (a folder
// of the marketplace itself) and "gone" (another pinned entry). Then the
// marketplace moves: pinned's sha moves to a commit whose tree adds a
// PreToolUse hook, rel is edited, gone is removed.
type followFixture struct {
	gh, plain      *fakegithub.Server
	market, tools  *fakegithub.Repo
	source         string // the marketplace as the user names it
	toolsURL       string
	toolsA, toolsB string
}

func newFollowFixture(t *testing.T, plainHost bool) *followFixture {
	t.Helper()
	f := &followFixture{gh: fakegithub.New(t)}
	if plainHost {
		f.plain = fakegithub.New(t, fakegithub.WithPlainGit())
		f.market = f.plain.CreateRepoAt("team/market")
		f.tools = f.plain.CreateRepoAt("team/tools")
		f.source = "https://git.example.test/team/market.git"
		f.toolsURL = "https://git.example.test/team/tools.git"
	} else {
		f.market = f.gh.CreateRepo("acme", "market")
		f.tools = f.gh.CreateRepo("acme", "tools")
		f.source = "https://github.com/acme/market"
		f.toolsURL = "https://github.com/acme/tools"
	}
	f.toolsA = f.tools.Commit("main", merge(under("pinned", pluginFiles("pinned", "v1")), under("gone", pluginFiles("gone", "v1"))))
	f.market.Commit("main", merge(
		under("plugins/rel", pluginFiles("rel", "v1")),
		map[string]string{".claude-plugin/marketplace.json": marketplaceJSON(t, "team",
			entry("pinned", map[string]any{"source": "url", "url": f.toolsURL, "path": "pinned", "sha": f.toolsA}),
			entry("rel", "./plugins/rel"),
			entry("gone", map[string]any{"source": "url", "url": f.toolsURL, "path": "gone", "sha": f.toolsA}),
		)}))
	return f
}

// move publishes the new pins.
func (f *followFixture) move(t *testing.T) {
	t.Helper()
	f.toolsB = f.tools.Commit("main", map[string]string{
		"pinned/hooks/hooks.json": `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"scripts/guard.sh"}]}]}}`,
		"pinned/scripts/guard.sh": fakegithub.Executable("#!/bin/sh\nexit 0\n"),
	})
	f.market.Commit("main", merge(
		under("plugins/rel", pluginFiles("rel", "v2")),
		map[string]string{".claude-plugin/marketplace.json": marketplaceJSON(t, "team",
			entry("pinned", map[string]any{"source": "url", "url": f.toolsURL, "path": "pinned", "sha": f.toolsB}),
			entry("rel", "./plugins/rel"),
		)}))
}

func (f *followFixture) counts() fakegithub.Counts {
	c := f.gh.Counts()
	if f.plain != nil {
		p := f.plain.Counts()
		c.Total += p.Total
		c.UploadPack += p.UploadPack
		c.Archive += p.Archive
		c.InfoRefs += p.InfoRefs
	}
	return c
}

func (f *followFixture) reset() {
	f.gh.ResetCounts()
	if f.plain != nil {
		f.plain.ResetCounts()
	}
}

func TestUpdateFollowsTheMarketplace(t *testing.T) {
	t.Parallel()
	for _, plainHost := range []bool{false, true} {
		t.Run(map[bool]string{false: "github", true: "plain git host"}[plainHost], func(t *testing.T) {
			t.Parallel()
			f := newFollowFixture(t, plainHost)
			env := newRemoteEnv(t, f.gh, remoteOpts{plain: f.plain})
			resp, err := env.install(Request{Source: mustSource(f.source)}, Approval{Yes: true})
			if err != nil || !resp.Applied {
				t.Fatalf("install: %v %+v", err, resp)
			}
			known, _ := LoadMarketplaces(env.home.MarketplacesPath())
			if k, ok := known.Find("team"); !ok || k.Source.String() != f.source {
				t.Fatalf("installing from the marketplace did not record it: %+v", known)
			}
			before, _ := LoadRegistry(env.home.RegistryPath())
			f.move(t)

			dry, err := env.in.Update(ctxBG(), UpdateRequest{All: true}, Request{}, Approval{DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			acts := actionsByName(dry)
			pinned := acts["pinned"]
			if pinned.Action != ActionReplace || pinned.Previous == nil || pinned.Previous.Commit != f.toolsA || pinned.Commit != f.toolsB {
				t.Fatalf("pinned: %+v", pinned)
			}
			if !containsFragment(pinned.Diff.Summary, "adds hook PreToolUse Bash → scripts/guard.sh") {
				t.Errorf("pinned diff: %+v", pinned.Diff)
			}
			if pinned.Previous.Risk != RiskLow || pinned.Risk == RiskLow {
				t.Errorf("adding a hook did not raise the risk: %s → %s", pinned.Previous.Risk, pinned.Risk)
			}
			if rel := acts["rel"]; rel.Action != ActionReplace || rel.Commit == rel.Previous.Commit || rel.Commit != f.market.Head("main") {
				t.Errorf("rel did not move to the marketplace's new commit: %+v", rel)
			}
			if gone := acts["gone"]; gone.Action != ActionKeep || !containsFragment(gone.Warnings, "no longer lists gone") {
				t.Errorf("gone: %+v", gone)
			}
			if !strings.HasPrefix(dry.PlanID, "medium:") {
				t.Errorf("planId %s: the plan's risk is its riskiest action's", dry.PlanID)
			}

			applied, err := env.in.Update(ctxBG(), UpdateRequest{All: true}, Request{}, Approval{Yes: true, PlanID: planIDOf(t, dry.PlanID)})
			if err != nil || !applied.Applied {
				t.Fatalf("apply: %v %+v", err, applied)
			}
			reg, _ := LoadRegistry(env.home.RegistryPath())
			e, _ := reg.Find("pinned")
			g, _ := reg.Find("gone")
			if e.Commit != f.toolsB || g.Commit != f.toolsA || len(reg.Plugins) != len(before.Plugins) {
				t.Fatalf("registry after update: %+v", reg.Plugins)
			}

			// Nothing moved since: everything up to date, one conditional
			// request for the marketplace (GitHub: a 304), no content.
			f.reset()
			again, err := env.in.Update(ctxBG(), UpdateRequest{All: true}, Request{}, Approval{DryRun: true})
			if err != nil || again.Status != StatusUpToDate {
				t.Fatalf("second update: %v %+v", err, again)
			}
			c := f.counts()
			if c.UploadPack != 0 || c.Archive != 0 {
				t.Errorf("up-to-date re-plan fetched content: %+v", c)
			}
			if !plainHost && (c.Total != 1 || c.APICommits304 != 1) {
				t.Errorf("up-to-date re-plan: %+v, want one 304", c)
			}
			f.reset()
			off, err := env.in.Update(ctxBG(), UpdateRequest{All: true}, Request{Offline: true}, Approval{DryRun: true})
			if err != nil || off.PlanID != again.PlanID || f.counts().Total != 0 {
				t.Errorf("offline: %v planId %s vs %s, %d requests", err, off.PlanID, again.PlanID, f.counts().Total)
			}
		})
	}
}

// An entry that lost its pin keeps the installed commit (never a moving
// head), unless --allow-unpinned.
func TestUpdateNeverFollowsAnUnpinnedEntry(t *testing.T) {
	t.Parallel()
	f := newFollowFixture(t, false)
	env := newRemoteEnv(t, f.gh, remoteOpts{})
	if _, err := env.install(Request{Source: mustSource(f.source)}, Approval{Yes: true}); err != nil {
		t.Fatal(err)
	}
	head := f.tools.Commit("main", under("pinned", pluginFiles("pinned", "v9")))
	f.market.Commit("main", map[string]string{".claude-plugin/marketplace.json": marketplaceJSON(t, "team",
		entry("pinned", map[string]any{"source": "url", "url": f.toolsURL, "path": "pinned"}),
		entry("rel", "./plugins/rel"),
	)})
	resp, err := env.in.Update(ctxBG(), UpdateRequest{Names: []string{"pinned"}}, Request{}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if a := resp.Actions[0]; a.Action != ActionKeep || a.Commit != f.toolsA || !containsFragment(a.Warnings, "stays") {
		t.Fatalf("unpinned entry: %+v", a)
	}
	resp, err = env.in.Update(ctxBG(), UpdateRequest{Names: []string{"pinned"}}, Request{AllowUnpinned: true}, Approval{DryRun: true})
	if err != nil || resp.Actions[0].Commit != head {
		t.Fatalf("--allow-unpinned: %v %+v", err, resp.Actions)
	}
}

// A bulk marketplace where a few repositories moved: update --all fetches
// exactly those repo@SHA and writes the registry once. (The 300/50 size of
// the issue runs as BenchmarkUpdateAll.)
func TestUpdateAllFetchesOnlyWhatMoved(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	updateAllScenario(t, gh, 40, 8, 3)
}

func updateAllScenario(t testing.TB, gh *fakegithub.Server, entries, repos, moved int) (*remoteEnv, time.Duration) {
	bulkMarketplace(t, gh, entries, repos)
	env := newRemoteEnv(t, gh, remoteOpts{home: t.TempDir()})
	if resp, err := env.install(Request{Source: mustSource("https://github.com/bulk/market")}, Approval{Yes: true}); err != nil || !resp.Applied {
		t.Fatalf("install: %v", err)
	}
	// Move the first `moved` repositories and republish the marketplace.
	var list []map[string]any
	perRepo := entries / repos
	for r := 0; r < repos; r++ {
		repo := gh.Repo("bulk", fmt.Sprintf("repo%02d", r))
		sha := repo.Head("main")
		if r < moved {
			files := map[string]string{}
			for p := 0; p < perRepo; p++ {
				files[fmt.Sprintf("plugins/p%03d-%02d/commands/new.md", r, p)] = "---\ndescription: new\n---\nnew\n"
			}
			sha = repo.Commit("main", files)
		}
		for p := 0; p < perRepo; p++ {
			name := fmt.Sprintf("p%03d-%02d", r, p)
			list = append(list, entry(name, map[string]any{"source": "url", "url": "https://github.com/bulk/" + repo.Name, "sha": sha, "path": "plugins/" + name}))
		}
	}
	gh.Repo("bulk", "market").Commit("main", map[string]string{".claude-plugin/marketplace.json": marketplaceJSON(t, "bulk", list...)})
	gh.ResetCounts()
	writes := 0
	env.hook = func(step string) {
		if step == "after-registry" {
			writes++
		}
	}
	start := time.Now()
	resp, err := env.in.Update(ctxBG(), UpdateRequest{All: true}, Request{}, Approval{Yes: true})
	took := time.Since(start)
	if err != nil || !resp.Applied {
		t.Fatalf("update --all: %v %+v", err, resp)
	}
	fetched := 0
	for r := 0; r < repos; r++ {
		if n := gh.RepoCounts("bulk", fmt.Sprintf("repo%02d", r)).Content(); n > 0 {
			fetched++
			if r >= moved || n != 1 {
				t.Errorf("repo%02d fetched %d times", r, n)
			}
		}
	}
	if fetched != moved || writes != 1 {
		t.Fatalf("%d repositories fetched (want %d), %d registry writes (want 1)", fetched, moved, writes)
	}
	moves := 0
	for _, a := range resp.Actions {
		if a.Status == ActionInstalled {
			moves++
		}
	}
	if moves != moved*perRepo {
		t.Fatalf("%d plugins moved, want %d", moves, moved*perRepo)
	}
	return env, took
}

func ctxBG() context.Context { return context.Background() }
