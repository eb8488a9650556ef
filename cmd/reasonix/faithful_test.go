package main

import (
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// TestFaithfulMarketplace drives testdata/faithful — one entry per way the
// real marketplaces of issue 12 differ from the happy path — through the
// fake GitHub and the built binary: strict: false entries install, the
// entry's name wins over the manifest's, an LSP-only plugin says what it
// holds, a Claude marketplace reads a plugin's Claude manifest before its
// Codex one, dependencies come along, a dead entry names its cause, the
// offline re-plan has the same planId, a re-install without --replace is a
// conflict, and show keeps a multi-line description on one line.
func TestFaithfulMarketplace(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	sha := gh.CreateRepo("acme", "faithful").Commit("main", treeFiles(t, filepath.Join("testdata", "faithful")))
	home, env := t.TempDir(), gh.Env()
	const src = "https://github.com/acme/faithful"

	dry := runBinary(t, home, env, "plugin", "install", src, "--dry-run")
	if dry.code != 0 {
		t.Fatalf("dry-run: exit %d\n%s\n%s", dry.code, dry.stdout, dry.stderr)
	}
	plan := dry.json(t)
	acts := planActions(plan)
	status := func(name string) string { s, _ := acts[name]["status"].(string); return s }
	text := func(name, field string) string { s, _ := acts[name][field].(string); return s }
	for _, n := range []string{"amd-skills", "superpowers-dev", "aws-dual", "notes", "deploy-kit", "audit-logger"} {
		if status(n) != "ready" {
			t.Errorf("%s: %s %s", n, status(n), text(n, "error"))
		}
	}
	if got := text("amd-skills", "manifestSource"); !strings.Contains(got, "strict: false") {
		t.Errorf("amd-skills manifest source %q", got)
	}
	if got := acts["superpowers-dev"]["warnings"]; !strings.Contains(strings.Join(strs(got), "\n"), `its manifest calls it "superpowers"`) {
		t.Errorf("superpowers-dev warnings: %v", got)
	}
	if text("aws-dual", "manifestKind") != "claude" {
		t.Errorf("aws-dual read as %s", text("aws-dual", "manifestKind"))
	}
	if status("lsp-go") != "blocked" || !strings.Contains(text("lsp-go", "error"), "LSP server") || !strings.Contains(text("lsp-go", "error"), "gopls") {
		t.Errorf("lsp-go: %s %s", status("lsp-go"), text("lsp-go", "error"))
	}
	if deps := strs(acts["deploy-kit"]["dependsOn"]); len(deps) != 1 || deps[0] != "audit-logger" {
		t.Errorf("deploy-kit depends on %v", deps)
	}
	if of := strs(acts["audit-logger"]["dependencyOf"]); len(of) != 1 || of[0] != "deploy-kit" {
		t.Errorf("audit-logger is a dependency of %v", of)
	}
	if status("needs-ghost") != "blocked" || !strings.Contains(text("needs-ghost", "error"), "needs ghost, which marketplace faithful does not list") {
		t.Errorf("needs-ghost: %s %s", status("needs-ghost"), text("needs-ghost", "error"))
	}
	if status("vanished-repo") != "blocked" || !strings.Contains(text("vanished-repo", "error"), "repository not found") {
		t.Errorf("vanished-repo: %s %s", status("vanished-repo"), text("vanished-repo", "error"))
	}

	off := runBinary(t, home, env, "plugin", "install", src, "--dry-run", "--offline")
	if off.code != 0 || off.json(t)["planId"] != plan["planId"] {
		t.Fatalf("offline re-plan: exit %d planId %v, online %v\n%s", off.code, off.json(t)["planId"], plan["planId"], off.stderr)
	}

	yes := runBinary(t, home, env, "plugin", "install", src, "--yes", "--plan-id", plan["planId"].(string))
	if yes.code != 1 || yes.json(t)["status"] != "partial" || yes.json(t)["applied"] != true {
		t.Fatalf("install: exit %d (want 1: some entries are blocked), %s", yes.code, yes.stdout)
	}
	// Again: what installed is up to date; what could not still cannot.
	again := runBinary(t, home, env, "plugin", "install", src, "--yes")
	if again.code != 1 || again.json(t)["errorCode"] != "install.blocked" || !strings.Contains(again.stdout, "installed as planned already") {
		t.Fatalf("re-install: exit %d %v\n%s", again.code, again.json(t)["errorCode"], again.stdout)
	}
	if st := again.json(t)["actions"].([]any)[0].(map[string]any); st["status"] == "conflict" {
		t.Fatalf("an identical plugin is a conflict: %v", st)
	}

	show := runBinary(t, home, env, "plugin", "show", "notes")
	var descLines int
	for _, line := range strings.Split(show.stdout, "\n") {
		if strings.HasPrefix(line, "description:") {
			descLines++
			if !strings.Contains(line, "Takes notes.") || !strings.Contains(line, "second line") {
				t.Errorf("description line: %q", line)
			}
		}
	}
	if show.code != 0 || descLines != 1 || strings.Contains(show.stdout, "\n\tAnd a third") || strings.Contains(show.stdout, "\nA second line") {
		t.Fatalf("show notes:\n%s", show.stdout)
	}
	show = runBinary(t, home, env, "plugin", "show", "audit-logger")
	if !strings.Contains(show.stdout, "needed by:     deploy-kit") || strings.Contains(show.stdout, "installed as:") {
		t.Errorf("show audit-logger:\n%s", show.stdout)
	}
	show = runBinary(t, home, env, "plugin", "show", "superpowers-dev")
	if !strings.Contains(show.stdout, "https://github.com/acme/faithful/tree/"+sha+"/plugins/superpowers") {
		t.Errorf("show superpowers-dev:\n%s", show.stdout)
	}

	rm := runBinary(t, home, env, "plugin", "remove", "audit-logger", "--yes")
	if rm.code != 1 || !strings.Contains(rm.stdout, "needed by deploy-kit") {
		t.Fatalf("remove a needed plugin: exit %d\n%s", rm.code, rm.stdout)
	}
	if r := runBinary(t, home, env, "plugin", "remove", "deploy-kit", "--yes"); r.code != 0 {
		t.Fatalf("remove deploy-kit: %d %s", r.code, r.stdout)
	}
	// audit-logger came with the marketplace, not as a dependency: prune
	// leaves it.
	if p := runBinary(t, home, env, "plugin", "prune", "--yes"); p.code != 0 || p.json(t)["status"] != "up-to-date" {
		t.Fatalf("prune: %d %s", p.code, p.stdout)
	}
	if r := runBinary(t, home, env, "plugin", "prune"); r.code != 2 {
		t.Fatalf("prune without --yes or --dry-run: exit %d", r.code)
	}
}

func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
