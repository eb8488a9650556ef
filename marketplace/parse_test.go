package marketplace

// Parse parses a Claude Code .claude-plugin/marketplace.json, as the tests
// name the two document kinds.
func Parse(data []byte, opts Options) (*Marketplace, error) { return ClaudeDocument.Parse(data, opts) }

// ParseCodex parses a Codex .agents/plugins/marketplace.json, whose
// {"source":"local","path":…} entries are relative sources.
func ParseCodex(data []byte, opts Options) (*Marketplace, error) {
	return CodexDocument.Parse(data, opts)
}
