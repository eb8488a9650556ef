package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/mirrortest"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/mirror/meta"
)

// TestReviewShowsUnpinnedRuntimeFetches: the terminal review shows, for
// each plugin to install, every run-time fetch no pin fixes on a line of
// its own (escaped), the remote services apart, and nothing for pinned
// ones; an action the mirror's runtime rule blocked is listed with its
// reason.
func TestReviewShowsUnpinnedRuntimeFetches(t *testing.T) {
	t.Parallel()
	resp := &installer.Response{
		OK: true, Status: installer.StatusPlanned, PlanID: "medium:sha256:0123456789abcdef0123456789abcdef", Source: "/tmp/market",
		Actions: []installer.Action{
			{Name: "fetcher", Action: installer.ActionInstall, Status: installer.ActionReady, Risk: installer.RiskMedium,
				Inventory: installer.Inventory{RuntimeFetches: []manifest.RuntimeFetch{
					{Where: "hook PreToolUse #1", Kind: manifest.FetchCode, Runner: "npx", Package: "@scope/pkg", Version: "latest", Command: "npx -y @scope/pkg@latest"},
					{Where: "mcpServer gh", Kind: manifest.FetchCode, Runner: "docker run", Package: "ghcr.io/o/img\x1b[2J", Command: "docker run -i ghcr.io/o/img\x1b[2J"},
					{Where: "mcpServer pinned", Kind: manifest.FetchCode, Runner: "uvx", Package: "tool", Version: "1.2.3", Pinned: true, Command: "uvx tool==1.2.3"},
					{Where: "mcpServer api", Kind: manifest.FetchRemote, Package: "https://api.example.test/mcp"},
				}}},
			{Name: "loose", Action: installer.ActionSkip, Status: installer.ActionBlocked,
				Err: plugind.Errorf(plugind.CodeBlocked, "%s", `loose runs unpinned code fetched at run time, which the team mirror's policy blocks ("runtime": "block-unpinned"): uvx tool (mcpServer t)`)},
		},
	}
	var b bytes.Buffer
	writeReviewTo(&b, resp, shown{})
	out := b.String()
	for _, want := range []string{
		"\n!! fetcher runs unpinned code fetched at run time: npx -y @scope/pkg@latest (hook PreToolUse #1)\n",
		"\n!! fetcher runs unpinned code fetched at run time: docker run -i ghcr.io/o/img\\x1b[2J (mcpServer gh)\n",
		"\nremote services:\n  fetcher talks to remote service https://api.example.test/mcp (mcpServer api)\n",
		"\nblocked (1):\n  loose runs unpinned code fetched at run time, which the team mirror's policy blocks (\"runtime\": \"block-unpinned\"): uvx tool (mcpServer t) [install.blocked]: loose\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("review lacks %q", want)
		}
	}
	if strings.Contains(out, "uvx tool==1.2.3") {
		t.Errorf("a pinned fetch is shown as unpinned:\n%s", out)
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("an escape reached the terminal:\n%q", out)
	}
	if t.Failed() {
		t.Log("\n" + out)
	}
}

// fetcherFiles is a plugin whose MCP server runs npx: at launch, a version
// that may be pinned or not.
func fetcherFiles(name, launch string) map[string]string {
	return map[string]string{
		".claude-plugin/plugin.json": `{"name":"` + name + `","version":"1.0.0","description":"fetches"}`,
		"skills/s/SKILL.md":          goodSkill,
		".mcp.json":                  `{"mcpServers": {"loose": {"command": "npx", "args": ["-y", "` + launch + `"]}}}`,
	}
}

// TestDryRunShowsUnpinnedFetchesOnATerminal: a dry run's review on a
// terminal names each unpinned run-time fetch, the plan is medium risk,
// and `plugin validate` warns about it (exit 0: install takes it).
func TestDryRunShowsUnpinnedFetchesOnATerminal(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, fetcherFiles("fetcher", "@scope/server@latest"))
	r := runOnTerminal(t, t.TempDir(), nil, "plugin", "install", dir, "--dry-run")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if want := "!! fetcher runs unpinned code fetched at run time: npx -y @scope/server@latest (mcpServer loose)\n"; !strings.Contains(r.stderr, want) {
		t.Errorf("the review lacks %q:\n%s", want, r.stderr)
	}
	resp := r.json(t)
	act := resp["actions"].([]any)[0].(map[string]any)
	if act["risk"] != "medium" || !strings.HasPrefix(resp["planId"].(string), "medium:") {
		t.Errorf("risk %v, planId %v; want medium", act["risk"], resp["planId"])
	}
	fetches, _ := act["runtimeFetches"].([]any)
	if len(fetches) != 1 || fetches[0].(map[string]any)["pinned"] != false || fetches[0].(map[string]any)["runner"] != "npx" {
		t.Errorf("runtimeFetches %v", act["runtimeFetches"])
	}
	v := validateJSON(t, run(t, t.TempDir(), nil, "plugin", "validate", "--json", dir))
	found := false
	for _, w := range v.Warnings {
		found = found || w.File == ".mcp.json" && strings.Contains(w.Message, "mcpServer loose runs unpinned code fetched at run time: npx -y @scope/server@latest")
	}
	if !v.OK || !found {
		t.Errorf("validate: ok=%v, warnings %+v; want ok with the fetch warned about", v.OK, v.Warnings)
	}
}

// TestMirrorRuntimePolicyThroughTheCLI: a mirror whose policy says
// "runtime": "block-unpinned" (real engines: PostgreSQL and S3) makes
// its clients block a plugin that runs unpinned code fetched at run time,
// with install.blocked naming the command and the rule, while a pinned
// one installs; the client asked the mirror for its policy, audited.
func TestMirrorRuntimePolicyThroughTheCLI(t *testing.T) {
	eng := mirrortest.Open(t)
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "loose").Commit("main", fetcherFiles("loose", "@scope/server@latest"))
	gh.CreateRepo("acme", "pinned").Commit("main", fetcherFiles("pinned", "@scope/server@1.2.3"))
	pol := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(pol, []byte(`{"runtime": "block-unpinned"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	token := eng.Token(t, "cli")
	reps := startReplicas(t, 1, eng, gh, "--allow-private-upstreams", "--policy", pol)
	env := []string{
		"REASONIX_MIRROR=" + reps[0].url, "REASONIX_MIRROR_TOKEN=" + token, "REASONIX_MIRROR_ONLY=1",
		"REASONIX_GITHUB_URL=http://127.0.0.1:1", "REASONIX_GITHUB_API_URL=http://127.0.0.1:1",
	}
	home := t.TempDir()
	r := run(t, home, env, "plugin", "install", "https://github.com/acme/loose", "--yes")
	if r.code != 1 {
		t.Fatalf("an unpinned fetch under block-unpinned: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	resp := r.json(t)
	act := resp["actions"].([]any)[0].(map[string]any)
	msg, _ := act["error"].(string)
	if act["status"] != "blocked" || act["errorCode"] != string(plugind.CodeBlocked) ||
		!strings.Contains(msg, "npx -y @scope/server@latest (mcpServer loose)") || !strings.Contains(msg, `"runtime": "block-unpinned"`) {
		t.Errorf("the loose plugin: %v", act)
	}
	if r := run(t, home, env, "plugin", "install", "https://github.com/acme/pinned", "--yes"); r.code != 0 {
		t.Errorf("a pinned fetch: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	log, err := eng.DB.AuditLog(context.Background(), meta.AuditFilter{Action: "policy"})
	if err != nil || len(log) == 0 || log[0].Client != "cli" || log[0].Detail != "block-unpinned" {
		t.Errorf("audit of the policy reads: %+v %v", log, err)
	}
}
