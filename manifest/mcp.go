package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"

	"reasonix.io/plugind/secrets"
)

// mcpSpec is an MCP server declaration in any of the manifest dialects.
type mcpSpec struct {
	Type      string            `json:"type"`
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	Cwd       string            `json:"cwd"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers"`
	AutoStart *bool             `json:"autoStart"`
}

// transport resolves the declared type. Claude's "local" is stdio; an
// untyped entry is stdio with a command and http with a url.
func (s mcpSpec) transport() (string, error) {
	t := strings.ToLower(s.Type)
	switch t {
	case "", "stdio", "local":
		if t == "" && s.Command == "" && s.URL != "" {
			return "http", nil
		}
		if s.Command == "" {
			return "", fmt.Errorf("a stdio server needs a command")
		}
		return "stdio", nil
	case "http", "streamable-http", "streamablehttp", "sse":
		if s.URL == "" {
			return "", fmt.Errorf("a %s server needs a url", t)
		}
		if t == "sse" {
			return "sse", nil
		}
		return "http", nil
	}
	return "", fmt.Errorf("transport %q is not supported (stdio, http or sse)", s.Type)
}

// toolPrefix is the name prefix the agent sees for a server's tools.
func toolPrefix(plugin, server string) string {
	return "mcp__plugin_" + toolID(plugin) + "_" + toolID(server) + "__"
}

// toolID makes a name usable inside a tool name. Non-ASCII names get a
// stable hash-based ID so two display names never collide.
func toolID(name string) string {
	if strings.ContainsFunc(name, func(r rune) bool { return r > 0x7e }) {
		sum := sha256.Sum256([]byte(name))
		return "s" + hex.EncodeToString(sum[:4])
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, name)
}

// addMCP records a server. A second declaration of the same name is
// dropped: silently when identical, with a warning when it differs.
func (b *builder) addMCP(name string, s mcpSpec, source string, autoStart bool, specs map[string]mcpSpec) error {
	if prev, dup := specs[name]; dup {
		if !reflect.DeepEqual(prev, s) {
			b.skip("%s: MCP server %q is declared again with a different definition; the first one is kept", source, name)
		}
		return nil
	}
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("MCP server with an empty name")
	}
	tr, err := s.transport()
	if err != nil {
		return fmt.Errorf("MCP server %q: %w", name, err)
	}
	specs[name] = s
	b.pkg.MCPServers = append(b.pkg.MCPServers, MCPServer{
		Name:       name,
		Transport:  tr,
		Command:    secrets.Mask(s.Command),
		Args:       secrets.MaskArgs(s.Args),
		URL:        secrets.Mask(s.URL),
		Env:        secrets.MaskValues(s.Env),
		Headers:    secrets.MaskValues(s.Headers),
		AutoStart:  autoStart,
		ToolPrefix: toolPrefix(b.pkg.Name, name),
		Source:     source,
	})
	return nil
}
