package manifest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// corpusCounts pins how the real-world manifests in shared/corpus classify.
// The corpus holds manifests only, no plugin trees, so each is parsed
// against an empty root: declared paths do not exist there, and only
// inline capabilities (mcpServers, hooks) can map.
var corpusCounts = map[Kind]map[string]int{
	KindClaude: {"full": 5, "partial": 9, "none": 2003, "error": 0},
	KindCodex:  {"full": 0, "partial": 0, "none": 287, "error": 0},
}

func TestCorpus(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "shared", "corpus")
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		t.Fatalf("corpus not found at %s (it ships beside the repository): %v", dir, err)
	}
	root := t.TempDir()
	got := map[Kind]map[string]int{KindClaude: {}, KindCodex: {}}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "_schemas" {
			return filepath.SkipDir
		}
		var kind Kind
		switch d.Name() {
		case "plugin.json":
			kind = KindClaude
		case "codex-plugin.json":
			kind = KindCodex
		default:
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		class, err := classify(kind, data, root)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		got[kind][class]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for kind, want := range corpusCounts {
		for class, n := range want {
			if got[kind][class] != n {
				t.Errorf("%s %s: got %d, want %d", kind, class, got[kind][class], n)
			}
		}
	}
	t.Logf("corpus: %v", got)
}

// classify parses one manifest and checks the package is self-consistent;
// a panic is turned into an error naming the file.
func classify(kind Kind, data []byte, root string) (class string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	p, perr := Parse(kind, data, root, LoadOptions{})
	if perr != nil {
		return "error", nil
	}
	switch {
	case p.Kind != kind:
		return "", fmt.Errorf("kind %q", p.Kind)
	case p.Blocked != (p.Compatibility == CompatNone):
		return "", fmt.Errorf("blocked=%v with compatibility %q", p.Blocked, p.Compatibility)
	case p.Blocked && p.BlockReason == "":
		return "", fmt.Errorf("blocked without a reason")
	case p.Compatibility == CompatPartial && len(p.Warnings) == 0:
		return "", fmt.Errorf("partial without a warning")
	}
	for _, s := range p.MCPServers {
		if s.AutoStart {
			return "", fmt.Errorf("imported MCP server %q auto-starts", s.Name)
		}
	}
	return string(p.Compatibility), nil
}

func TestSchemaFixtures(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "shared", "corpus", "_schemas", "fixtures")
	tests := []struct {
		file string
		kind Kind
		want Compatibility
	}{
		{"test__codex-plugin-manifest__inline-mcp.json", KindCodex, CompatFull},
		{"test__codex-plugin-manifest__plugin.json", KindCodex, CompatNone},
		{"test__claude-code-plugin-manifest__minimal.json", KindClaude, CompatNone},
		{"negative_test__codex-plugin-manifest__unsupported-hooks-field.json", KindCodex, CompatNone},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatalf("schema fixture missing: %v", err)
			}
			p, err := Parse(tc.kind, data, t.TempDir(), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Compatibility != tc.want {
				t.Errorf("compatibility = %q, want %q; warnings %q", p.Compatibility, tc.want, p.Warnings)
			}
		})
	}
}
