package manifest

import (
	"path/filepath"
	"testing"
)

// syntheticClasses pins the manifests under testdata/corpus, small
// hand-written ones laid out like the real-world corpus: every
// compatibility class for both Claude and Codex, parsed as the corpus is,
// against an empty root.
var syntheticClasses = map[string]manifestClass{
	"claude-error-array/plugin.json":          {KindClaude, "error"},
	"claude-error-bad-name/plugin.json":       {KindClaude, "error"},
	"claude-error-json/plugin.json":           {KindClaude, "error"},
	"claude-error-name-type/plugin.json":      {KindClaude, "error"},
	"claude-full-hooks/plugin.json":           {KindClaude, "full"},
	"claude-full-mcp/plugin.json":             {KindClaude, "full"},
	"claude-none-meta/plugin.json":            {KindClaude, "none"},
	"claude-none-paths/plugin.json":           {KindClaude, "error"}, // declared paths missing: refused
	"claude-none-unsupported/plugin.json":     {KindClaude, "none"},
	"claude-partial-missing-path/plugin.json": {KindClaude, "error"}, // refused, as Claude Code refuses it
	"claude-partial-unsupported/plugin.json":  {KindClaude, "partial"},
	"codex-error-json/codex-plugin.json":      {KindCodex, "error"},
	"codex-error-no-name/codex-plugin.json":   {KindCodex, "error"},
	"codex-full-mcp/codex-plugin.json":        {KindCodex, "full"},
	"codex-none-hooks-path/codex-plugin.json": {KindCodex, "none"},
	"codex-none-skills/codex-plugin.json":     {KindCodex, "none"},
	"codex-partial-apps/codex-plugin.json":    {KindCodex, "partial"},
}

func TestSyntheticCorpus(t *testing.T) {
	t.Parallel()
	got, err := classifyDir(filepath.Join("testdata", "corpus"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range syntheticClasses {
		if got[file] != want {
			t.Errorf("%s: %s %s, want %s %s", file, got[file].kind, got[file].class, want.kind, want.class)
		}
	}
	for file := range got {
		if _, ok := syntheticClasses[file]; !ok {
			t.Errorf("%s has no pinned class", file)
		}
	}
	// Every class of both kinds has a fixture.
	counts := map[Kind]map[string]int{KindClaude: {}, KindCodex: {}}
	for _, c := range syntheticClasses {
		counts[c.kind][c.class]++
	}
	for _, kind := range []Kind{KindClaude, KindCodex} {
		for _, class := range []string{"full", "partial", "none", "error"} {
			if counts[kind][class] == 0 {
				t.Errorf("no %s fixture of class %s", kind, class)
			}
		}
	}
	checkCounts(t, got, counts)
}
