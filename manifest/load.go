package manifest

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"

	"reasonix.io/plugind"
)

// LoadOptions adjust how a package is read.
type LoadOptions struct {
	// Name overrides the manifest's name (install --name); it is what the
	// qualified invocations use.
	Name string
	// Implied names a package that has no manifest at all. Claude Code reads
	// such a folder (in a marketplace, or when the user names it) by its
	// conventions — skills/, commands/, agents/, hooks/hooks.json, .mcp.json
	// — so Load does too, under this name, with a warning. "" refuses it.
	Implied string
	// Prefer is the manifest kind read after a native one when a folder
	// ships several: the format of the marketplace the package came from
	// (Claude for .claude-plugin/marketplace.json, Codex for .agents/…).
	Prefer Kind
	// Entry is the package's marketplace entry, when it has manifest
	// fields of its own (see EntryManifest).
	Entry *EntryManifest
}

// EntryManifest is what a Claude marketplace entry says about its plugin,
// as a plugin.json document: metadata and component fields (commands,
// agents, skills, hooks, mcpServers, lspServers…). With Strict (Claude's
// default) the plugin's own manifest is authoritative and the entry's
// component fields supplement it; without, the entry is the manifest and
// the folder needs none.
type EntryManifest struct {
	Doc    json.RawMessage `json:"doc"`
	Strict bool            `json:"strict"`
	// Root: the entry's source is the marketplace's root (".", "./"),
	// where Claude Code gives an entry that lists skills those skills
	// only.
	Root bool `json:"root,omitempty"`
}

// Load detects root's manifest and reads the package. Errors carry
// plugind codes: CodeInvalidSource for a bad or missing manifest,
// CodeSourceUnreadable when root cannot be read. The root is resolved
// once, and every step of the load reads through that tree (a bulk plan
// loads hundreds of packages; issue 13 counts filesystem calls per
// installed file).
func Load(root string, opts LoadOptions) (*Package, error) {
	t, err := openTree(root)
	if err != nil {
		return nil, err
	}
	kind, rel, err := t.detect(root, opts.Prefer)
	if opts.Entry != nil && kind != KindReasonix && (errors.Is(err, ErrNoManifest) || err == nil) {
		return loadWithEntry(t, kind, rel, opts)
	}
	if errors.Is(err, ErrNoManifest) && opts.Implied != "" {
		return loadImplied(t, opts)
	}
	if err != nil {
		return nil, err
	}
	data, err := t.readFile(rel, maxJSONBytes)
	if err != nil {
		return nil, coded(plugind.CodeSourceUnreadable, "read %s: %w", rel, err)
	}
	return t.parse(kind, data, opts)
}

// Parse reads manifest bytes of the given kind for the package at root.
// A Claude or Codex manifest's capabilities map by Claude's conventions
// (Codex adds its CLAUDE.md and session-start-codex ones); anything that
// does not map is named in Warnings and lowers Compatibility.
func Parse(kind Kind, data []byte, root string, opts LoadOptions) (*Package, error) {
	t, err := openTree(root)
	if err != nil {
		return nil, err
	}
	return t.parse(kind, data, opts)
}

func (t *tree) parse(kind Kind, data []byte, opts LoadOptions) (*Package, error) {
	label := ClaudeManifest
	switch kind {
	case KindReasonix:
		pkg, err := t.parseNative(data, opts)
		if err != nil {
			return nil, plugind.WithCode(plugind.CodeInvalidSource, err)
		}
		return pkg, nil
	case KindCodex:
		label = CodexManifest
	case KindClaude:
	default:
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "unknown manifest kind %q", kind)
	}
	doc, err := parseJSON(label, data)
	if err != nil {
		return nil, err
	}
	return t.readCompat(opts, compatInput{kind: kind, own: doc, ownLabel: label})
}

// Counts summarizes an inventory, e.g. for list output.
func (p *Package) Counts() string {
	return fmt.Sprintf("%d skills, %d commands, %d agents, %d hooks, %d MCP servers",
		len(p.Skills), len(p.Commands), len(p.Agents), len(p.Hooks), len(p.MCPServers))
}

// loadImplied reads a manifest-less folder as a Claude plugin named
// opts.Implied. A folder with nothing Claude's conventions map is blocked,
// as any package with nothing mapped is.
func loadImplied(t *tree, opts LoadOptions) (*Package, error) {
	opts.Name = cmp.Or(opts.Name, opts.Implied)
	doc, err := json.Marshal(map[string]string{"name": opts.Name})
	if err != nil {
		return nil, err
	}
	pkg, err := t.parse(KindClaude, doc, opts)
	if err != nil {
		return nil, err
	}
	pkg.ManifestPath = ""
	pkg.Warnings = append([]string{fmt.Sprintf("no plugin manifest: read as a Claude plugin by its conventions (skills/, commands/, agents/, hooks/hooks.json, .mcp.json), named %q", pkg.Name)}, pkg.Warnings...)
	return pkg, nil
}
