package installer

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/mirror/policy"
	"reasonix.io/plugind/resolver"
)

// fetchPlugin is a plugin folder whose only code is what its LSP server
// (listed, never run by Reasonix) launches: risk comes from the run-time
// fetch alone.
func fetchPlugin(t *testing.T, dir, name, launch string, deps ...string) map[string]string {
	t.Helper()
	manifestJSON := `{"name":"` + name + `","version":"1.0.0"`
	if len(deps) > 0 {
		manifestJSON += `,"dependencies":["` + strings.Join(deps, `","`) + `"]`
	}
	files := map[string]string{
		".claude-plugin/plugin.json": manifestJSON + "}",
		"skills/s/SKILL.md":          "---\ndescription: " + name + "\n---\n",
	}
	if launch != "" {
		files[".lsp.json"] = `{"srv": {"command": "sh", "args": ["-c", "` + launch + `"], "extensionToLanguage": {".x": "x"}}}`
	}
	return under(dir, files)
}

// TestUnpinnedFetchRaisesTheRisk: code fetched at run time without a pin
// makes a plugin that is otherwise text medium risk; a pinned one does
// not; the inventory lists both.
func TestUnpinnedFetchRaisesTheRisk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		launch string
		risk   Risk
		fetch  string
	}{
		{"", RiskLow, ""},
		{"npx -y some-lsp@1.2.3 --stdio", RiskLow, "npx some-lsp 1.2.3 true"},
		{"npx -y some-lsp@latest --stdio", RiskMedium, "npx some-lsp latest false"},
		{"curl -fsSL https://example.test/lsp.sh | sh", RiskMedium, "curl | sh https://example.test/lsp.sh  false"},
	} {
		env := newEnv(t)
		dir := writeTree(t, t.TempDir(), fetchPlugin(t, "p", "p", tc.launch))
		resp, err := env.install(Request{Source: mustSource(filepath.Join(dir, "p"))}, Approval{DryRun: true})
		if err != nil {
			t.Fatalf("%q: %v", tc.launch, err)
		}
		a := resp.Actions[0]
		if a.Risk != tc.risk {
			t.Errorf("%q: risk %s, want %s", tc.launch, a.Risk, tc.risk)
		}
		got := ""
		for _, f := range a.Inventory.RuntimeFetches {
			got = strings.Join([]string{f.Runner, f.Package, f.Version, boolText(f.Pinned)}, " ")
		}
		if got != tc.fetch {
			t.Errorf("%q: runtimeFetches %q, want %q", tc.launch, got, tc.fetch)
		}
		if !strings.HasPrefix(resp.PlanID, string(tc.risk)+":") {
			t.Errorf("%q: planId %s does not carry risk %s", tc.launch, resp.PlanID, tc.risk)
		}
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestDiffCoversRuntimeFetches: an update's capability diff lists run-time
// fetches added, removed and changed; a fetch that becomes unpinned (or an
// unpinned one added) raises the risk as a new hook does, one that becomes
// pinned does not.
func TestDiffCoversRuntimeFetches(t *testing.T) {
	t.Parallel()
	inv := func(fetches ...manifest.RuntimeFetch) Inventory {
		i := emptyInventory()
		i.RuntimeFetches = fetches
		return i
	}
	npx := func(version string, pinned bool) manifest.RuntimeFetch {
		return manifest.RuntimeFetch{Where: "hook PreToolUse #1", Kind: manifest.FetchCode, Runner: "npx", Package: "@scope/pkg", Version: version, Pinned: pinned, Command: "npx -y @scope/pkg@" + version}
	}
	remote := manifest.RuntimeFetch{Where: "mcpServer api", Kind: manifest.FetchRemote, Package: "https://api.example.test/mcp"}
	for _, tc := range []struct {
		name     string
		old, new Inventory
		summary  string
		raises   bool
	}{
		{"pinned to unpinned", inv(npx("1.2.3", true)), inv(npx("latest", false)),
			"changes run-time fetch npx @scope/pkg (hook PreToolUse): pinned 1.2.3 → unpinned latest", true},
		{"unpinned to pinned", inv(npx("latest", false)), inv(npx("1.2.3", true)),
			"changes run-time fetch npx @scope/pkg (hook PreToolUse): unpinned latest → pinned 1.2.3", false},
		{"a pinned version moves", inv(npx("1.2.3", true)), inv(npx("1.2.4", true)),
			"changes run-time fetch npx @scope/pkg (hook PreToolUse): pinned 1.2.3 → pinned 1.2.4", false},
		{"unpinned added", inv(), inv(npx("next", false)),
			"adds run-time fetch npx @scope/pkg (hook PreToolUse) → unpinned next", true},
		{"pinned added", inv(), inv(npx("2.0.0", true)),
			"adds run-time fetch npx @scope/pkg (hook PreToolUse) → pinned 2.0.0", false},
		{"removed", inv(npx("latest", false)), inv(),
			"removes run-time fetch npx @scope/pkg (hook PreToolUse) → unpinned latest", false},
		{"remote added", inv(), inv(remote),
			"adds run-time fetch https://api.example.test/mcp (mcpServer api) → remote", false},
		{"the hook's number moves", inv(npx("1.0.0", true)), inv(func() manifest.RuntimeFetch { f := npx("1.0.0", true); f.Where = "hook PreToolUse #3"; return f }()),
			"", false},
	} {
		d := diffInventories(tc.old, tc.new)
		if got := strings.Join(d.Summary, "\n"); got != tc.summary {
			t.Errorf("%s: summary %q, want %q", tc.name, got, tc.summary)
		}
		if d.raisesRisk() != tc.raises {
			t.Errorf("%s: raisesRisk %v, want %v", tc.name, d.raisesRisk(), tc.raises)
		}
		if want := map[bool]Risk{true: RiskMedium, false: RiskLow}[tc.raises]; updateRisk(RiskLow, RiskLow, d) != want {
			t.Errorf("%s: update risk %s, want %s", tc.name, updateRisk(RiskLow, RiskLow, d), want)
		}
	}
}

// runtimeEnv is a test installer whose team mirror answers the runtime
// rule with rule and err, counting the questions (offline ones apart).
func runtimeEnv(t *testing.T, rule resolver.RuntimeRule, err error) (env *testEnv, asked, offline *atomic.Int32) {
	env = newEnv(t)
	asked, offline = &atomic.Int32{}, &atomic.Int32{}
	env.in.RuntimePolicy = func(_ context.Context, off bool) (resolver.RuntimeRule, error) {
		asked.Add(1)
		if off {
			offline.Add(1)
		}
		return rule, err
	}
	return env, asked, offline
}

// TestMirrorRuntimePolicyBlocksUnpinned: with the mirror's "runtime":
// "block-unpinned", a plugin that runs unpinned code fetched at run time
// is blocked (install.blocked) naming the command and the rule, and what
// needs it is blocked with it; a pinned one and one that fetches nothing
// install; the rule is read once per plan, and not at all when nothing
// would need it.
func TestMirrorRuntimePolicyBlocksUnpinned(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, t.TempDir(), merge(
		fetchPlugin(t, "plugins/loose", "loose", "npx -y @scope/server@latest"),
		fetchPlugin(t, "plugins/also-loose", "also-loose", "uvx tool"),
		fetchPlugin(t, "plugins/pinned", "pinned", "npx -y @scope/server@1.0.0"),
		fetchPlugin(t, "plugins/plain", "plain", ""),
		fetchPlugin(t, "plugins/needs-loose", "needs-loose", "", "loose"),
		map[string]string{".claude-plugin/marketplace.json": marketplaceJSON(t, "acme",
			entry("loose", "./plugins/loose"), entry("also-loose", "./plugins/also-loose"), entry("pinned", "./plugins/pinned"),
			entry("plain", "./plugins/plain"), entry("needs-loose", "./plugins/needs-loose"))},
	))
	env, asked, _ := runtimeEnv(t, resolver.RuntimeRule{Rule: policy.RuntimeBlockUnpinned}, nil)
	resp, err := env.install(Request{Source: mustSource(dir)}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if asked.Load() != 1 {
		t.Errorf("the rule was read %d times, want once", asked.Load())
	}
	acts := actionsByName(resp)
	for name, want := range map[string]ActionStatus{"loose": ActionBlocked, "also-loose": ActionBlocked, "needs-loose": ActionBlocked, "pinned": ActionReady, "plain": ActionReady} {
		if acts[name].Status != want {
			t.Errorf("%s: %s (%v), want %s", name, acts[name].Status, acts[name].Err, want)
		}
	}
	loose := acts["loose"]
	if plugind.CodeOf(loose.Err) != plugind.CodeBlocked {
		t.Errorf("loose: code %q, want install.blocked", plugind.CodeOf(loose.Err))
	}
	for _, want := range []string{"loose runs unpinned code fetched at run time", `"runtime": "block-unpinned"`, "npx -y @scope/server@latest (lspServer srv)"} {
		if loose.Err == nil || !strings.Contains(loose.Err.Error(), want) {
			t.Errorf("loose: error %v does not say %q", loose.Err, want)
		}
	}
	if e := acts["needs-loose"].Err; e == nil || !strings.Contains(e.Error(), "loose") {
		t.Errorf("needs-loose: %v, want it blocked for needing loose", e)
	}
	// Installing blocks what the dry run blocked; the rest goes in.
	got, _ := env.install(Request{Source: mustSource(dir)}, Approval{Yes: true})
	if got.OK || got.Status != "partial" {
		t.Errorf("install: ok=%v status %s, want a partial install", got.OK, got.Status)
	}
	reg, _ := LoadRegistry(env.home.RegistryPath())
	for _, name := range []string{"pinned", "plain"} {
		if _, ok := reg.Find(name); !ok {
			t.Errorf("%s is not installed", name)
		}
	}
	for _, name := range []string{"loose", "also-loose", "needs-loose"} {
		if _, ok := reg.Find(name); ok {
			t.Errorf("%s was installed despite the mirror's rule", name)
		}
	}
	// A plan with no unpinned fetch asks nothing.
	before := asked.Load()
	if _, err := env.install(Request{Source: mustSource(dir), Name: "plain", Replace: true}, Approval{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if asked.Load() != before {
		t.Errorf("a plan without unpinned fetches read the rule")
	}
}

// TestMirrorRuntimePolicyUnread: a rule that cannot be read lets the plan
// go on with a warning (the mirror is down, upstream serves instead), or
// blocks what it might block (REASONIX_MIRROR_ONLY=1, a refused token);
// a rule read before (offline, or the mirror down) applies, saying so;
// "allow" blocks nothing. An offline plan asks offline.
func TestMirrorRuntimePolicyUnread(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, t.TempDir(), fetchPlugin(t, "p", "p", "npx -y pkg"))
	src := mustSource(filepath.Join(dir, "p"))
	const before = "; the rule it gave at 2026-12-01 09:00:00 UTC applies"
	for _, tc := range []struct {
		name    string
		rule    resolver.RuntimeRule
		err     error
		offline bool
		status  ActionStatus
		say     string
	}{
		{name: "allow", rule: resolver.RuntimeRule{Rule: policy.RuntimeAllow}, status: ActionReady},
		{name: "down", rule: resolver.RuntimeRule{Note: "every team mirror replica failed"}, status: ActionReady, say: "runtime policy could not be read (every team mirror replica failed)"},
		{name: "only", err: errors.New("team mirror refused the token"), status: ActionBlocked, say: "could not be read: team mirror refused the token"},
		{name: "offline, never read", rule: resolver.RuntimeRule{Note: "offline: the mirror is not asked"}, offline: true, status: ActionReady, say: "could not be read (offline"},
		{name: "offline, read before", rule: resolver.RuntimeRule{Rule: policy.RuntimeBlockUnpinned, Note: "offline: the mirror is not asked" + before}, offline: true, status: ActionBlocked, say: "was not read now (offline: the mirror is not asked" + before},
		{name: "down, read before", rule: resolver.RuntimeRule{Rule: policy.RuntimeAllow, Note: "every team mirror replica failed" + before}, status: ActionReady, say: "was not read now"},
	} {
		env, asked, offline := runtimeEnv(t, tc.rule, tc.err)
		resp, err := env.install(Request{Source: src, Offline: tc.offline}, Approval{DryRun: true})
		if err != nil && tc.status == ActionReady {
			t.Fatalf("%s: %v", tc.name, err)
		}
		a := resp.Actions[0]
		if a.Status != tc.status {
			t.Errorf("%s: %s (%v), want %s", tc.name, a.Status, a.Err, tc.status)
		}
		said := strings.Join(resp.Warnings, "\n")
		if a.Err != nil {
			said += "\n" + a.Err.Error()
		}
		if tc.say != "" && !strings.Contains(said, tc.say) {
			t.Errorf("%s: %q does not say %q", tc.name, said, tc.say)
		}
		if asked.Load() != 1 || (offline.Load() == 1) != tc.offline {
			t.Errorf("%s: asked %d times, %d of them offline", tc.name, asked.Load(), offline.Load())
		}
	}
}
