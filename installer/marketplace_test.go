package installer

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/source"
)

// under prefixes every path of files with dir.
func under(dir string, files map[string]string) map[string]string {
	out := make(map[string]string, len(files))
	for k, v := range files {
		out[dir+"/"+k] = v
	}
	return out
}

func marketplaceJSON(t testing.TB, name string, plugins ...map[string]any) string {
	t.Helper()
	doc := map[string]any{
		"name": name, "owner": map[string]any{"name": "acme"},
		"metadata": map[string]any{"pluginRoot": "./plugins"},
		"plugins":  plugins,
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func entry(name string, src any, extra ...any) map[string]any {
	e := map[string]any{"name": name, "source": src}
	for i := 0; i+1 < len(extra); i += 2 {
		e[extra[i].(string)] = extra[i+1]
	}
	return e
}

// kindsFixture is a marketplace with every entry kind of SPEC §7 over four
// repositories on the fake.
type kindsFixture struct {
	gh                            *fakegithub.Server
	tools, other, gsHead, gsSlash string
	gsOld                         string
	doc                           string
	plugins                       map[string]string // the marketplace's own plugin folders
}

func newKindsFixture(t *testing.T) *kindsFixture {
	t.Helper()
	gh := fakegithub.New(t)
	fx := &kindsFixture{gh: gh}
	fx.tools = gh.CreateRepo("acme", "tools").Commit("main", under("plugins/u", pluginFiles("u-plug", "url")))
	fx.other = gh.CreateRepo("acme", "other").Commit("main", pluginFiles("gh-plug", "github"))
	gs := gh.CreateRepo("acme", "gs")
	fx.gsOld = gs.Commit("main", merge(under("p1", pluginFiles("gs-default", "old")), under("p3", pluginFiles("gs-pinned", "old"))))
	fx.gsSlash = gs.Commit("release/v2", under("p2", pluginFiles("gs-slashed", "slashed")))
	fx.gsHead = gs.Commit("main", merge(under("p1", pluginFiles("gs-default", "new")), under("p3", pluginFiles("gs-pinned", "new"))))
	fx.doc = marketplaceJSON(t, "kinds",
		entry("rel-plug", "./plugins/rel"),
		entry("bare-plug", "bare"),
		entry("u-plug", map[string]any{"source": "url", "url": "https://github.com/acme/tools.git", "sha": fx.tools, "path": "plugins/u"}),
		entry("gh-plug", map[string]any{"source": "github", "repo": "acme/other", "sha": fx.other}),
		entry("gs-default", map[string]any{"source": "git-subdir", "url": "https://github.com/acme/gs", "path": "p1"}),
		entry("gs-slashed", map[string]any{"source": "git-subdir", "url": "acme/gs", "path": "p2", "ref": "release/v2"}),
		entry("gs-pinned", map[string]any{"source": "git-subdir", "url": "https://github.com/acme/gs", "path": "p3", "ref": "main", "sha": fx.gsOld}),
		entry("npm-plug", map[string]any{"source": "npm", "package": "@acme/x"}),
		entry("unpinned", map[string]any{"source": "github", "repo": "acme/other"}),
		entry("loose", "./plugins/rel", "strict", false),
		entry("elsewhere", "https://example.com/x.git"),
	)
	fx.plugins = merge(under("plugins/rel", pluginFiles("rel-plug", "rel")), under("plugins/bare", pluginFiles("bare-plug", "bare")))
	return fx
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// localCopy writes the fixture marketplace into a folder (without the fake's
// Executable markers, which only the fake understands).
func (fx *kindsFixture) localCopy(t *testing.T) string {
	files := map[string]string{".claude-plugin/marketplace.json": fx.doc}
	for k, v := range fx.plugins {
		if strings.HasSuffix(k, ".sh") {
			continue
		}
		files[k] = v
	}
	return writeTree(t, filepath.Join(t.TempDir(), "market"), files)
}

func (fx *kindsFixture) remote(t *testing.T) (src, sha string) {
	sha = fx.gh.CreateRepo("acme", "market").Commit("main", merge(fx.plugins, map[string]string{".claude-plugin/marketplace.json": fx.doc}))
	return "https://github.com/acme/market", sha
}

func actionsByName(resp *Response) map[string]Action {
	out := map[string]Action{}
	for _, a := range resp.Actions {
		out[a.Name] = a
	}
	return out
}

func TestMarketplaceEveryEntryKind(t *testing.T) {
	t.Parallel()
	fx := newKindsFixture(t)
	mkSrc, mkSHA := fx.remote(t)
	local := fx.localCopy(t)
	for _, tc := range []struct {
		name   string
		source string
		relSrc func(p string) string
		relSHA string
	}{
		{"local folder", local, func(p string) string { return filepath.Join(local, p) }, ""},
		{"github", mkSrc, func(p string) string { return pinnedGitHub("acme/market", mkSHA, p) }, mkSHA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newRemoteEnv(t, fx.gh, remoteOpts{})
			resp, err := env.install(Request{Source: mustSource(tc.source)}, Approval{DryRun: true})
			if err != nil {
				t.Fatalf("plan: %v", err)
			}
			if resp.Resolved.Kind != "marketplace" {
				t.Fatalf("resolved kind %q", resp.Resolved.Kind)
			}
			want := map[string]struct{ source, commit string }{
				"rel-plug":   {tc.relSrc("plugins/rel"), tc.relSHA},
				"bare-plug":  {tc.relSrc("plugins/bare"), tc.relSHA},
				"u-plug":     {pinnedGitHub("acme/tools", fx.tools, "plugins/u"), fx.tools},
				"gh-plug":    {pinnedGitHub("acme/other", fx.other, ""), fx.other},
				"gs-default": {pinnedGitHub("acme/gs", fx.gsHead, "p1"), fx.gsHead},
				"gs-slashed": {pinnedGitHub("acme/gs", fx.gsSlash, "p2"), fx.gsSlash},
				"gs-pinned":  {pinnedGitHub("acme/gs", fx.gsOld, "p3"), fx.gsOld},
			}
			got := actionsByName(resp)
			for name, w := range want {
				a := got[name]
				if a.Status != ActionReady || a.Source.String() != w.source || a.Commit != w.commit || a.Marketplace.String() != tc.source {
					t.Errorf("%s: status %s source %s commit %s marketplace %s (%s); want ready %s @ %s", name, a.Status, a.Source, a.Commit, a.Marketplace, a.ErrorText(), w.source, w.commit)
				}
			}
			// strict: false beside a plugin.json, with no components of its
			// own: Claude Code reads the plugin.json (its folder is
			// rel-plug's, read under the entry's name).
			if a := got["loose"]; a.Status != ActionReady || a.ManifestSource != ".claude-plugin/plugin.json" {
				t.Errorf("loose: %s %q (%s)", a.Status, a.ManifestSource, a.ErrorText())
			}
			for _, name := range []string{"npm-plug", "unpinned"} {
				if a := got[name]; a.Status != ActionSkipped {
					t.Errorf("%s: status %s, want skipped", name, a.Status)
				}
				if !containsFragment(resp.Warnings, "skipped "+name+":") {
					t.Errorf("no warning for skipped %s in %q", name, resp.Warnings)
				}
			}
			// A string that is not a "./" path is no source to Claude Code,
			// which refuses the entry: so does Reasonix.
			if a := got["elsewhere"]; a.Status != ActionBlocked || !strings.Contains(a.ErrorText(), "is not a plugin source") {
				t.Errorf("elsewhere: %s %q", a.Status, a.ErrorText())
			}
			if len(resp.Actions) != 11 || !sort.SliceIsSorted(resp.Actions, func(i, j int) bool { return resp.Actions[i].Name < resp.Actions[j].Name }) {
				t.Errorf("want 11 actions sorted by name, got %d", len(resp.Actions))
			}

			// --name selects: an error naming why for a skipped kind, one action for a good one.
			_, err = env.install(Request{Source: mustSource(tc.source), Name: "npm-plug"}, Approval{DryRun: true})
			wantCode(t, err, nil, plugind.CodeNotPinnable, "npm")
			one, err := env.install(Request{Source: mustSource(tc.source), Name: "gs-slashed"}, Approval{DryRun: true})
			if err != nil || len(one.Actions) != 1 || one.Actions[0].Commit != fx.gsSlash {
				t.Fatalf("--name gs-slashed: %v %+v", err, one)
			}

			// Apply: every ready plugin lands with one registry write, pinned.
			writes := 0
			env.hook = func(step string) {
				if step == "after-registry" {
					writes++
				}
			}
			applied, err := env.install(Request{Source: mustSource(tc.source)}, Approval{Yes: true, PlanID: planIDOf(t, resp.PlanID)})
			if err != nil || !applied.Applied {
				t.Fatalf("apply: %v %+v", err, applied)
			}
			reg, _ := LoadRegistry(env.home.RegistryPath())
			if len(reg.Plugins) != 8 || writes != 1 {
				t.Fatalf("registry has %d plugins after %d writes, want 8 after 1", len(reg.Plugins), writes)
			}
			for _, e := range reg.Plugins {
				if e.Name == "loose" {
					// Read again as planned: its entry is its manifest.
					if e.EntryManifest == nil || e.EntryManifest.Strict {
						t.Errorf("loose: entry manifest not recorded: %+v", e.EntryManifest)
					}
					continue
				}
				if e.Source.String() != want[e.Name].source || e.Marketplace.String() != tc.source {
					t.Errorf("registry %s: source %s marketplace %s", e.Name, e.Source, e.Marketplace)
				}
				if d, _, _ := plugind.TreeDigest(e.Root, plugind.DefaultBudget); d != e.ContentDigest {
					t.Errorf("%s: installed copy does not match its digest", e.Name)
				}
			}
		})
	}
}

func TestMarketplaceGitOff(t *testing.T) {
	t.Parallel()
	fx := newKindsFixture(t)
	mkSrc, _ := fx.remote(t)
	env := newRemoteEnv(t, fx.gh, remoteOpts{gitOff: true})
	resp, err := env.install(Request{Source: mustSource(mkSrc)}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	got := actionsByName(resp)
	// Every GitHub entry kind, git-subdir included (SPEC §6: on GitHub the
	// archive serves them, with the same digest), comes through archives.
	for _, name := range []string{"rel-plug", "bare-plug", "u-plug", "gh-plug", "gs-default", "gs-slashed", "gs-pinned"} {
		if got[name].Status != ActionReady || !source.IsSHA(got[name].Commit) {
			t.Errorf("%s: %s %q, want ready via tarball", name, got[name].Status, got[name].ErrorText())
		}
	}
	if c := fx.gh.Counts(); c.Git() != 0 || c.Archive == 0 {
		t.Errorf("git off: %+v, want no git requests and tarballs", c)
	}
	// The same digests as over git.
	withGit := newRemoteEnv(t, fx.gh, remoteOpts{})
	resp2, err := withGit.install(Request{Source: mustSource(mkSrc)}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp2.PlanID != resp.PlanID || resp2.ContentDigest != resp.ContentDigest {
		t.Errorf("git and archive disagree: planId %s vs %s, contentDigest %s vs %s", resp2.PlanID, resp.PlanID, resp2.ContentDigest, resp.ContentDigest)
	}
}

func TestMarketplaceGitSubdirShapesRefusedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	sha := strings.Repeat("a", 40)
	gs := func(fields ...any) map[string]any {
		src := map[string]any{"source": "git-subdir", "url": "https://github.com/acme/gs"}
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i+1] == nil {
				delete(src, fields[i].(string))
				continue
			}
			src[fields[i].(string)] = fields[i+1]
		}
		return src
	}
	cases := map[string]map[string]any{
		"no-path":   gs("sha", sha),
		"dotdot":    gs("path", "a/../../b"),
		"absolute":  gs("path", "/etc"),
		"backslash": gs("path", `a\b`),
		"space":     gs("path", "a b"),
		"tree-url":  gs("url", "https://github.com/acme/gs/tree/main/p", "path", "p"),
		"short-sha": gs("path", "p", "sha", "abc1234"),
		"dash-ref":  gs("path", "p", "ref", "-upload-pack=x"),
		"no-url":    gs("url", nil, "path", "p"),
		"ip-host":   gs("url", "https://10.0.0.1/acme/gs", "path", "p"),
	}
	var entries []map[string]any
	for name, src := range cases {
		entries = append(entries, entry(name, src))
	}
	dir := writeTree(t, filepath.Join(t.TempDir(), "m"), map[string]string{".claude-plugin/marketplace.json": marketplaceJSON(t, "shapes", entries...)})
	env := newRemoteEnv(t, gh, remoteOpts{})
	for name := range cases {
		resp, err := env.install(Request{Source: mustSource(dir), Name: name}, Approval{DryRun: true})
		if err == nil || plugind.CodeOf(err) != plugind.CodeInvalidSource {
			t.Errorf("%s: err %v (%s), want install.invalid_source", name, err, resp.Code())
		}
	}
	resp, err := env.install(Request{Source: mustSource(dir)}, Approval{DryRun: true})
	if err == nil || len(resp.Actions) != len(cases) {
		t.Errorf("bulk: want a refusal listing %d blocked actions, got %v %d", len(cases), err, len(resp.Actions))
	}
	if c := gh.Counts(); c.Total != 0 {
		t.Fatalf("refused shapes reached the network: %+v", c)
	}
}

func containsFragment(list []string, frag string) bool {
	for _, s := range list {
		if strings.Contains(s, frag) {
			return true
		}
	}
	return false
}

// bulkMarketplace puts a marketplace of entries url+sha entries over repos
// repositories on the fake.
func bulkMarketplace(t testing.TB, gh *fakegithub.Server, entries, repos int) (marketSHA string) {
	t.Helper()
	perRepo := entries / repos
	var list []map[string]any
	for r := 0; r < repos; r++ {
		files := map[string]string{}
		for p := 0; p < perRepo; p++ {
			name := fmt.Sprintf("p%03d-%02d", r, p)
			files["plugins/"+name+"/.claude-plugin/plugin.json"] = `{"name":"` + name + `","version":"1.0.0","description":"bulk plugin"}`
			files["plugins/"+name+"/skills/s/SKILL.md"] = "---\ndescription: skill of " + name + "\n---\nbody\n"
			files["plugins/"+name+"/commands/c.md"] = "---\ndescription: command\n---\nrun\n"
		}
		repoName := fmt.Sprintf("repo%02d", r)
		sha := gh.CreateRepo("bulk", repoName).Commit("main", files)
		for p := 0; p < perRepo; p++ {
			name := fmt.Sprintf("p%03d-%02d", r, p)
			list = append(list, entry(name, map[string]any{"source": "url", "url": "https://github.com/bulk/" + repoName, "sha": sha, "path": "plugins/" + name}))
		}
	}
	mk := gh.CreateRepo("bulk", "market")
	sha := mk.Commit("main", map[string]string{".claude-plugin/marketplace.json": marketplaceJSON(t, "bulk", list...)})
	return sha
}

// A small bulk marketplace (the 300-entry one of SPEC §14 is
// BenchmarkPlanMarketplace and bench/bulk.sh): one fetch per repo@SHA, one
// registry write, warm and offline re-plans without content fetches.
func TestMarketplaceBulkOneFetchPerRepoAtSHA(t *testing.T) {
	t.Parallel()
	const entries, repos = 30, 5
	gh := fakegithub.New(t)
	sha := bulkMarketplace(t, gh, entries, repos)
	src := "https://github.com/bulk/market"
	gh.ResetCounts()
	env := newRemoteEnv(t, gh, remoteOpts{})

	writes := 0
	env.hook = func(step string) {
		if step == "after-registry" {
			writes++
		}
	}
	resp, err := env.install(Request{Source: mustSource(src)}, Approval{Yes: true})
	if err != nil || !resp.Applied {
		t.Fatalf("install: %v %+v", err, resp.ErrorText())
	}
	for r := 0; r < repos; r++ {
		if c := gh.RepoCounts("bulk", fmt.Sprintf("repo%02d", r)); c.Content() != 1 {
			t.Fatalf("repo%02d: %d content fetches (%+v), want 1", r, c.Content(), c)
		}
	}
	reg, _ := LoadRegistry(env.home.RegistryPath())
	if len(reg.Plugins) != entries || writes != 1 {
		t.Fatalf("%d plugins after %d registry writes, want %d after 1", len(reg.Plugins), writes, entries)
	}

	gh.ResetCounts()
	warm, err := env.install(Request{Source: mustSource(src), Replace: true}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := gh.Counts(); c.Content() != 0 || c.Total != 1 || c.APICommits304 != 1 {
		t.Fatalf("warm re-plan: %+v, want one conditional request and no content fetch", c)
	}
	gh.ResetCounts()
	pinned, err := env.install(Request{Source: mustSource("https://github.com/bulk/market/tree/" + sha), Replace: true}, Approval{DryRun: true})
	if err != nil || len(pinned.Actions) != entries {
		t.Fatal(err)
	}
	if c := gh.Counts(); c.Total != 0 {
		t.Fatalf("warm re-plan of the marketplace pinned to its commit: %+v, want no requests", c)
	}
	off, err := env.install(Request{Source: mustSource(src), Replace: true, Offline: true}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := gh.Counts(); c.Total != 0 || off.PlanID != warm.PlanID {
		t.Fatalf("offline re-plan: %+v, planId %s vs %s", c, off.PlanID, warm.PlanID)
	}
}

// Claude Code reads a marketplace plugin folder without plugin.json by its
// conventions; so does this installer, under the entry's name, everywhere
// the plugin is read again (list, update, export).
func TestMarketplaceEntryWithoutManifest(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	dir := writeTree(t, filepath.Join(t.TempDir(), "m"), map[string]string{
		".claude-plugin/marketplace.json": marketplaceJSON(t, "m", entry("bare-claude", "./plugins/bare"), entry("empty", "./plugins/empty")),
		"plugins/bare/commands/hi.md":     "---\ndescription: say hi\n---\nhi\n",
		"plugins/empty/README.md":         "nothing here\n",
	})
	resp, err := env.install(Request{Source: mustSource(dir)}, Approval{Yes: true})
	if err != nil {
		t.Fatal(err)
	}
	got := actionsByName(resp)
	a := got["bare-claude"]
	if a.Status != ActionInstalled || a.ManifestKind != "claude" || len(a.Commands) != 1 || a.Commands[0].Invocation != "/bare-claude:hi" || !containsFragment(a.Warnings, "no plugin manifest") {
		t.Fatalf("bare-claude: %+v", a)
	}
	if e := got["empty"]; e.Status != ActionBlocked || !strings.Contains(e.ErrorText(), "nothing in this claude plugin maps") {
		t.Fatalf("empty: %s %s", e.Status, e.ErrorText())
	}
	info, err := env.in.Show(context.Background(), "bare-claude")
	if err != nil || !info.Loaded || len(info.Commands) != 1 {
		t.Fatalf("show: %v %+v", err, info)
	}
	up, err := env.update("bare-claude", false, Approval{DryRun: true})
	if err != nil || up.Status != StatusUpToDate {
		t.Fatalf("update: %v %+v", err, up)
	}
}

func TestMarketplaceAllowUnpinnedPinsTheHead(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "floating")
	head := repo.Commit("main", pluginFiles("floating", "v1"))
	dir := writeTree(t, filepath.Join(t.TempDir(), "m"), map[string]string{
		".claude-plugin/marketplace.json": marketplaceJSON(t, "m", entry("floating", map[string]any{"source": "github", "repo": "acme/floating"})),
	})
	env := newRemoteEnv(t, gh, remoteOpts{})
	_, err := env.install(Request{Source: mustSource(dir), Name: "floating"}, Approval{DryRun: true})
	wantCode(t, err, nil, plugind.CodeNotPinnable, "--allow-unpinned")

	resp, err := env.install(Request{Source: mustSource(dir), Name: "floating", AllowUnpinned: true}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	a := resp.Actions[0]
	if a.Status != ActionReady || a.Commit != head || a.Source.String() != pinnedGitHub("acme/floating", head, "") {
		t.Fatalf("with --allow-unpinned: %s %s %s", a.Status, a.Commit, a.Source)
	}
	if !containsFragment(a.Warnings, "pinned at plan time to "+head) {
		t.Fatalf("no warning that the entry was pinned at plan time: %q", a.Warnings)
	}
	// The pin is part of what is approved: once the branch moves, the old
	// planId no longer installs.
	repo.Commit("main", pluginFiles("floating", "v2"))
	moved, err := env.install(Request{Source: mustSource(dir), Name: "floating", AllowUnpinned: true}, Approval{Yes: true, PlanID: planIDOf(t, resp.PlanID)})
	wantCode(t, err, moved, plugind.CodeApprovalDenied)
}

// The entry's name is the installed name (SPEC §7); a manifest that calls
// itself something else gets a warning, as Claude Code installs it.
func TestMarketplaceEntryNameWins(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	dir := writeTree(t, filepath.Join(t.TempDir(), "m"), map[string]string{
		".claude-plugin/marketplace.json":      marketplaceJSON(t, "m", entry("listed-as", "p"), entry("ok", "q")),
		"plugins/p/.claude-plugin/plugin.json": `{"name":"really-named"}`,
		"plugins/p/commands/c.md":              "c\n",
		"plugins/q/.claude-plugin/plugin.json": `{"name":"ok"}`,
		"plugins/q/commands/c.md":              "c\n",
	})
	resp, err := env.install(Request{Source: mustSource(dir)}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	got := actionsByName(resp)
	if a := got["listed-as"]; a.Status != ActionReady || !containsFragment(a.Warnings, `its manifest calls it "really-named"`) || a.Commands[0].Invocation != "/listed-as:c" {
		t.Fatalf("mismatch: %s %q %+v", a.Status, a.Warnings, a.Commands)
	}
	if got["ok"].Status != ActionReady {
		t.Fatalf("the other entry: %s", got["ok"].Status)
	}
}

// When git fails, every GitHub entry kind falls back to the archive, with
// the pins of url, github and git-subdir entries checked through the API
// (SPEC §6).
func TestMarketplaceGitFailingFallsBackToArchive(t *testing.T) {
	t.Parallel()
	fx := newKindsFixture(t)
	mkSrc, _ := fx.remote(t)
	env := newRemoteEnv(t, fx.gh, remoteOpts{})
	fx.gh.RefuseGit(true)
	resp, err := env.install(Request{Source: mustSource(mkSrc)}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	got := actionsByName(resp)
	for _, name := range []string{"rel-plug", "u-plug", "gh-plug", "gs-default", "gs-slashed", "gs-pinned"} {
		if got[name].Status != ActionReady {
			t.Errorf("%s: %s %q, want ready through the archive", name, got[name].Status, got[name].ErrorText())
		}
	}
	if !containsFragment(resp.Warnings, "used the archive") {
		t.Errorf("no warning about the fallback: %v", resp.Warnings)
	}
	if n := fx.gh.RepoCounts("acme", "gs").Archive; n == 0 {
		t.Fatalf("git-subdir repository not fetched by archive")
	}
}

// A repository whose root is both a marketplace and a plugin: named by its
// folder or URL it installs the plugin at its root (SPEC §7: the plugin
// wins); known as a marketplace, NAME@MARKET installs that entry — read
// through the entry, in the marketplace's format — and update follows it
// there, as Claude Code does.
func TestMarketplaceWhoseRootIsAPlugin(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	dir := writeTree(t, filepath.Join(t.TempDir(), "both"), map[string]string{
		".claude-plugin/marketplace.json":          marketplaceJSON(t, "both", entry("inner", "./plugins/inner"), entry("whole", "./")),
		".claude-plugin/plugin.json":               `{"name":"whole","version":"1.0.0","description":"the Claude manifest"}`,
		".codex-plugin/plugin.json":                `{"name":"whole","version":"9.0.0","description":"the Codex manifest","skills":"./skills"}`,
		"CLAUDE.md":                                "read by Codex packages only\n",
		"skills/top/SKILL.md":                      "---\nname: top\ndescription: top\n---\n",
		"plugins/inner/.claude-plugin/plugin.json": `{"name":"inner","version":"2.0.0"}`,
		"plugins/inner/commands/hi.md":             "---\ndescription: hi\n---\nhi\n",
	})
	root, err := env.install(Request{Source: mustSource(dir)}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(root.Actions) != 1 || root.Actions[0].Name != "whole" {
		t.Fatalf("the folder installs the plugin at its root: %+v", root.Actions)
	}
	if _, err := env.in.AddMarketplace(context.Background(), mustSource(dir), false); err != nil {
		t.Fatal(err)
	}
	resp, err := env.install(Request{Source: mustSource("inner@both")}, Approval{Yes: true})
	if err != nil {
		t.Fatal(err)
	}
	a := actionsByName(resp)["inner"]
	if len(resp.Actions) != 1 || a.Status != ActionInstalled || a.Version != "2.0.0" || len(a.Commands) != 1 || a.Commands[0].Invocation != "/inner:hi" {
		t.Fatalf("inner@both: %+v", resp.Actions)
	}
	whole, err := env.install(Request{Source: mustSource("whole@both")}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	w := actionsByName(whole)["whole"]
	if w.ManifestKind != "claude" || w.Version != "1.0.0" || len(w.Hooks) != 0 || len(w.Skills) != 1 {
		t.Fatalf("whole@both is read through its entry, as Claude: kind %s version %s hooks %+v skills %+v", w.ManifestKind, w.Version, w.Hooks, w.Skills)
	}
	up, err := env.update("inner", false, Approval{DryRun: true})
	if err != nil || up.Status != StatusUpToDate {
		t.Fatalf("update inner: %v %+v", err, up)
	}
}

// pinnedGitHub is the tree URL of folder p of GitHub repository repo at
// sha, as the registry records it (SPEC §7).
func pinnedGitHub(repo, sha, p string) string {
	u := "https://github.com/" + repo + "/tree/" + sha
	if p != "" {
		u += "/" + p
	}
	return u
}

// TestReplanReadsInstalledManifestsAhead: while a re-plan resolves, it
// reads the manifests of the plugins installed from the same marketplace,
// under the keys the plan then asks for (planCandidates reads only what is
// still missing). Entry manifests of every shape (escapes, non-ASCII,
// nested values, strict false, none at all) must key alike from the
// registry and from the marketplace.
func TestReplanReadsInstalledManifestsAhead(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	files := map[string]string{}
	var list []map[string]any
	for i, extra := range []map[string]any{
		nil,
		{"description": "plain"},
		{"description": "<b>bold</b> & \"quoted\" — café \u2028", "version": "1.2.0", "keywords": []any{"a", "b"}},
		{"author": map[string]any{"name": "Ann", "email": "ann@example.com"}, "strict": false, "description": "no manifest of its own"},
		{"homepage": "https://example.com/x?a=1&b=2", "license": "MIT", "category": "tools"},
	} {
		name := fmt.Sprintf("p%d", i)
		if strict, _ := extra["strict"].(bool); strict || extra["strict"] == nil {
			files["plugins/"+name+"/.claude-plugin/plugin.json"] = `{"name":"` + name + `","version":"1.0.0"}`
		}
		files["plugins/"+name+"/commands/c.md"] = "---\ndescription: command\n---\nrun\n"
		e := entry(name, map[string]any{"source": "url", "url": "https://github.com/acme/tools", "sha": "SHA", "path": "plugins/" + name})
		for k, v := range extra {
			e[k] = v
		}
		list = append(list, e)
	}
	sha := gh.CreateRepo("acme", "tools").Commit("main", files)
	for _, e := range list {
		e["source"].(map[string]any)["sha"] = sha
	}
	gh.CreateRepo("acme", "market").Commit("main", map[string]string{".claude-plugin/marketplace.json": marketplaceJSON(t, "acme", list...)})
	env := newRemoteEnv(t, gh, remoteOpts{})
	req := Request{Source: mustSource("https://github.com/acme/market"), Replace: true}
	if resp, err := env.install(req, Approval{Yes: true}); err != nil || !resp.Applied {
		t.Fatalf("install: %v %s", err, resp.ErrorText())
	}

	reg, err := env.in.plannedRegistry()
	if err != nil {
		t.Fatal(err)
	}
	f, err := env.in.Sources.Resolve(context.Background(), resolver.Request{Source: req.Source})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range f.Candidates {
		if c.Err != nil {
			t.Fatalf("%s: %v", c.Name, c.Err)
		}
		want = append(want, manifestKey(c, loadOptions(req, c, false)))
	}
	got := installedKeys(req, req.Source, reg)
	slices.Sort(want)
	slices.Sort(got)
	if len(want) != len(list) || !slices.Equal(got, want) {
		t.Fatalf("read ahead:\n%q\nthe plan asks for:\n%q", got, want)
	}
	if named := installedKeys(Request{Names: []string{"p2"}}, req.Source, reg); len(named) != 1 {
		t.Fatalf("names p2: read ahead %q", named)
	}
	if other := installedKeys(req, mustSource("https://github.com/acme/other"), reg); len(other) != 0 {
		t.Fatalf("another source: read ahead %q", other)
	}
}
