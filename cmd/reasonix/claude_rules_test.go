package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// claudeRulesEntries are the entries of the testdata/claude-rules
// marketplace, one per rule of Claude Code's issue 22 asks Reasonix to
// follow (or to differ from, saying so). Each was measured with Claude Code
// 2.1.197 (`claude plugin install`, `details`, `list`; the lead's facts).
func claudeRulesEntries(toolsSHA string) []map[string]any {
	return []map[string]any{
		// Component paths of a strict: false entry are the plugin folder's:
		// written from the marketplace root they are not there, which Claude
		// Code skips; the conventional folders still count.
		{"name": "rootpaths", "source": "./plugins/rootpaths", "strict": false,
			"commands": []string{"./plugins/rootpaths/commands/y.md"}},
		// Declared commands and agents replace their folders; skills add.
		{"name": "declared", "source": "./plugins/declared"},
		// The marketplace root listing skills gets those skills only.
		{"name": "root-skills", "source": "./", "skills": []string{"./plugins/rootpaths/skills/a"}},
		// Agents directly in agents/ only.
		{"name": "nested", "source": "./plugins/nested"},
		// What Claude Code fails to load is blocked with its reason.
		{"name": "barehooks", "source": "./plugins/barehooks"},
		{"name": "conflict", "source": "./plugins/conflict", "strict": false, "skills": []string{"./skills/s"}},
		// defaultEnabled: false and displayName.
		{"name": "disabled", "source": "./plugins/disabled"},
		// Differences kept, said in the plan.
		{"name": "dotclaude", "source": "./plugins/dotclaude"},
		{"name": "lsp", "source": "./plugins/lsp"},
		{"name": "subdir-url", "source": map[string]any{"source": "url", "url": "https://github.com/acme/rules-tools", "sha": toolsSHA, "path": "plugins/t"}},
	}
}

// TestClaudeRules drives testdata/claude-rules through the fake GitHub and
// the real binary: plan, validate, install, list.
func TestClaudeRules(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	toolsSHA := gh.CreateRepo("acme", "rules-tools").Commit("main", treeFiles(t, filepath.Join("testdata", "claude-rules-tools")))
	doc, err := json.Marshal(map[string]any{"name": "rules", "owner": map[string]any{"name": "acme"},
		"description": "Claude's rules, one entry each", "plugins": claudeRulesEntries(toolsSHA)})
	if err != nil {
		t.Fatal(err)
	}
	files := treeFiles(t, filepath.Join("testdata", "claude-rules"))
	files[".claude-plugin/marketplace.json"] = string(doc)
	gh.CreateRepo("acme", "rules").Commit("main", files)
	home, env := t.TempDir(), gh.Env()
	const src = "https://github.com/acme/rules"

	dry := runBinary(t, home, env, "plugin", "install", src, "--dry-run")
	plan := dry.json(t)
	acts := planActions(plan)
	status := func(name string) string { s, _ := acts[name]["status"].(string); return s }
	text := func(name, field string) string { s, _ := acts[name][field].(string); return s }
	names := func(name, field string) []string {
		var out []string
		for _, it := range acts[name][field].([]any) {
			out = append(out, it.(map[string]any)["name"].(string))
		}
		return out
	}
	warned := func(name, fragment string) bool {
		return strings.Contains(strings.Join(strs(acts[name]["warnings"]), "\n"), fragment)
	}
	same := func(got []string, want ...string) bool { return strings.Join(got, ",") == strings.Join(want, ",") }

	if status("rootpaths") != "ready" || !same(names("rootpaths", "commands"), "y", "z") || !same(names("rootpaths", "skills"), "a", "b") {
		t.Errorf("rootpaths: %s %s commands %v skills %v", status("rootpaths"), text("rootpaths", "error"), names("rootpaths", "commands"), names("rootpaths", "skills"))
	}
	if !warned("rootpaths", `"./plugins/rootpaths/commands/y.md" does not exist`) || warned("rootpaths", "plugin.json") {
		t.Errorf("rootpaths warnings: %v", acts["rootpaths"]["warnings"])
	}
	if !same(names("declared", "commands"), "only") || !same(names("declared", "agents"), "helper") || !same(names("declared", "skills"), "s2", "s1") {
		t.Errorf("declared: commands %v agents %v skills %v", names("declared", "commands"), names("declared", "agents"), names("declared", "skills"))
	}
	if !warned("declared", `commands/ is not read: the manifest declares "commands"`) {
		t.Errorf("declared warnings: %v", acts["declared"]["warnings"])
	}
	if !same(names("root-skills", "skills"), "a") {
		t.Errorf("root-skills: skills %v (the root's skills/ must not count)", names("root-skills", "skills"))
	}
	// As a Claude Code session names them (agents/x/AGENT.md is x:AGENT
	// there too; `claude plugin details` lists only top).
	if !same(names("nested", "agents"), "sub:foo", "top", "x:AGENT") {
		t.Errorf("nested: agents %v", names("nested", "agents"))
	}
	if status("barehooks") != "blocked" || !strings.Contains(text("barehooks", "error"), "Hook load failed") {
		t.Errorf("barehooks: %s %s", status("barehooks"), text("barehooks", "error"))
	}
	if status("conflict") != "blocked" || !strings.Contains(text("conflict", "error"), "conflicting manifests") {
		t.Errorf("conflict: %s %s", status("conflict"), text("conflict", "error"))
	}
	if text("disabled", "displayName") != "Nice De" || acts["disabled"]["disabledByDefault"] != true || !warned("disabled", "installed disabled") {
		t.Errorf("disabled: %v", acts["disabled"])
	}
	if status("dotclaude") != "ready" || !warned("dotclaude", ".claude/skills: read by Reasonix's .claude/ fallback") {
		t.Errorf("dotclaude: %s %v", status("dotclaude"), acts["dotclaude"]["warnings"])
	}
	if status("lsp") != "blocked" || !strings.Contains(text("lsp", "error"), "Claude Code runs them") {
		t.Errorf("lsp: %s %s", status("lsp"), text("lsp", "error"))
	}
	if status("subdir-url") != "ready" || !warned("subdir-url", `Claude Code ignores "path" on a url or github source`) {
		t.Errorf("subdir-url: %s %v", status("subdir-url"), acts["subdir-url"]["warnings"])
	}

	// validate calls an error exactly what install refuses.
	v := run(t, home, env, "plugin", "validate", src, "--json").json(t)
	refused := map[string]bool{}
	for _, f := range v["errors"].([]any) {
		f := f.(map[string]any)
		if f["reasonixInstalls"] == nil {
			refused[entryOf(f)] = true
		}
	}
	for _, f := range v["warnings"].([]any) {
		if f := f.(map[string]any); f["reasonixRefuses"] != nil {
			refused[entryOf(f)] = true
		}
	}
	for i, e := range claudeRulesEntries(toolsSHA) {
		name := e["name"].(string)
		if at := "plugins[" + itoa(i) + "]"; refused[at] != (status(name) != "ready") {
			t.Errorf("%s %s: install %s, validate refuses it: %v", at, name, status(name), refused[at])
		}
	}

	// Installed: the disabled plugin is disabled, shown by its display
	// name too.
	yes := runBinary(t, home, env, "plugin", "install", src, "--yes", "--plan-id", plan["planId"].(string))
	if yes.json(t)["applied"] != true {
		t.Fatalf("install: exit %d %s", yes.code, yes.stdout)
	}
	list := run(t, home, env, "plugin", "list")
	if !strings.Contains(list.stdout, "Nice De (disabled)") {
		t.Errorf("list does not show the display name:\n%s", list.stdout)
	}
	for _, line := range strings.Split(list.stdout, "\n") {
		if strings.HasPrefix(line, "Nice De (disabled) ") && !strings.Contains(line, " disabled ") {
			t.Errorf("defaultEnabled: false installed enabled: %q", line)
		}
	}
	if show := run(t, home, env, "plugin", "show", "disabled"); !strings.Contains(show.stdout, "Nice De") {
		t.Errorf("show does not show the display name:\n%s", show.stdout)
	}
	// An update keeps the user's choice: enabled now, enabled after.
	run(t, home, env, "plugin", "enable", "disabled")
	if r := run(t, home, env, "plugin", "install", src, "--name", "disabled", "--replace", "--yes"); r.code != 0 {
		t.Fatalf("reinstall: exit %d %s", r.code, r.stdout)
	}
	if l := run(t, home, env, "plugin", "list", "--json"); !strings.Contains(l.stdout, `"enabled": true`) {
		t.Errorf("a replace turned the plugin off again: %s", l.stdout)
	}
}

// TestClaudeMarketplaceNames: a name Claude Code reserves is accepted only
// from github.com/anthropics; a repository holding both marketplace
// formats (and a plugin at its root) is added as its Claude marketplace,
// the other noted.
func TestClaudeMarketplaceNames(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	official := `{"name":"claude-plugins-official","owner":{"name":"Anthropic"},"plugins":[{"name":"p","source":"./p"}]}`
	plugin := map[string]string{"p/skills/s/SKILL.md": "---\ndescription: s\n---\n"}
	gh.CreateRepo("anthropics", "official").Commit("main", merge(plugin, map[string]string{".claude-plugin/marketplace.json": official}))
	gh.CreateRepo("acme", "impostor").Commit("main", merge(plugin, map[string]string{".claude-plugin/marketplace.json": official}))
	gh.CreateRepo("acme", "both").Commit("main", merge(plugin, map[string]string{
		".claude-plugin/marketplace.json":  `{"name":"both-claude","owner":{"name":"acme"},"plugins":[{"name":"p","source":"./p"}]}`,
		".agents/plugins/marketplace.json": `{"name":"both-codex","plugins":[{"name":"p","source":{"source":"local","path":"./p"}}]}`,
		".claude-plugin/plugin.json":       `{"name":"root-plugin","skills":["./p/skills"]}`,
	}))
	home, env := t.TempDir(), gh.Env()
	if r := run(t, home, env, "marketplace", "add", "https://github.com/anthropics/official"); r.code != 0 {
		t.Fatalf("the official repository: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	other := t.TempDir()
	for _, args := range [][]string{
		{"marketplace", "add", "https://github.com/acme/impostor"},
		{"plugin", "install", "https://github.com/acme/impostor", "--dry-run"},
	} {
		r := run(t, other, env, args...)
		if out := r.stdout + r.stderr; r.code == 0 || !strings.Contains(out, "claude-plugins-official") || !strings.Contains(out, "is reserved for official Anthropic marketplaces") || !strings.Contains(out, "github.com/anthropics/") {
			t.Errorf("%v: exit %d %s %s", args, r.code, r.stdout, r.stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(other, "marketplaces.json")); strings.Contains(string(b), "claude-plugins-official") {
		t.Errorf("the impostor was recorded: %s", b)
	}
	both := run(t, home, env, "marketplace", "add", "https://github.com/acme/both", "--json")
	if both.code != 0 || !strings.Contains(both.stdout, "both-claude") || !strings.Contains(both.stdout, ".agents/plugins/marketplace.json, which is not read") {
		t.Errorf("both formats: exit %d %s %s", both.code, both.stdout, both.stderr)
	}
}

func entryOf(f map[string]any) string {
	if e, _ := f["entry"].(string); e != "" {
		return e
	}
	p, _ := f["path"].(string)
	if i := strings.Index(p, "]"); strings.HasPrefix(p, "plugins[") && i > 0 {
		return p[:i+1]
	}
	return ""
}

// planActions are a plan's actions by name.
func planActions(plan map[string]any) map[string]map[string]any {
	acts := map[string]map[string]any{}
	for _, a := range plan["actions"].([]any) {
		a := a.(map[string]any)
		acts[a["name"].(string)] = a
	}
	return acts
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
