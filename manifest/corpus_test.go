package manifest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// corpusCounts pins how the real-world manifests of the corpus
// (REASONIX_CORPUS) classify. The corpus holds manifests only, no plugin
// trees, so each is parsed against an empty root: declared paths do not
// exist there, and only inline capabilities (mcpServers, hooks) can map.
// Of the 266 errors, 148 break Claude Code's manifest rules whatever the
// tree holds (claude plugin validate refuses them too: 121 "commands"
// paths without "./", 7 npm-style "dependencies" objects, …); the others
// declare paths an empty root cannot hold.
var corpusCounts = map[Kind]map[string]int{
	KindClaude: {"full": 5, "partial": 0, "none": 1746, "error": 266},
	KindCodex:  {"full": 0, "partial": 0, "none": 287, "error": 0},
}

func TestCorpus(t *testing.T) {
	t.Parallel()
	classes, err := classifyDir(fakegithub.CorpusDir(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, classes, corpusCounts)
}

// manifestClass is how one manifest file of a corpus classified.
type manifestClass struct {
	kind  Kind
	class string // full, partial, none, or error
}

// classifyDir classifies every manifest under dir, laid out as the corpus
// INDEX.md describes (plugin.json is Claude's, codex-plugin.json Codex's),
// against root; keys are slash paths relative to dir.
func classifyDir(dir, root string) (map[string]manifestClass, error) {
	out := map[string]manifestClass{}
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
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = manifestClass{kind, class}
		return nil
	})
	return out, err
}

func checkCounts(t *testing.T, classes map[string]manifestClass, want map[Kind]map[string]int) {
	t.Helper()
	got := map[Kind]map[string]int{KindClaude: {}, KindCodex: {}}
	for _, c := range classes {
		got[c.kind][c.class]++
	}
	for kind, want := range want {
		for class, n := range want {
			if got[kind][class] != n {
				t.Errorf("%s %s: got %d, want %d", kind, class, got[kind][class], n)
			}
		}
	}
	t.Logf("classes: %v", got)
}

// classify parses one manifest and checks the package is self-consistent
// (compatInvariants); a panic is turned into an error naming the file.
func classify(kind Kind, data []byte, root string) (class string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	p, perr := Parse(kind, data, root, LoadOptions{})
	if perr != nil {
		if err := parseErrorInvariants(perr); err != nil {
			return "", err
		}
		return "error", nil
	}
	if err := packageInvariants(p, kind, root); err != nil {
		return "", err
	}
	return string(p.Compatibility), nil
}

// schemaFixture is a SchemaStore test fixture (corpus/_schemas/fixtures)
// with the synthetic fixture under testdata/schema that stands for it.
type schemaFixture struct {
	corpusFile, syntheticFile string
	kind                      Kind
	want                      Compatibility
}

var schemaFixtures = []schemaFixture{
	{"test__codex-plugin-manifest__inline-mcp.json", "codex-inline-mcp.json", KindCodex, CompatFull},
	{"test__codex-plugin-manifest__plugin.json", "codex-every-field.json", KindCodex, CompatNone},
	{"test__claude-code-plugin-manifest__minimal.json", "claude-minimal.json", KindClaude, CompatNone},
	{"negative_test__codex-plugin-manifest__unsupported-hooks-field.json", "codex-hooks-field.json", KindCodex, CompatNone},
}

func TestSchemaFixtures(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(fakegithub.CorpusDir(t), "_schemas", "fixtures")
	for _, tc := range schemaFixtures {
		t.Run(tc.corpusFile, func(t *testing.T) {
			t.Parallel()
			checkSchemaFixture(t, filepath.Join(dir, tc.corpusFile), tc)
		})
	}
}

func TestSyntheticSchemaFixtures(t *testing.T) {
	t.Parallel()
	for _, tc := range schemaFixtures {
		t.Run(tc.syntheticFile, func(t *testing.T) {
			t.Parallel()
			checkSchemaFixture(t, filepath.Join("testdata", "schema", tc.syntheticFile), tc)
		})
	}
}

func checkSchemaFixture(t *testing.T, file string, tc schemaFixture) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("schema fixture missing: %v", err)
	}
	root := t.TempDir()
	p, err := Parse(tc.kind, data, root, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Compatibility != tc.want {
		t.Errorf("compatibility = %q, want %q; warnings %q", p.Compatibility, tc.want, p.Warnings)
	}
	if err := packageInvariants(p, tc.kind, root); err != nil {
		t.Error(err)
	}
}
