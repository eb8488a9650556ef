package main

import (
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// TestRepositorySwapIsItsOwnLine (issue 21, item 4): a marketplace moves
// its entry q from acme/q to evil/q, whose plugin contributes exactly the
// same. What the attacker hoped for is an update review that says only
// "moves from 8e42d1a to ea7f59c", an empty diff at unchanged risk. The
// review must show the move on its own line — in the JSON diff, in the
// terminal review, and for a --replace re-install of the marketplace too —
// with its risk one level higher, in the planId's prefix as well.
func TestRepositorySwapIsItsOwnLine(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	acme := gh.CreateRepo("acme", "q")
	good := acme.Commit("main", pluginTree("q"))
	evil := gh.CreateRepo("evil", "q")
	bad := evil.Commit("main", merge(pluginTree("q"), map[string]string{"README.md": "same skills, other hands\n"}))
	market := gh.CreateRepo("acme", "market")
	entry := func(repo, sha string) map[string]string {
		return map[string]string{".claude-plugin/marketplace.json": `{"name":"acme","owner":{"name":"acme"},"plugins":[` +
			`{"name":"q","source":{"source":"github","repo":"` + repo + `","sha":"` + sha + `"}}]}`}
	}
	market.Commit("main", entry("acme/q", good))
	home, env := t.TempDir(), gh.Env()
	if r := runBinary(t, home, env, "plugin", "install", "https://github.com/acme/market", "--yes"); r.code != 0 {
		t.Fatalf("install: exit %d %s %s", r.code, r.stdout, r.stderr)
	}

	// A plain move within acme/q is low risk and has no move line.
	moved := acme.Commit("main", map[string]string{"README.md": "a new commit\n"})
	market.Commit("main", entry("acme/q", moved))
	plain := runBinary(t, home, env, "plugin", "update", "q", "--dry-run")
	if a := actionsOf(t, plain)["q"]; plain.code != 0 || a["risk"] != "low" || strings.Contains(plain.stdout, `"kind": "source"`) {
		t.Fatalf("a new commit of the same repository: exit %d %s", plain.code, plain.stdout)
	}

	// The swap.
	market.Commit("main", entry("evil/q", bad))
	// What was approved before it is refused, saying where q went.
	stale := runBinary(t, home, env, "plugin", "update", "q", "--yes", "--plan-id", plain.json(t)["planId"].(string))
	if stale.code != 1 || stale.json(t)["errorCode"] != "install.approval_denied" ||
		!strings.Contains(stale.stdout, "q moved to another source (owner changes): github.com/acme/q → github.com/evil/q") {
		t.Fatalf("the plan approved before the swap: exit %d %s", stale.code, stale.stdout)
	}
	dry := runBinary(t, home, env, "plugin", "update", "q", "--dry-run")
	if dry.code != 0 {
		t.Fatalf("update --dry-run: exit %d %s %s", dry.code, dry.stdout, dry.stderr)
	}
	a := actionsOf(t, dry)["q"]
	prev, _ := a["previous"].(map[string]any)
	if prev == nil || prev["source"] != "https://github.com/acme/q/tree/"+good || prev["commit"] != good || prev["risk"] != "low" {
		t.Errorf("previous does not say where q came from: %v", prev)
	}
	if a["source"] != "https://github.com/evil/q/tree/"+bad {
		t.Errorf("source = %v", a["source"])
	}
	diff, _ := a["diff"].(map[string]any)
	changed, _ := diff["changed"].([]any)
	summary, _ := diff["summary"].([]any)
	const line = "moves to another source (owner changes): github.com/acme/q → github.com/evil/q"
	if len(changed) != 1 || len(summary) != 1 || summary[0] != line {
		t.Fatalf("the JSON diff lacks the move on its own line: %v", diff)
	}
	if c := changed[0].(map[string]any); c["kind"] != "source" || c["name"] != "owner" || c["detail"] != "github.com/acme/q → github.com/evil/q" {
		t.Errorf("the move as a change: %v", c)
	}
	if a["risk"] != "medium" || !strings.HasPrefix(dry.json(t)["planId"].(string), "medium:") {
		t.Errorf("the swap did not raise the risk: action %v, plan %v", a["risk"], dry.json(t)["planId"])
	}

	// The terminal review says it on its own line, with the raised risk.
	review := runOnTerminal(t, home, env, "plugin", "update", "q", "--dry-run")
	if review.code != 0 || review.json(t)["planId"] != dry.json(t)["planId"] {
		t.Fatalf("review run: exit %d, plan %v, want %v", review.code, review.json(t)["planId"], dry.json(t)["planId"])
	}
	for _, want := range []string{"q changes:\n  " + line + "\n", "medium (was low)"} {
		if !strings.Contains(review.stderr, want) {
			t.Errorf("the terminal review lacks %q:\n%s", want, review.stderr)
		}
	}

	// Re-installing the marketplace with --replace is the same swap.
	re := runOnTerminal(t, home, env, "plugin", "install", "https://github.com/acme/market", "--dry-run", "--replace")
	ra := actionsOf(t, re)["q"]
	if re.code != 0 || ra["action"] != "replace" || ra["risk"] != "medium" || !strings.Contains(re.stdout, line) || !strings.Contains(re.stderr, "q changes:\n  "+line+"\n") {
		t.Errorf("install --replace after the swap: exit %d risk %v\n%s\n%s", re.code, ra["risk"], re.stdout, re.stderr)
	}

	// Approving it applies exactly that plan, and records the new source.
	yes := runBinary(t, home, env, "plugin", "update", "q", "--yes", "--plan-id", dry.json(t)["planId"].(string))
	if yes.code != 0 || actionsOf(t, yes)["q"]["status"] != "installed" {
		t.Fatalf("update --yes --plan-id: exit %d %s", yes.code, yes.stdout)
	}
	show := runBinary(t, home, env, "plugin", "show", "q", "--json")
	if !strings.Contains(show.stdout, "https://github.com/evil/q/tree/"+bad) {
		t.Errorf("after the update: %s", show.stdout)
	}
}
