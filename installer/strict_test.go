package installer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Claude's strict semantics and manifest precedence, on a local marketplace
// (the same code reads remote ones).
func TestEntryManifests(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	dir := writeTree(t, filepath.Join(t.TempDir(), "m"), map[string]string{
		".claude-plugin/marketplace.json": marketplaceJSON(t, "m",
			// strict: false, no manifest in the folder: the entry is it.
			entry("loose", "./loose", "strict", false, "version", "2.0.0", "description", "from the entry",
				"commands", []string{"./cmds/run.md"},
				"mcpServers", map[string]any{"db": map[string]any{"command": "db-mcp", "args": []string{"--ro"}}}),
			// strict: false beside a plugin.json, with components of its
			// own: Claude Code refuses the plugin ("conflicting manifests").
			entry("override", "./override", "strict", false, "commands", []string{"./cmds/entry.md"}),
			// strict (default): the plugin's own manifest, the entry's
			// component files added; its MCP and LSP servers are not
			// (Claude Code reads them only from an entry that is the
			// manifest), and the plan says so.
			entry("merged", "./merged", "agents", []string{"./extra-agents/helper.md"},
				"mcpServers", map[string]any{"entry-server": map[string]any{"command": "entry-server"}},
				"lspServers", map[string]any{"gopls": map[string]any{"command": "gopls", "extensionToLanguage": map[string]string{".go": "go"}}}),
			// Only LSP servers: nothing maps, and the block says so.
			entry("go-lsp", "./lsp", "strict", false, "lspServers", map[string]any{"gopls": map[string]any{"command": "gopls", "extensionToLanguage": map[string]string{".go": "go"}}}),
			// A folder with both a Claude and a Codex manifest, listed by a
			// Claude marketplace: read as Claude.
			entry("both", "./both"),
		),
		"loose/cmds/run.md":                   "---\ndescription: run\n---\nrun\n",
		"override/.claude-plugin/plugin.json": `{"name":"override","commands":["./cmds/own.md"]}`,
		"override/cmds/own.md":                "own\n",
		"override/cmds/entry.md":              "entry\n",
		"merged/.claude-plugin/plugin.json":   `{"name":"merged","commands":["./commands"]}`,
		"merged/commands/c.md":                "c\n",
		"merged/extra-agents/helper.md":       "---\ndescription: helper\n---\nhelp\n",
		"lsp/README.md":                       "an LSP plugin\n",
		"both/.claude-plugin/plugin.json":     `{"name":"both","version":"claude"}`,
		"both/.codex-plugin/plugin.json":      `{"name":"both","version":"codex","skills":"./skills"}`,
		"both/skills/s/SKILL.md":              "---\ndescription: s\n---\n",
	})
	resp, err := env.install(Request{Source: mustSource(dir)}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	got := actionsByName(resp)
	loose := got["loose"]
	if loose.Status != ActionReady || loose.ManifestSource != "marketplace entry (strict: false)" || loose.Version != "2.0.0" ||
		len(loose.Commands) != 1 || loose.Commands[0].Invocation != "/loose:run" || len(loose.MCPServers) != 1 {
		t.Errorf("loose: %+v (%s)", loose, loose.ErrorText())
	}
	override := got["override"]
	if override.Status != ActionBlocked || !strings.Contains(override.ErrorText(), "conflicting manifests") {
		t.Errorf("override: %s %q", override.Status, override.ErrorText())
	}
	merged := got["merged"]
	if len(merged.Commands) != 1 || len(merged.Agents) != 1 || merged.ManifestSource != ".claude-plugin/plugin.json + marketplace entry" ||
		len(merged.MCPServers) != 0 || len(merged.LSPServers) != 0 {
		t.Errorf("merged: commands %+v agents %+v MCP %+v LSP %+v source %q", merged.Commands, merged.Agents, merged.MCPServers, merged.LSPServers, merged.ManifestSource)
	}
	if !strings.Contains(strings.Join(merged.Warnings, "\n"), "the marketplace entry's fields mcpServers, lspServers are ignored beside .claude-plugin/plugin.json") {
		t.Errorf("merged warnings: %q", merged.Warnings)
	}
	lsp := got["go-lsp"]
	if lsp.Status != ActionBlocked || !bytes.Contains([]byte(lsp.ErrorText()), []byte("declares only LSP servers (gopls)")) || len(lsp.LSPServers) != 0 && lsp.LSPServers[0].Mapped {
		t.Errorf("go-lsp: %s %q", lsp.Status, lsp.ErrorText())
	}
	if both := got["both"]; both.ManifestKind != "claude" || both.Version != "claude" {
		t.Errorf("both from a Claude marketplace: %s %s", both.ManifestKind, both.Version)
	}

	// Installed, the strict: false plugin reads the same again (show) and
	// exports as a package that installs on its own with the same
	// inventory.
	if _, err := env.install(Request{Source: mustSource(dir), Name: "loose"}, Approval{Yes: true}); err != nil {
		t.Fatal(err)
	}
	info, err := env.in.Show(context.Background(), "loose")
	if err != nil || len(info.Commands) != 1 || len(info.MCPServers) != 1 || len(info.Problems) != 0 {
		t.Fatalf("show loose: %+v %v", info, err)
	}
	var zipBuf bytes.Buffer
	if _, err := env.in.Export(context.Background(), "loose", &zipBuf); err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(t.TempDir(), "loose.zip")
	if err := os.WriteFile(zipPath, zipBuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	other := newEnv(t)
	re, err := other.install(Request{Source: mustSource(zipPath)}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if a := re.Actions[0]; a.Name != "loose" || len(a.Commands) != 1 || len(a.MCPServers) != 1 {
		t.Errorf("the exported strict: false plugin installs as %+v", a)
	}
}
