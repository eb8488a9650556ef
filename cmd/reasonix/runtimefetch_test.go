package main

import (
	"bytes"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/manifest"
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
