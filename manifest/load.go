package manifest

import (
	"fmt"

	"reasonix.io/plugind"
)

// LoadOptions adjust how a package is read.
type LoadOptions struct {
	// Name overrides the manifest's name (install --name); it is what the
	// qualified invocations use.
	Name string
}

// Load detects root's manifest and reads the package. Errors carry
// plugind codes: CodeInvalidSource for a bad or missing manifest,
// CodeSourceUnreadable when root cannot be read.
func Load(root string, opts LoadOptions) (*Package, error) {
	kind, rel, err := Detect(root)
	if err != nil {
		return nil, err
	}
	t, err := openTree(root)
	if err != nil {
		return nil, err
	}
	data, err := t.readFile(rel, maxJSONBytes)
	if err != nil {
		return nil, coded(plugind.CodeSourceUnreadable, "read %s: %w", rel, err)
	}
	return Parse(kind, data, root, opts)
}

// Parse reads manifest bytes of the given kind for the package at root.
func Parse(kind Kind, data []byte, root string, opts LoadOptions) (*Package, error) {
	switch kind {
	case KindReasonix:
		return ParseNative(data, root, opts)
	case KindCodex:
		return ParseCodex(data, root, opts)
	case KindClaude:
		return ParseClaude(data, root, opts)
	}
	return nil, plugind.Errorf(plugind.CodeInvalidSource, "unknown manifest kind %q", kind)
}

// Counts summarizes an inventory, e.g. for list output.
func (p *Package) Counts() string {
	return fmt.Sprintf("%d skills, %d commands, %d agents, %d hooks, %d MCP servers",
		len(p.Skills), len(p.Commands), len(p.Agents), len(p.Hooks), len(p.MCPServers))
}
