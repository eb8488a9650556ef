package installer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/store"
)

type remoteEnv struct {
	*testEnv
	gh  *fakegithub.Server
	db  *cache.DB
	st  *store.Store
	res *resolver.Sources
}

type remoteOpts struct {
	// plain, when set, serves git.example.test (a plain git host).
	plain   *fakegithub.Server
	gitOff  bool
	timeout time.Duration
	home    string
}

func newRemoteEnv(t testing.TB, gh *fakegithub.Server, o remoteOpts) *remoteEnv {
	t.Helper()
	home := o.home
	if home == "" {
		home = filepath.Join(t.TempDir(), "home")
	}
	env := &testEnv{t: t, home: Home{Dir: home}}
	st, err := store.Open(env.home.StoreDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := cache.OpenWith(context.Background(), env.home.CachePath(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if o.timeout == 0 {
		o.timeout = 5 * time.Second
	}
	// Any other host goes to a closed loopback port: nothing here may
	// reach the internet.
	rules := "https://=http://127.0.0.1:1/"
	if o.plain != nil {
		rules = "https://git.example.test/=" + o.plain.URL + "/ " + rules
	}
	rw, _ := host.ParseRewrite(rules)
	hosts, err := resolver.NewHosts(resolver.HostConfig{
		GitHubURL: gh.URL, APIURL: gh.APIURL, GitOff: o.gitOff, Rewrite: rw,
		Net: host.NetConfig{Timeout: o.timeout, MaxRetryAfter: 2 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := resolver.New(resolver.Config{Store: st, Cache: db, Hosts: hosts})
	env.in = New(Config{Home: env.home, Sources: res, Cache: db, StepHook: func(step string) {
		if env.hook != nil {
			env.hook(step)
		}
	}})
	return &remoteEnv{testEnv: env, gh: gh, db: db, st: st, res: res}
}

func pluginFiles(name, body string) map[string]string {
	return map[string]string{
		".claude-plugin/plugin.json": `{"name":"` + name + `","version":"1.0.0"}`,
		"skills/s/SKILL.md":          "---\ndescription: " + body + "\n---\n" + body + "\n",
		"scripts/run.sh":             fakegithub.Executable("#!/bin/sh\necho " + body + "\n"),
	}
}

func TestRemoteDefaultBranchDryRunThenInstall(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "tools")
	head := repo.Commit("main", pluginFiles("tools", "v1"))
	env := newRemoteEnv(t, gh, remoteOpts{})

	dry, err := env.install(Request{Source: mustSource("git:github.com/acme/tools")}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Resolved.Commit != head || dry.Resolved.Kind != "github" || dry.Actions[0].Commit != head {
		t.Fatalf("resolved = %+v, want commit %s", dry.Resolved, head)
	}
	resp, err := env.install(Request{Source: mustSource("git:github.com/acme/tools")}, Approval{Yes: true, PlanID: planIDOf(t, dry.PlanID)})
	if err != nil || !resp.Applied {
		t.Fatalf("install: %v %+v", err, resp)
	}
	reg, _ := LoadRegistry(env.home.RegistryPath())
	e, _ := reg.Find("tools")
	if e == nil || e.Commit != head || e.Source.String() != "git:github.com/acme/tools" {
		t.Fatalf("registry entry = %+v", e)
	}
	if got, _, _ := plugind.TreeDigest(e.Root, plugind.DefaultBudget); got != e.ContentDigest {
		t.Fatal("installed root does not match its digest")
	}
	if info, err := os.Stat(filepath.Join(e.Root, "scripts", "run.sh")); err != nil || info.Mode()&0o100 == 0 {
		t.Fatalf("executable bit lost: %v", err)
	}
}

func TestRemoteTreeURLWithSlashedRef(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "tools")
	first := repo.Commit("main", map[string]string{"README.md": "main"})
	repo.Tag("release", first) // a ref that is a prefix of the branch: longest match must win
	files := map[string]string{}
	for k, v := range pluginFiles("x", "release-v2") {
		files["plugins/x/"+k] = v
	}
	sha := repo.Commit("release/v2", files)
	for _, gitOff := range []bool{false, true} {
		env := newRemoteEnv(t, gh, remoteOpts{gitOff: gitOff})
		dry, err := env.install(Request{Source: mustSource("https://github.com/acme/tools/tree/release/v2/plugins/x")}, Approval{DryRun: true})
		if err != nil {
			t.Fatalf("gitOff=%v: %v", gitOff, err)
		}
		if dry.Resolved.Ref != "release/v2" || dry.Resolved.Subdir != "plugins/x" || dry.Resolved.Commit != sha || dry.Actions[0].Name != "x" {
			t.Fatalf("gitOff=%v: resolved %+v, action %s", gitOff, dry.Resolved, dry.Actions[0].Name)
		}
	}
}

func TestRemoteGitOffSamePlanViaTarball(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "tools").Commit("main", pluginFiles("tools", "same"))
	withGit := newRemoteEnv(t, gh, remoteOpts{})
	a, err := withGit.install(Request{Source: mustSource("git:github.com/acme/tools")}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	gh.ResetCounts()
	noGit := newRemoteEnv(t, gh, remoteOpts{gitOff: true})
	b, err := noGit.install(Request{Source: mustSource("git:github.com/acme/tools")}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if a.PlanID != b.PlanID || a.ContentDigest != b.ContentDigest || a.ContentDigest == "" {
		t.Fatalf("git %s/%s vs tarball %s/%s", a.PlanID, a.ContentDigest, b.PlanID, b.ContentDigest)
	}
	c := gh.Counts()
	if c.Git() != 0 || c.Archive != 1 {
		t.Fatalf("git off: %+v; want no git requests and one archive download", c)
	}
}

func TestRemoteGitRefusedFallsBackToTarball(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "tools").Commit("main", pluginFiles("tools", "fallback"))
	gh.RefuseGit(true)
	env := newRemoteEnv(t, gh, remoteOpts{})
	resp, err := env.install(Request{Source: mustSource("https://github.com/acme/tools")}, Approval{Yes: true})
	if err != nil || !resp.Applied {
		t.Fatalf("install: %v %+v", err, resp)
	}
	if !strings.Contains(strings.Join(resp.Warnings, "\n"), "used the archive") {
		t.Fatalf("no warning about the fallback: %v", resp.Warnings)
	}
	if c := gh.Counts(); c.Archive != 1 {
		t.Fatalf("counts %+v", c)
	}
}

func TestRemoteWarmThenOfflineReplan(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "tools").Commit("main", pluginFiles("tools", "warm"))
	env := newRemoteEnv(t, gh, remoteOpts{})
	req := Request{Source: mustSource("git:github.com/acme/tools")}
	cold, err := env.install(req, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	gh.ResetCounts()
	warm, err := env.install(req, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	c := gh.Counts()
	if c.Content() != 0 || c.APICommits304 != 1 || c.Total != 1 {
		t.Fatalf("warm re-plan counts %+v; want exactly one 304", c)
	}
	if warm.PlanID != cold.PlanID {
		t.Fatal("warm planId differs")
	}
	gh.ResetCounts()
	offReq := req
	offReq.Offline = true
	off, err := env.install(offReq, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := gh.Counts(); c.Total != 0 {
		t.Fatalf("offline re-plan made requests: %+v", c)
	}
	if off.PlanID != cold.PlanID || off.ContentDigest != cold.ContentDigest {
		t.Fatal("offline planId differs")
	}
	if !strings.Contains(strings.Join(off.Warnings, "\n"), "ago") {
		t.Errorf("offline plan does not say how old the ref is: %v", off.Warnings)
	}
	resp, err := env.install(Request{Source: mustSource("git:github.com/acme/never-seen"), Offline: true}, Approval{DryRun: true})
	wantCode(t, err, resp, plugind.CodeOfflineMiss, "acme/never-seen")
	if c := gh.Counts(); c.Total != 0 {
		t.Fatalf("offline miss made requests: %+v", c)
	}
}

func TestRemoteNetworkDownPlansFromCache(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "tools").Commit("main", pluginFiles("tools", "down"))
	env := newRemoteEnv(t, gh, remoteOpts{})
	req := Request{Source: mustSource("git:github.com/acme/tools")}
	first, err := env.install(req, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	gh.Fault(fakegithub.RouteAll, fakegithub.Fault{Status: 503})
	// Planned from the cache, the same plan — but not checked: said apart,
	// never ok (SPEC §11), the plugin marked.
	again, err := env.install(req, Approval{DryRun: true})
	wantCode(t, err, again, plugind.CodeSourceUnreadable, "could not check 1 plugin (network)")
	if again.PlanID != first.PlanID || !strings.Contains(strings.Join(again.Warnings, "\n"), "planned from cache") {
		t.Fatalf("plan with network down: %s %v", again.PlanID, again.Warnings)
	}
	if len(again.Actions) != 1 || again.Actions[0].Unchecked != "network" || again.Tally().Unchecked != 1 {
		t.Fatalf("the plugin is not marked unchecked: %+v", again.Actions)
	}
	// Offline, the cache was asked for: nothing is unchecked.
	off, err := env.install(Request{Source: req.Source, Offline: true}, Approval{DryRun: true})
	if err != nil || !off.OK || off.PlanID != first.PlanID || off.Tally().Unchecked != 0 {
		t.Fatalf("offline: %v %+v", err, off)
	}
	// Installed, then updated with the network down: not "up to date".
	gh.ClearFaults()
	env.mustInstall(req.Source.String())
	gh.Fault(fakegithub.RouteAll, fakegithub.Fault{Status: 503})
	up, err := env.in.Update(context.Background(), UpdateRequest{All: true}, Request{}, Approval{DryRun: true})
	wantCode(t, err, up, plugind.CodeSourceUnreadable, "could not check 1 plugin")
	if up.Status != StatusUnchecked || up.OK {
		t.Fatalf("update with the network down: %s ok=%v", up.Status, up.OK)
	}
}

func TestRemoteUnsafeContentLeavesNothing(t *testing.T) {
	t.Parallel()
	for _, gitOff := range []bool{false, true} {
		gh := fakegithub.New(t)
		files := pluginFiles("evil", "x")
		files["skills/s/leak"] = fakegithub.Symlink("../../../../../etc/passwd")
		gh.CreateRepo("acme", "evil").Commit("main", files)
		env := newRemoteEnv(t, gh, remoteOpts{gitOff: gitOff})
		env.mustInstall(claudePlugin(t, "keep", "1"))
		before := env.registryBytes()
		resp, err := env.install(Request{Source: mustSource("git:github.com/acme/evil")}, Approval{Yes: true})
		wantCode(t, err, resp, plugind.CodeUnsafeArchive, "leak")
		if !bytes.Equal(before, env.registryBytes()) {
			t.Fatal("registry changed")
		}
		// The local "keep" plugin was copied from a folder, not the store.
		// What the store may hold is the repository's manifest folder,
		// fetched alone to see whether the refused tree is a marketplace
		// whose plugins could still be fetched one by one: never the
		// refused content.
		snaps, _ := env.st.List(context.Background())
		if ents := env.storeStagingEntries(); len(ents) != 0 {
			t.Fatalf("gitOff=%v: staging left behind: %v", gitOff, ents)
		}
		for _, sn := range snaps {
			root, err := env.st.Path(sn.Digest)
			if err != nil {
				t.Fatal(err)
			}
			tree, err := plugind.ScanTree(root, plugind.DefaultBudget)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tree.Files {
				if !strings.HasPrefix(f.Path, ".claude-plugin/") {
					t.Fatalf("gitOff=%v: the store holds %s after a refused fetch", gitOff, f.Path)
				}
			}
		}
	}
}

func TestRemoteFaults(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T, gitOff bool, timeout time.Duration) (*remoteEnv, *fakegithub.Server) {
		gh := fakegithub.New(t)
		gh.CreateRepo("acme", "tools").Commit("main", pluginFiles("tools", "faults"))
		return newRemoteEnv(t, gh, remoteOpts{gitOff: gitOff, timeout: timeout}), gh
	}
	t.Run("two 502s then success", func(t *testing.T) {
		t.Parallel()
		env, gh := setup(t, true, 0)
		gh.Fault(fakegithub.RouteAPI, fakegithub.Fault{Status: 502, Times: 2})
		if resp, err := env.install(Request{Source: mustSource("git:github.com/acme/tools")}, Approval{Yes: true}); err != nil || !resp.Applied {
			t.Fatalf("%v %+v", err, resp)
		}
	})
	t.Run("429 with Retry-After 3600", func(t *testing.T) {
		t.Parallel()
		env, gh := setup(t, true, 0)
		gh.Fault(fakegithub.RouteAPI, fakegithub.Fault{Status: 429, RetryAfter: "3600"})
		start := time.Now()
		resp, err := env.install(Request{Source: mustSource("git:github.com/acme/tools")}, Approval{Yes: true})
		if err == nil || resp.OK {
			t.Fatal("succeeded against a rate limit")
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("took %s: Retry-After was not capped", time.Since(start))
		}
		if !strings.Contains(err.Error(), "retry after") {
			t.Fatalf("unclear error: %v", err)
		}
	})
	t.Run("truncated archive", func(t *testing.T) {
		t.Parallel()
		env, gh := setup(t, true, 0)
		gh.Fault(fakegithub.RouteArchive, fakegithub.Fault{Truncate: true})
		resp, err := env.install(Request{Source: mustSource("git:github.com/acme/tools")}, Approval{Yes: true})
		if err == nil || resp.OK {
			t.Fatal("truncated archive installed")
		}
		if snaps, _ := env.st.List(context.Background()); len(snaps) != 0 || len(env.storeStagingEntries()) != 0 {
			t.Fatalf("something stored: %d snapshots, staging %v", len(snaps), env.storeStagingEntries())
		}
	})
	t.Run("stalled server", func(t *testing.T) {
		t.Parallel()
		env, gh := setup(t, true, 300*time.Millisecond)
		gh.Fault(fakegithub.RouteArchive, fakegithub.Fault{Stall: time.Minute})
		start := time.Now()
		resp, err := env.install(Request{Source: mustSource("git:github.com/acme/tools")}, Approval{Yes: true})
		if err == nil || resp.OK {
			t.Fatal("stalled download succeeded")
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("took %s", time.Since(start))
		}
		if !strings.Contains(err.Error(), "127.0.0.1") {
			t.Fatalf("error does not name the host: %v", err)
		}
	})
}

func TestRemoteConcurrentPlansFetchOnce(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "tools").Commit("main", pluginFiles("tools", "concurrent"))
	env := newRemoteEnv(t, gh, remoteOpts{})
	var wg sync.WaitGroup
	ids := make([]string, 8)
	errs := make([]error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := env.in.Install(context.Background(), Request{Source: mustSource("git:github.com/acme/tools")}, Approval{DryRun: true})
			errs[i] = err
			if resp != nil {
				ids[i] = resp.PlanID
			}
		}()
	}
	wg.Wait()
	for i := range 8 {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("plan %d: %v %s", i, errs[i], ids[i])
		}
	}
	if c := gh.Counts(); c.UploadPack+c.Archive != 1 {
		t.Fatalf("counts %+v: want one content fetch", c)
	}
}
