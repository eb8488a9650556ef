package marketplace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"reasonix.io/plugind/manifest"
)

// validateExpect is a fixture's expect.json: claude, claudeErrors and
// claudeWarnings were measured with `claude plugin validate DIR` (Claude
// Code 2.1.197); reasonix and why say where this product's verdict on the
// folder differs on purpose; errors and warnings are paths Reasonix must
// report.
type validateExpect struct {
	Claude       string   `json:"claude"`
	ClaudeErrors []string `json:"claudeErrors"`
	Reasonix     string   `json:"reasonix"`
	Why          string   `json:"why"`
	Errors       []string `json:"errors"`
	Warnings     []string `json:"warnings"`
}

func verdictOf(r manifest.Report) string {
	if r.OK() {
		return "ok"
	}
	return "error"
}

func hasFinding(fs []manifest.Finding, p string) bool {
	for _, f := range fs {
		if f.Path == p {
			return true
		}
	}
	return false
}

var (
	claudeIndex     = regexp.MustCompile(`\.(\d+)(\.|$)`)
	claudeEntryFile = regexp.MustCompile(`^(plugins\[\d+\]) plugin\.json → (.*)$`)
)

// covered reports whether Reasonix reports an error where Claude Code
// did: the same field or one inside it ("plugins.0.source" covers
// "plugins[0].source.sha"); "plugins[0] plugin.json → commands" is an
// error at "commands" in that entry's manifest.
func covered(claudePath string, fs []manifest.Finding) bool {
	entry := ""
	if m := claudeEntryFile.FindStringSubmatch(claudePath); m != nil {
		entry, claudePath = m[1], m[2]
	}
	switch claudePath {
	case "json", "root", "file":
		claudePath = ""
	}
	for {
		next := claudeIndex.ReplaceAllString(claudePath, "[$1]$2")
		if next == claudePath {
			break
		}
		claudePath = next
	}
	for _, f := range fs {
		if entry != "" && f.Entry != entry {
			continue
		}
		if claudePath == "" || f.Path == claudePath || strings.HasPrefix(f.Path, claudePath+".") || strings.HasPrefix(f.Path, claudePath+"[") {
			return true
		}
	}
	return false
}

// TestValidateFixtures validates every marketplace fixture under
// testdata/validate twice: as the marketplace.json file (what Claude Code's
// validator reads: its verdict must be Claude's, always) and as the folder
// (every entry's plugin folder in full: Claude's verdict unless the
// fixture says why not).
func TestValidateFixtures(t *testing.T) {
	t.Parallel()
	dirs, err := os.ReadDir(filepath.Join("testdata", "validate"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 30 {
		t.Fatalf("only %d fixtures", len(dirs))
	}
	for _, d := range dirs {
		dir := filepath.Join("testdata", "validate", d.Name())
		t.Run(d.Name(), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(dir, "expect.json"))
			if err != nil {
				t.Fatal(err)
			}
			var want validateExpect
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			if want.Reasonix != "" && want.Why == "" {
				t.Fatal("a verdict that differs from Claude Code's needs a why")
			}
			doc := filepath.Join(dir, filepath.FromSlash(ClaudeDocument.Path))
			file, _ := ValidateLocal(doc, ValidateOptions{})
			if got := verdictOf(file); got != want.Claude {
				t.Errorf("file verdict %s, want Claude Code's %s; errors %+v", got, want.Claude, file.Errors)
			}
			for _, cp := range want.ClaudeErrors {
				if !covered(cp, file.Errors) {
					t.Errorf("Claude Code reports an error at %q; Reasonix does not: %+v", cp, file.Errors)
				}
			}
			folder, _ := ValidateLocal(doc, ValidateOptions{Deep: true})
			wantFolder := want.Claude
			if want.Reasonix != "" {
				wantFolder = want.Reasonix
			}
			if got := verdictOf(folder); got != wantFolder {
				t.Errorf("folder verdict %s, want %s; errors %+v", got, wantFolder, folder.Errors)
			}
			for _, p := range want.Errors {
				if !hasFinding(folder.Errors, p) {
					t.Errorf("no error at %q: %+v", p, folder.Errors)
				}
			}
			for _, p := range want.Warnings {
				if !hasFinding(folder.Warnings, p) {
					t.Errorf("no warning at %q: %+v", p, folder.Warnings)
				}
			}
		})
	}
}

// TestCheckDocument pins document rules without a folder.
func TestCheckDocument(t *testing.T) {
	t.Parallel()
	const sha = "0123456789abcdef0123456789abcdef01234567"
	head := `"name": "m", "description": "d", "owner": {"name": "o"}`
	tests := []struct {
		name     string
		doc      string
		errors   []string
		warnings []string
		refs     []Ref // compared by At, Name, Local, Remote, Valid
	}{
		{name: "relative and remote refs", doc: `{` + head + `, "plugins": [{"name": "a", "source": "./plugins/a/"}, {"name": "b", "source": "."}, {"name": "c", "source": {"source": "github", "repo": "o/c", "sha": "` + sha + `"}}]}`,
			refs: []Ref{{At: "plugins[0]", Name: "a", Local: "plugins/a", Valid: true}, {At: "plugins[1]", Name: "b", Local: ".", Valid: true}, {At: "plugins[2]", Name: "c", Remote: true, Valid: true}}},
		{name: "invalid entry is not followed", doc: `{` + head + `, "plugins": [{"name": "a", "source": "./a", "version": 1}]}`,
			errors: []string{"plugins[0].version"}, refs: []Ref{{At: "plugins[0]", Name: "a", Valid: false}}},
		{name: "not JSON", doc: `{"name": `, errors: []string{""}},
		{name: "array", doc: `[]`, errors: []string{""}},
		{name: "no name no plugins", doc: `{"owner": {"name": "o"}}`, errors: []string{"name", "plugins"}},
		{name: "owner wrong type", doc: `{"name": "m", "owner": "o", "plugins": []}`, errors: []string{"owner"}},
		{name: "reserved-looking names are not ours to refuse", doc: `{"name": "claude-plugins-official", "description": "d", "owner": {"name": "o"}, "plugins": []}`, warnings: []string{"plugins"}},
		{name: "name dot", doc: `{"name": ".", "owner": {"name": "o"}, "plugins": []}`, errors: []string{"name"}},
		{name: "metadata types", doc: `{` + head + `, "metadata": {"pluginRoot": 1, "extra": true}, "plugins": []}`, errors: []string{"metadata.pluginRoot"}, warnings: []string{"metadata.extra"}},
		{name: "top-level types", doc: `{` + head + `, "forceRemoveDeletedPlugins": "yes", "allowCrossMarketplaceDependenciesOn": "x", "plugins": []}`,
			errors: []string{"forceRemoveDeletedPlugins", "allowCrossMarketplaceDependenciesOn"}},
		{name: "renames value type", doc: `{` + head + `, "plugins": [], "renames": {"a": 1}}`, errors: []string{"renames.a"}},
		{name: "rename to an invalid name", doc: `{` + head + `, "plugins": [{"name": "a/b", "source": "./x"}], "renames": {"old": "a/b"}}`, errors: []string{"renames.old"}},
		{name: "npm sources", doc: `{` + head + `, "plugins": [{"name": "a", "source": {"source": "npm", "package": "@s/a"}}, {"name": "b", "source": {"source": "npm", "package": "../b"}}, {"name": "c", "source": {"source": "npm", "package": "file:../c"}}]}`,
			errors: []string{"plugins[1].source.package"}},
		{name: "source object without type", doc: `{` + head + `, "plugins": [{"name": "a", "source": {"url": "https://x"}}]}`, errors: []string{"plugins[0].source.source"}},
		{name: "git source type is not Claude's", doc: `{` + head + `, "plugins": [{"name": "a", "source": {"source": "git", "url": "https://x"}}]}`, errors: []string{"plugins[0].source.source"}},
		{name: "unsupported placeholder", doc: `{` + head + `, "plugins": [{"name": "a", "source": {"source": "unsupported"}}]}`, errors: []string{"plugins[0].source.source"}},
		{name: "category and tags", doc: `{` + head + `, "plugins": [{"name": "a", "source": "./a", "category": 1, "tags": "x"}]}`, errors: []string{"plugins[0].category", "plugins[0].tags"}},
		{name: "entry manifest fields", doc: `{` + head + `, "plugins": [{"name": "a", "source": "./a", "commands": "commands", "mcpServers": {"s": {"url": "https://x"}}, "lspServers": {"go": {"command": "gopls"}}}]}`,
			errors: []string{"plugins[0].commands", "plugins[0].mcpServers.s", "plugins[0].lspServers.go.extensionToLanguage"}},
		{name: "relevance signals", doc: `{` + head + `, "plugins": [{"name": "a", "source": "./a", "relevance": {"topic": "` + strings.Repeat("x", 65) + `", "signals": {"hosts": ["HTTPS://X"], "cwd": ["a\\b"], "manifestDeps": [{"file": "(", "pattern": "x"}], "extra": []}, "rank": 1}}]}`,
			errors:   []string{"plugins[0].relevance.topic", "plugins[0].relevance.signals.hosts[0]", "plugins[0].relevance.signals.cwd[0]", "plugins[0].relevance.signals.manifestDeps[0].file"},
			warnings: []string{"plugins[0].relevance.signals.extra", "plugins[0].relevance.rank"}},
		{name: "path on a github source: Reasonix differs", doc: `{` + head + `, "plugins": [{"name": "a", "source": {"source": "github", "repo": "o/a", "sha": "` + strings.Repeat("a", 40) + `", "path": "p"}}]}`,
			warnings: []string{"plugins[0].source.path"}},
		{name: "unpinned url is Claude-valid, skipped by Reasonix", doc: `{` + head + `, "plugins": [{"name": "a", "source": {"source": "url", "url": "https://github.com/o/a.git"}}]}`,
			warnings: []string{"plugins[0]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, refs := checkRefs([]byte(tc.doc), claudeFormat)
			for _, f := range r.Warnings {
				if f.Path == "plugins[0].source.path" && (f.Kept != pathOnRepository || f.Message != "the plugin's folder in the repository") {
					t.Errorf("path on a repository: %+v", f)
				}
			}
			if len(r.Errors) != len(tc.errors) {
				t.Errorf("errors %+v, want at %q", r.Errors, tc.errors)
			}
			for _, p := range tc.errors {
				if !hasFinding(r.Errors, p) {
					t.Errorf("no error at %q: %+v", p, r.Errors)
				}
			}
			for _, p := range tc.warnings {
				if !hasFinding(r.Warnings, p) {
					t.Errorf("no warning at %q: %+v", p, r.Warnings)
				}
			}
			if tc.refs != nil {
				if len(refs) != len(tc.refs) {
					t.Fatalf("refs %+v", refs)
				}
				for i, w := range tc.refs {
					g := refs[i]
					if g.At != w.At || g.Name != w.Name || g.Local != w.Local || g.Remote != w.Remote || g.Valid != w.Valid {
						t.Errorf("ref %d = %+v, want %+v", i, g, w)
					}
				}
			}
		})
	}
}

// TestCheckCodexDocument: Codex marketplaces are judged by Reasonix's own
// reading (Claude Code has no validator for them).
func TestCheckCodexDocument(t *testing.T) {
	t.Parallel()
	r, refs := checkRefs([]byte(`{"name": "c", "plugins": [
		{"name": "a", "source": {"source": "local", "path": "./plugins/a"}},
		{"name": "b", "source": {"source": "local", "path": "../b"}},
		{"name": "c", "source": {"source": "local", "path": "./plugins/c"}, "policy": {"installation": "NOT_AVAILABLE"}},
		{"name": "d", "source": "./plugins/d", "extra": 1}
	]}`), codexFormat)
	if !hasFinding(r.Errors, "plugins[1]") || !hasFinding(r.Warnings, "plugins[2]") || !hasFinding(r.Warnings, "plugins[3].extra") {
		t.Errorf("report %+v", r)
	}
	if refs[0].Local != "plugins/a" || refs[1].Valid || refs[0].Remote {
		t.Errorf("refs %+v", refs)
	}
	if r, _ := checkRefs([]byte(`{"plugins": 1}`), codexFormat); r.OK() {
		t.Error("a Codex document without a plugins array passed")
	}
}

// TestInstallRefusesWhatValidateCalls: Parse (the install path) refuses an
// entry that validate calls invalid, even one it would otherwise skip; it
// keeps its reading of bare relative sources (SPEC §7, saying so) and its
// own skip reasons.
func TestInstallRefusesWhatValidateCalls(t *testing.T) {
	t.Parallel()
	doc := `{"name": "m", "owner": {"name": "o"}, "metadata": {"pluginRoot": "./plugins"}, "plugins": [
		{"name": "agents-dir", "source": "./plugins/a", "agents": ["./agents"]},
		{"name": "null-category", "source": "./plugins/b", "category": null},
		{"name": "bare", "source": "c"},
		{"name": "fine", "source": "./plugins/d", "agents": "./agents/x.md"},
		{"name": "unpinned-invalid", "source": {"source": "url", "url": "https://github.com/o/r.git"}, "commands": "commands"},
		{"name": "unpinned", "source": {"source": "url", "url": "https://github.com/o/r.git"}}
	]}`
	m, err := Parse([]byte(doc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		status Status
		reason string
	}{
		{StatusError, "plugins[0].agents[0]"},
		{StatusError, "plugins[1].category: must be a string, found null"},
		{StatusReady, ""},
		{StatusReady, ""},
		{StatusError, "plugins[4].commands"},
		{StatusSkipped, `has no "sha" pin`},
	}
	for i, w := range want {
		e := m.Entries[i]
		if e.Status != w.status || !strings.Contains(e.Reason, w.reason) {
			t.Errorf("%s: %s %q, want %s %q", e.Name, e.Status, e.Reason, w.status, w.reason)
		}
		if w.status == StatusError && !strings.Contains(e.Reason, "reasonix plugin validate") {
			t.Errorf("%s: the refusal does not point at validate: %q", e.Name, e.Reason)
		}
	}
	if m.Entries[2].Path != "plugins/c" {
		t.Errorf("bare source placed at %q", m.Entries[2].Path)
	}
	if w := m.Entries[2].Warnings; len(w) != 1 || !strings.Contains(w[0], "metadata.pluginRoot") || !strings.Contains(w[0], "Claude Code refuses") {
		t.Errorf("the bare source's reading is not said: %q", w)
	}
	// A document-level error refuses the whole marketplace.
	if _, err := Parse([]byte(`{"name": "m", "plugins": []}`), Options{}); err == nil || !strings.Contains(err.Error(), "owner") {
		t.Errorf("a marketplace without an owner: %v", err)
	}
	// Codex documents are not held to Claude's rules.
	cm, err := ParseCodex([]byte(`{"name": "c", "plugins": [{"name": "a", "source": {"source": "local", "path": "./a"}, "version": 1}]}`), Options{})
	if err != nil || cm.Entries[0].Status != StatusReady {
		t.Errorf("codex entry: %v %+v", err, cm)
	}
}

// TestRootOf: relative sources start at the folder holding
// .claude-plugin/ (or .agents/plugins/), else at the document's folder;
// the document's place says its format.
func TestRootOf(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]struct {
		root string
		doc  Document
	}{
		filepath.FromSlash("/m/.claude-plugin/marketplace.json"):  {filepath.FromSlash("/m"), ClaudeDocument},
		filepath.FromSlash("/m/.agents/plugins/marketplace.json"): {filepath.FromSlash("/m"), CodexDocument},
		filepath.FromSlash("/m/docs/marketplace.json"):            {filepath.FromSlash("/m/docs"), ClaudeDocument},
		filepath.FromSlash(".claude-plugin/marketplace.json"):     {".", ClaudeDocument},
	} {
		if root, doc := RootOf(in); root != want.root || doc.Path != want.doc.Path {
			t.Errorf("RootOf(%s) = %s, %s; want %s, %s", in, root, doc.Path, want.root, want.doc.Path)
		}
	}
}
