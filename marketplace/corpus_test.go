package marketplace

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakegithub"
)

// corpusFile is the pinned classification of one marketplace document
// with default options; readyUnpinned is the ready count with
// AllowUnpinned. The real-world corpus and the synthetic one under
// testdata/corpus are pinned the same way.
type corpusFile struct {
	file                    string
	entries                 int
	ready, skipped, errored int
	readyUnpinned           int
	docErr                  string // substring of the document error; "" = parses
}

var corpusWant = []corpusFile{
	{"2389-research__claude-plugins/marketplace.json", 26, 0, 26, 0, 26, ""},
	{"EveryInc__compound-engineering-plugin/codex-marketplace.json", 1, 1, 0, 0, 1, ""},
	{"EveryInc__compound-engineering-plugin/marketplace.json", 1, 1, 0, 0, 1, ""},
	{"QwenLM__Qwen-MM-Plugins/marketplace.json", 8, 8, 0, 0, 8, ""},
	{"alex-radaev__claude-panel/marketplace.json", 1, 1, 0, 0, 1, ""},
	{"alexanderguy__agent-plugins/marketplace.json", 1, 0, 1, 0, 1, ""},
	{"alexbouchez__plugins/marketplace.json", 2, 1, 1, 0, 2, ""},
	{"ananddtyagi__claude-code-marketplace/marketplace.json", 117, 117, 0, 0, 117, ""},
	{"anthropics__claude-code/marketplace.json", 13, 13, 0, 0, 13, ""},
	{"anthropics__claude-plugins-official/marketplace.at-07426921.json", 171, 129, 42, 0, 171, ""},
	{"anthropics__claude-plugins-official/marketplace.at-c272c599.json", 287, 287, 0, 0, 287, ""},
	{"anthropics__claude-plugins-official/marketplace.json", 286, 286, 0, 0, 286, ""},
	{"anthropics__knowledge-work-plugins/marketplace.json", 94, 94, 0, 0, 94, ""},
	{"anthropics__knowledge-work-plugins/nested-marketplaces/partner-built__brand-voice__.claude-plugin__marketplace.json", 1, 1, 0, 0, 1, ""},
	{"anthropics__life-sciences/marketplace.json", 7, 7, 0, 0, 7, ""},
	{"anthropics__skills/marketplace.json", 3, 3, 0, 0, 3, ""},
	{"ccplugins__awesome-claude-code-plugins/marketplace.json", 118, 118, 0, 0, 118, ""},
	{"davepoon__buildwithclaude/marketplace.json", 82, 72, 10, 0, 82, ""},
	{"davepoon__buildwithclaude/nested-marketplaces/plugins__codex-hud__.claude-plugin__marketplace.json", 1, 1, 0, 0, 1, ""},
	{"davepoon__buildwithclaude/nested-marketplaces/plugins__foresight-intelligence__.claude-plugin__marketplace.json", 1, 1, 0, 0, 1, ""},
	{"davepoon__buildwithclaude/nested-marketplaces/plugins__venture-capital-intelligence__.claude-plugin__marketplace.json", 1, 1, 0, 0, 1, ""},
	{"docker__claude-plugins/marketplace.json", 1, 1, 0, 0, 1, ""},
	{"jeremylongshore__claude-code-plugins-plus/marketplace.json", 269, 269, 0, 0, 269, ""},
	{"jeremylongshore__claude-code-plugins-plus/nested-marketplaces/plugins__community__geepers-agents__.claude-plugin__marketplace.json", 51, 51, 0, 0, 51, ""},
	{"kivilaid__plugin-marketplace/marketplace.json", 77, 77, 0, 0, 77, ""},
	// A component catalogue ({"agents":[…]}), not a marketplace.
	{"kivilaid__plugin-marketplace/nested-marketplaces/plugins__davila7-claude-code-templates__cli-tool__components__.claude-plugin__marketplace.json", 0, 0, 0, 0, 0,
		`expected a top-level "plugins" array, found no "plugins" field (top-level fields "agents")`},
	{"netresearch__claude-code-marketplace/marketplace.json", 40, 0, 40, 0, 40, ""},
	{"nitinjain999__platform-skills/marketplace.json", 1, 1, 0, 0, 1, ""},
	{"obra__superpowers/codex-marketplace.json", 1, 0, 1, 0, 0, ""},
	{"obra__superpowers/marketplace.json", 1, 1, 0, 0, 1, ""},
	{"obra__superpowers-marketplace/marketplace.json", 10, 0, 10, 0, 10, ""},
	{"rohitg00__awesome-claude-code-toolkit/marketplace.json", 0, 0, 0, 0, 0,
		`found no "plugins" field (top-level fields "marketplace"); the plugins are wrapped in a "marketplace" object`},
	{"secondsky__claude-skills/codex-marketplace.json", 144, 144, 0, 0, 144, ""},
	{"secondsky__claude-skills/marketplace.json", 144, 144, 0, 0, 144, ""},
	{"secondsky__sap-skills/codex-marketplace.json", 40, 40, 0, 0, 40, ""},
	{"secondsky__sap-skills/marketplace.json", 40, 40, 0, 0, 40, ""},
	{"wshobson__agents/codex-marketplace.json", 91, 91, 0, 0, 91, ""},
	{"wshobson__agents/marketplace.json", 92, 92, 0, 0, 92, ""},
}

// corpusDocs returns the real-world corpus (REASONIX_CORPUS) and its
// marketplace documents, skipping the test when the corpus is not set.
func corpusDocs(t testing.TB) (root string, docs []string) {
	t.Helper()
	root = fakegithub.CorpusDir(t)
	if _, err := os.Stat(filepath.Join(root, "INDEX.md")); err != nil {
		t.Fatalf("%s=%s does not hold the marketplace corpus (no INDEX.md): %v", fakegithub.CorpusEnv, root, err)
	}
	docs, err := marketplaceDocs(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, docs
}

// marketplaceDocs lists the marketplace documents under root, slash paths
// relative to it, laid out as the corpus INDEX.md describes:
// marketplace.json, codex-marketplace.json, marketplace.at-*.json and
// anything under nested-marketplaces/. _schemas/ is not a marketplace.
func marketplaceDocs(root string) ([]string, error) {
	var docs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "_schemas" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		base := path.Base(rel)
		if base == "marketplace.json" || base == "codex-marketplace.json" ||
			(strings.HasPrefix(base, "marketplace.at-") && strings.HasSuffix(base, ".json")) ||
			path.Base(path.Dir(rel)) == "nested-marketplaces" {
			docs = append(docs, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the marketplace documents under %s: %w", root, err)
	}
	sort.Strings(docs)
	return docs, nil
}

// isCodexDoc picks the parser: codex-marketplace.json files are Codex's;
// other files, nested ones included, are decided by content — a top-level
// "interface" or a {"source":"local"} entry is Codex's shape, anything else
// Claude's.
func isCodexDoc(rel string, data []byte) bool {
	return path.Base(rel) == "codex-marketplace.json" || looksCodex(data)
}

func parserOf(codex bool) func([]byte, Options) (*Marketplace, error) {
	if codex {
		return ParseCodex
	}
	return Parse
}

func looksCodex(data []byte) bool {
	var doc struct {
		Interface json.RawMessage `json:"interface"`
		Plugins   []struct {
			Source json.RawMessage `json:"source"`
		} `json:"plugins"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return false
	}
	if doc.Interface != nil {
		return true
	}
	for _, p := range doc.Plugins {
		var src struct {
			Source string `json:"source"`
		}
		if json.Unmarshal(p.Source, &src) == nil && src.Source == "local" {
			return true
		}
	}
	return false
}

func TestCorpus(t *testing.T) {
	t.Parallel()
	root, docs := corpusDocs(t)
	checkCorpus(t, root, docs, corpusWant)
}

// checkCorpus checks that docs (found under root) are exactly the pinned
// files of want, and that each classifies as pinned.
func checkCorpus(t *testing.T, root string, docs []string, want []corpusFile) {
	t.Helper()
	pinned := map[string]bool{}
	for _, w := range want {
		pinned[w.file] = true
	}
	for _, rel := range docs {
		if !pinned[rel] {
			t.Errorf("document %s has no pinned counts", rel)
		}
	}
	if len(docs) != len(want) {
		t.Errorf("found %d documents, the table pins %d", len(docs), len(want))
	}
	for _, w := range want {
		t.Run(w.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(w.file)))
			if err != nil {
				t.Fatal(err)
			}
			checkDocument(t, w, data)
		})
	}
}

// checkDocument parses one document with the parser its name and content
// call for, with and without AllowUnpinned, and checks the pinned counts
// and every invariant. It returns both parses (nil for a document error).
func checkDocument(t *testing.T, w corpusFile, data []byte) (m, mu *Marketplace) {
	t.Helper()
	codex := isCodexDoc(w.file, data)
	parse := parserOf(codex)
	m, err := parse(data, Options{})
	if w.docErr != "" {
		if err == nil || !strings.Contains(err.Error(), w.docErr) || plugind.CodeOf(err) != plugind.CodeInvalidSource {
			t.Fatalf("err = %v, want an invalid_source error containing %q", err, w.docErr)
		}
		if err := docErrorInvariants(err, codex); err != nil {
			t.Error(err)
		}
		return nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	r, s, e := m.Counts()
	if len(m.Entries) != w.entries || r != w.ready || s != w.skipped || e != w.errored {
		t.Errorf("entries/ready/skipped/error = %d/%d/%d/%d, want %d/%d/%d/%d",
			len(m.Entries), r, s, e, w.entries, w.ready, w.skipped, w.errored)
	}
	if err := invariants(m, Options{}); err != nil {
		t.Error(err)
	}
	mu, err = parse(data, Options{AllowUnpinned: true})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := mu.Counts(); r != w.readyUnpinned {
		t.Errorf("ready with AllowUnpinned = %d, want %d", r, w.readyUnpinned)
	}
	if err := invariants(mu, Options{AllowUnpinned: true}); err != nil {
		t.Error(err)
	}
	if err := unpinnedOnlyAdds(m, mu); err != nil {
		t.Error(err)
	}
	return m, mu
}

// TestCorpusOfficialKinds cross-checks the classification against the
// corpus INDEX's census of the official marketplace: 83 git-subdir, 150
// url, 53 relative.
func TestCorpusOfficialKinds(t *testing.T) {
	t.Parallel()
	root, _ := corpusDocs(t)
	data, err := os.ReadFile(filepath.Join(root, "anthropics__claude-plugins-official", "marketplace.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[Kind]int{}
	pinned := 0
	for _, e := range m.Entries {
		kinds[e.Kind]++
		if e.SHA != "" {
			pinned++
		}
	}
	if kinds[KindGitSubdir] != 83 || kinds[KindURL] != 150 || kinds[KindRelative] != 53 || len(kinds) != 3 {
		t.Errorf("kinds %v", kinds)
	}
	if pinned != 233 {
		t.Errorf("%d sha pins, want 233", pinned)
	}
	if len(m.Warnings) != 0 {
		t.Errorf("warnings on the official marketplace: %q", m.Warnings)
	}
}
