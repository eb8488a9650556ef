package manifest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"reasonix.io/plugind/secrets"
)

func TestNativeFixture(t *testing.T) {
	t.Parallel()
	p, err := Load("testdata/native", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != KindReasonix || p.ManifestPath != NativeManifest || p.Name != "example" || p.Version != "1.0.0" ||
		p.Compatibility != CompatFull || p.Blocked {
		t.Errorf("header = %+v", p)
	}
	if len(p.Warnings) != 0 {
		t.Errorf("warnings = %q", p.Warnings)
	}
	wantSkills := []Skill{
		{Name: "review", Invocation: "/example:review", Description: "Review a change: correctness first, then style",
			Path: "skills/review", AllowedTools: []string{"Read", "Grep", "Bash(git diff:*)"}},
		{Name: "writing", Invocation: "/example:writing", Description: "Write clear prose for design docs",
			Path: "skills/writing", AllowedTools: []string{"Read", "Write", "mcp__plugin_example_helper__search"}},
	}
	if !reflect.DeepEqual(p.Skills, wantSkills) {
		t.Errorf("skills = %+v\nwant %+v", p.Skills, wantSkills)
	}
	wantCommands := []Command{
		{Name: "plan", Invocation: "/example:plan", Description: "Plan a change before editing", ArgumentHint: "[file] [--deep]", Path: "commands/plan.md"},
		{Name: "nested:deep", Invocation: "/example:nested:deep", Description: "A nested prompt template", Path: "prompts/nested/deep.md"},
	}
	if !reflect.DeepEqual(p.Commands, wantCommands) {
		t.Errorf("commands = %+v\nwant %+v", p.Commands, wantCommands)
	}
	wantAgents := []Agent{{Name: "explorer", Invocation: "/example:agent:explorer", Description: "Read-only repository explorer", Path: "agents/explorer.md"}}
	if !reflect.DeepEqual(p.Agents, wantAgents) {
		t.Errorf("agents = %+v", p.Agents)
	}
	wantHooks := []Hook{
		{Event: "SessionStart", Command: "hooks/session-start", Form: HookExec, Description: "Load startup context", Source: NativeManifest},
		{Event: "SessionStart", Command: "printf 'ready' && ./hooks/audit", Shell: "bash", Form: HookShell, Description: "Run a compound shell script", Source: NativeManifest},
		{Event: "SessionStart", ContextFile: "context/startup.md", Form: HookContext, Source: NativeManifest},
		{Event: "PreToolUse", Matcher: "Bash", Command: "hooks/guard", Args: []string{"--strict"}, Form: HookExec, Timeout: 5,
			Env: map[string]string{"GUARD_TOKEN": secrets.Masked}, Source: NativeManifest},
	}
	if !reflect.DeepEqual(p.Hooks, wantHooks) {
		t.Errorf("hooks = %+v\nwant %+v", p.Hooks, wantHooks)
	}
	wantMCP := []MCPServer{
		{Name: "helper", Transport: "stdio", Command: "bin/helper", Args: []string{"--api-key", secrets.Masked},
			Env: map[string]string{"HELPER_TOKEN": secrets.Masked, "HELPER_HOME": "${HOME}"}, AutoStart: true,
			ToolPrefix: "mcp__plugin_example_helper__", Source: NativeManifest},
		{Name: "remote", Transport: "http", URL: "https://***@mcp.example.com/v1?access_token=***&team=***",
			Headers: map[string]string{"Authorization": "Bearer ${REMOTE_TOKEN}"}, AutoStart: false,
			ToolPrefix: "mcp__plugin_example_remote__", Source: NativeManifest},
	}
	if !reflect.DeepEqual(p.MCPServers, wantMCP) {
		t.Errorf("mcpServers = %+v\nwant %+v", p.MCPServers, wantMCP)
	}
	if !reflect.DeepEqual(p.Themes, []string{"themes/dark/theme.json"}) {
		t.Errorf("themes = %q", p.Themes)
	}
	rt := p.Runtime
	if rt == nil {
		t.Fatal("runtime missing")
	}
	if !rt.FullTrust || !strings.HasPrefix(rt.Warning, "FULL TRUST:") || rt.Command != "${REASONIX_PLUGIN_ROOT}/bin/example" ||
		!reflect.DeepEqual(rt.Capabilities, []string{"interceptors", "tools"}) ||
		!reflect.DeepEqual(rt.Intercepts, []string{"input.receive", "tool.before"}) ||
		!reflect.DeepEqual(rt.Replaces, []string{"tool:glossary"}) ||
		!reflect.DeepEqual(rt.Tools, []RuntimeTool{{Name: "glossary_lookup", ModelName: "ext__example__glossary_lookup",
			Description: "Look a term up in the team glossary", ReadOnly: true}}) {
		t.Errorf("runtime = %+v", rt)
	}
	// The printed shape is part of the CLI/HTTP contract.
	out, err := json.Marshal(rt)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"fullTrust":true`, `"warning":"FULL TRUST:`, `"command":`, `"args":[]`, `"capabilities":`, `"intercepts":`, `"replaces":`, `"tools":`} {
		if !strings.Contains(string(out), key) {
			t.Errorf("runtime JSON %s lacks %s", out, key)
		}
	}
	// Native packages import no sidecar: the stray .mcp.json is not loaded,
	// but an export must still strip it.
	for _, s := range p.MCPServers {
		if s.Name == "stray" {
			t.Error("native package imported .mcp.json")
		}
	}
	if got := CredentialFiles(p); !reflect.DeepEqual(got, []string{".mcp.json", NativeManifest}) {
		t.Errorf("CredentialFiles = %q", got)
	}
}

func TestNativeNameOverride(t *testing.T) {
	t.Parallel()
	p, err := Load("testdata/native", LoadOptions{Name: "renamed"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "renamed" || p.Skills[0].Invocation != "/renamed:review" || p.MCPServers[0].ToolPrefix != "mcp__plugin_renamed_helper__" ||
		p.Runtime.Tools[0].ModelName != "ext__renamed__glossary_lookup" {
		t.Errorf("override not applied: %+v", p)
	}
}

// native builds a reasonix-plugin.json around body (the members after
// apiVersion and name).
func native(body string) string {
	if body != "" {
		body = ",\n" + body
	}
	return `{"apiVersion": "reasonix.io/plugin/v2", "name": "demo"` + body + "}"
}

func TestNativeErrors(t *testing.T) {
	t.Parallel()
	skill := map[string]string{"skills/a/SKILL.md": "---\ndescription: a\n---\n"}
	tests := []struct {
		name     string
		manifest string
		files    map[string]string
		links    map[string]string // target "OUTSIDE/…" is rewritten to an outside dir
		opts     LoadOptions
		want     []string
	}{
		{name: "apiVersion missing", manifest: `{"name": "demo"}`, want: []string{"apiVersion", "is missing", `"reasonix.io/plugin/v2"`}},
		{name: "apiVersion v1", manifest: `{"apiVersion": "reasonix.io/plugin/v1", "name": "demo"}`, want: []string{"apiVersion", `"reasonix.io/plugin/v1"`, `"reasonix.io/plugin/v2"`}},
		{name: "apiVersion v2.1", manifest: `{"apiVersion": "reasonix.io/plugin/v2.1", "name": "demo"}`, want: []string{"apiVersion", "v2.1", `"reasonix.io/plugin/v2"`}},
		{name: "apiVersion v2.0", manifest: `{"apiVersion": "reasonix.io/plugin/v2.0", "name": "demo"}`, want: []string{"apiVersion", "v2.0", `"reasonix.io/plugin/v2"`}},
		{name: "apiVersion not a string", manifest: `{"apiVersion": 2, "name": "demo"}`, want: []string{"apiVersion", `"reasonix.io/plugin/v2"`}},
		{name: "unknown root field", manifest: native(`"homepage": "https://x"`), want: []string{`unknown field "homepage"`}},
		{name: "unknown contributes field", manifest: native(`"contributes": {"skils": ["skills"]}`), want: []string{`unknown field "contributes.skils"`}},
		{name: "unknown runtime tool field", manifest: native(`"runtime": {"command": "x", "capabilities": ["tools"], "tools": [{"nmae": "t"}]}`),
			want: []string{`unknown field "runtime.tools[0].nmae"`}},
		{name: "unknown hook field", manifest: native(`"contributes": {"hooks": {"SessionStart": [{"comand": "x"}]}}`),
			want: []string{`unknown field "contributes.hooks.SessionStart[0].comand"`}},
		{name: "unknown mcp field", manifest: native(`"mcpServers": {"s": {"command": "x", "enviroment": {}}}`),
			want: []string{`unknown field "mcpServers.s.enviroment"`}},
		{name: "unknown provides field", manifest: native(`"provides": [{"namespace": "n", "scope": "x"}]`), want: []string{`unknown field "provides[0].scope"`}},
		{name: "wrong type", manifest: native(`"contributes": {"skills": "skills"}`), want: []string{`"contributes.skills"`, "must be a list of paths", "found the string"}},
		{name: "dotdot path", manifest: native(`"contributes": {"skills": ["../outside"]}`), want: []string{"contributes.skills[0]", `"../outside"`, "leaves the package root"}},
		{name: "nested dotdot path", manifest: native(`"skills": ["skills/../../x"]`), want: []string{"skills[0]", `"skills/../../x"`, "leaves the package root"}},
		{name: "absolute path", manifest: native(`"contributes": {"commands": ["/etc"]}`), want: []string{"contributes.commands[0]", `"/etc"`, "absolute"}},
		{name: "escaping symlink", manifest: native(`"contributes": {"skills": ["linked"]}`), links: map[string]string{"linked": "OUTSIDE"},
			want: []string{"contributes.skills[0]", `"linked"`, "leaves the package root"}},
		{name: "escaping symlink below a declared dir", manifest: native(`"contributes": {"skills": ["skills/deep/x"]}`), links: map[string]string{"skills/deep": "OUTSIDE"},
			want: []string{"contributes.skills[0]", `"skills/deep/x"`, "leaves the package root"}},
		{name: "dangling symlink pointing outside", manifest: native(`"contributes": {"agents": ["gone"]}`), links: map[string]string{"gone": "OUTSIDE/nothing-here"},
			want: []string{"contributes.agents[0]", `"gone"`, "leaves the package root"}},
		{name: "escaping symlinked context file", manifest: native(`"hooks": {"SessionStart": [{"contextFile": "ctx.md"}]}`),
			links: map[string]string{"ctx.md": "OUTSIDE/secret.md"}, want: []string{"hooks.SessionStart[0]", `"ctx.md"`, "leaves the package root"}},
		{name: "escaping runtime command", manifest: native(`"runtime": {"command": "${REASONIX_PLUGIN_ROOT}/../bin/x"}`),
			want: []string{"runtime", "leaves the package root"}},
		{name: "escaping theme glob", manifest: native(`"themes": ["../*/theme.json"]`), want: []string{"themes[0]", "leaves the package root"}},
		{name: "theme that is not a file", manifest: native(`"themes": ["themes/*/theme.json"]`), files: map[string]string{"themes/x/theme.json/": ""},
			want: []string{"themes/x/theme.json", "not a regular file"}},
		{name: "malformed JSON", manifest: "{\n  \"apiVersion\": \"reasonix.io/plugin/v2\",\n  \"name\": \"demo\"\n  \"version\": \"1\"\n}",
			want: []string{NativeManifest, "line 4, column 3"}},
		{name: "truncated JSON", manifest: `{"apiVersion": "reasonix.io/plugin/v2"`, want: []string{NativeManifest, "not valid JSON", "line 1"}},
		{name: "not an object", manifest: `["x"]`, want: []string{"JSON object"}},
		{name: "bad name", manifest: `{"apiVersion": "reasonix.io/plugin/v2", "name": "../evil"}`, want: []string{"name", `"../evil"`}},
		{name: "empty name", manifest: `{"apiVersion": "reasonix.io/plugin/v2"}`, want: []string{"name", "empty"}},
		{name: "bad override name", manifest: native(""), opts: LoadOptions{Name: "has space"}, want: []string{"--name", `"has space"`}},
		{name: "conflicting top-level and contributes", manifest: native(`"mcpServers": {"s": {"command": "a"}}, "contributes": {"mcpServers": {"s": {"command": "b"}}}`),
			want: []string{"mcpServers.s", "different definitions"}},
		{name: "unknown hook event", manifest: native(`"hooks": {"OnSave": [{"command": "x"}]}`), want: []string{"hooks.OnSave", "unknown hook event"}},
		{name: "hook with command and contextFile", manifest: native(`"hooks": {"SessionStart": [{"command": "x", "contextFile": "c.md"}]}`),
			want: []string{"hooks.SessionStart[0]", "both command and contextFile"}},
		{name: "context file that is a directory", manifest: native(`"hooks": {"SessionStart": [{"contextFile": "skills"}]}`),
			want: []string{"hooks.SessionStart[0]", `contextFile "skills" is not a regular file`}},
		{name: "context file that is the root", manifest: native(`"hooks": {"SessionStart": [{"contextFile": "."}]}`),
			want: []string{"hooks.SessionStart[0]", `contextFile "." is not a regular file`}},
		{name: "hook with neither", manifest: native(`"hooks": {"SessionStart": [{"description": "x"}]}`), want: []string{"hooks.SessionStart[0]", "command or a contextFile"}},
		{name: "hook shell", manifest: native(`"hooks": {"SessionStart": [{"command": "x", "shell": "fish"}]}`), want: []string{`shell "fish"`}},
		{name: "mcp without command", manifest: native(`"mcpServers": {"s": {"type": "stdio"}}`), want: []string{"mcpServers.s", "needs a command"}},
		{name: "mcp unknown transport", manifest: native(`"mcpServers": {"s": {"type": "ws", "url": "wss://x"}}`), want: []string{"mcpServers.s", `"ws"`}},
		{name: "runtime without command", manifest: native(`"runtime": {"args": []}`), want: []string{"runtime", "command is required"}},
		{name: "runtime capability", manifest: native(`"runtime": {"command": "x", "capabilities": ["root"]}`), want: []string{"capabilities[0]", `"root"`}},
		{name: "runtime slot", manifest: native(`"runtime": {"command": "x", "replaces": ["everything"]}`), want: []string{"replaces[0]", `"everything"`}},
		{name: "runtime tools need capability", manifest: native(`"runtime": {"command": "x", "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}`),
			want: []string{"capabilities", `"tools"`}},
		{name: "runtime tool name", manifest: native(`"runtime": {"command": "x", "capabilities": ["tools"], "tools": [{"name": "bad name", "inputSchema": {"type": "object"}}]}`),
			want: []string{"tools[0]", `"bad name"`}},
		{name: "runtime tool schema", manifest: native(`"runtime": {"command": "x", "capabilities": ["tools"], "tools": [{"name": "t", "inputSchema": {"type": "string"}}]}`),
			want: []string{"tools[0]", "inputSchema"}},
		{name: "runtime duplicate tool", manifest: native(`"runtime": {"command": "x", "capabilities": ["tools"], "tools": [{"name": "t", "inputSchema": {"type": "object"}}, {"name": "t", "inputSchema": {"type": "object"}}]}`),
			want: []string{"tools[1]", "used twice"}},
		{name: "runtime priority", manifest: native(`"runtime": {"command": "x", "priority": 1.5}`), want: []string{"priority", "whole number"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{NativeManifest: tc.manifest}
			for k, v := range skill {
				files[k] = v
			}
			for k, v := range tc.files {
				files[k] = v
			}
			links := map[string]string{}
			if len(tc.links) > 0 {
				out := outsideDir(t)
				for k, v := range tc.links {
					links[k] = strings.Replace(v, "OUTSIDE", out, 1)
				}
			}
			root := layout(t, files, links)
			p, err := Load(root, tc.opts)
			if err == nil {
				t.Fatalf("loaded %+v, want an error", p)
			}
			wantError(t, err, tc.want...)
		})
	}
}

func TestNativeAccepted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		manifest string
		files    map[string]string
		links    map[string]string
		opts     LoadOptions
		check    func(t *testing.T, p *Package)
	}{
		{name: "minimal", manifest: native(""), check: func(t *testing.T, p *Package) {
			if p.Compatibility != CompatFull || p.Blocked || p.Runtime != nil || len(p.Skills) != 0 {
				t.Errorf("got %+v", p)
			}
		}},
		{name: "override fixes a bad manifest name", manifest: `{"apiVersion": "reasonix.io/plugin/v2", "name": "bad name"}`, opts: LoadOptions{Name: "good"},
			check: func(t *testing.T, p *Package) {
				if p.Name != "good" {
					t.Errorf("name = %q", p.Name)
				}
			}},
		{name: "identical top-level and contributes declarations merge", files: map[string]string{"skills/a/SKILL.md": "x"},
			manifest: native(`"skills": ["skills", "./skills/"], "contributes": {"skills": ["skills"], "hooks": {"Stop": [{"command": "x"}]}}, "hooks": {"Stop": [{"command": "x"}]}`),
			check: func(t *testing.T, p *Package) {
				if len(p.Skills) != 1 || len(p.Hooks) != 1 || p.Hooks[0].Form != HookShell {
					t.Errorf("got skills %+v hooks %+v", p.Skills, p.Hooks)
				}
			}},
		{name: "missing declared path warns", manifest: native(`"contributes": {"agents": ["agents"]}`), check: func(t *testing.T, p *Package) {
			if !hasWarning(p, `contributes.agents[0] "agents" does not exist`) {
				t.Errorf("warnings = %q", p.Warnings)
			}
		}},
		{name: "inputSchema is free-form", manifest: native(`"runtime": {"command": "bin/x", "capabilities": ["tools"], "tools": [{"name": "t", "inputSchema": {"type": "object", "x-anything": {"nested": [1, {"whatever": true}]}}}]}`),
			check: func(t *testing.T, p *Package) {
				if p.Runtime == nil || len(p.Runtime.Tools) != 1 {
					t.Errorf("runtime = %+v", p.Runtime)
				}
			}},
		{name: "in-tree symlink is fine", files: map[string]string{"real/a/SKILL.md": "---\ndescription: linked\n---\n"},
			links: map[string]string{"linked": "real"}, manifest: native(`"skills": ["linked"]`), check: func(t *testing.T, p *Package) {
				if len(p.Skills) != 1 || p.Skills[0].Description != "linked" {
					t.Errorf("skills = %+v", p.Skills)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{NativeManifest: tc.manifest}
			for k, v := range tc.files {
				files[k] = v
			}
			p, err := Load(layout(t, files, tc.links), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, p)
		})
	}
}
