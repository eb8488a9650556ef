package marketplace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

// syntheticRoot holds small hand-written documents, laid out like the
// real-world corpus, one per classification the corpus tests pin, so a
// clone without the corpus still exercises every case.
const syntheticRoot = "testdata/corpus"

// fixtureEntry pins one entry of a synthetic document.
type fixtureEntry struct {
	name   string
	kind   Kind
	status Status
	path   string       // ready entries: Entry.Path
	pin    string       // ready remote entries: "owner/repo sha ref" (sha and ref may be "")
	code   plugind.Code // refused entries
	why    string       // refused entries: a substring of the reason
}

type fixtureDoc struct {
	corpusFile
	rows     []fixtureEntry
	warnings []string
}

const (
	sha1s = "1111111111111111111111111111111111111111"
	sha2s = "2222222222222222222222222222222222222222"
	sha3s = "3333333333333333333333333333333333333333"
	sha4s = "4444444444444444444444444444444444444444"
	sha5s = "5555555555555555555555555555555555555555"
	sha6s = "6666666666666666666666666666666666666666"
	sha7s = "7777777777777777777777777777777777777777"
	sha9s = "9999999999999999999999999999999999999999"
	shaAs = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaBs = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	shaCs = "cccccccccccccccccccccccccccccccccccccccc"

	invalid   = plugind.CodeInvalidSource
	unpinable = plugind.CodeNotPinnable
)

func ready(name string, kind Kind, path, pin string) fixtureEntry {
	return fixtureEntry{name: name, kind: kind, status: StatusReady, path: path, pin: pin}
}

func skipped(name string, kind Kind, code plugind.Code, why string) fixtureEntry {
	return fixtureEntry{name: name, kind: kind, status: StatusSkipped, code: code, why: why}
}

func refused(name string, kind Kind, why string) fixtureEntry {
	return fixtureEntry{name: name, kind: kind, status: StatusError, code: invalid, why: why}
}

var syntheticWant = []fixtureDoc{
	{corpusFile: corpusFile{"catalogue/marketplace.json", 0, 0, 0, 0, 0,
		`expected a top-level "plugins" array, found no "plugins" field (top-level fields "agents", "commands")`}},
	{corpusFile: corpusFile{"codex/codex-marketplace.json", 10, 6, 2, 2, 6, ""},
		rows: []fixtureEntry{
			ready("codex-root", KindRelative, ".", ""),
			ready("codex-nested", KindRelative, "plugins/codex-nested", ""),
			ready("codex-bare", KindRelative, "plugins/codex-bare", ""),
			ready("codex-default", KindRelative, "plugins/codex-default", ""),
			skipped("codex-hidden", KindRelative, invalid, "policy.installation is NOT_AVAILABLE"),
			refused("codex-no-path", KindRelative, `the "local" source has no "path"`),
			refused("codex-escape", KindRelative, `contains a ".." segment`),
			ready("codex-string", KindRelative, "plugins/codex-string", ""),
			ready("codex-remote", KindURL, "", "acme/codex-remote "+shaBs+" "),
			skipped("codex-npm", KindNPM, unpinable, "npm sources are not supported"),
		},
		warnings: []string{`plugins[8].products: unknown field "products"; Claude Code and Reasonix ignore it`}},
	// Named marketplace.json but Codex's shape: read as Codex, so its local
	// sources are relative entries (Claude's parser would skip them).
	{corpusFile: corpusFile{"codex-by-content/marketplace.json", 2, 1, 1, 0, 1, ""},
		rows: []fixtureEntry{
			ready("shaped-root", KindRelative, ".", ""),
			skipped("shaped-nested", KindRelative, invalid, "NOT_AVAILABLE"),
		}},
	{corpusFile: corpusFile{"codex-malformed/codex-marketplace.json", 0, 0, 0, 0, 0, "not valid JSON"}},
	{corpusFile: corpusFile{"duplicates/marketplace.json", 7, 1, 0, 6, 1, ""},
		rows: []fixtureEntry{
			refused("dup", KindRelative, `duplicate name: also used by plugins[2] "DUP"`),
			ready("unique", KindRelative, "plugins/unique", ""),
			refused("DUP", KindRelative, `duplicate name: also used by plugins[0] "dup"`),
			refused("twice", KindRelative, `duplicate name: also used by plugins[4] "twice"`),
			refused("twice", KindRelative, `source "../twice" contains a ".." segment; a plugin source must stay inside the marketplace; it also does not follow Claude Code's marketplace rules`),
			refused("", KindRelative, `has no "name"`),
			refused("", KindRelative, `has no "name"`),
		}},
	{corpusFile: corpusFile{"escapes/marketplace.json", 11, 0, 0, 11, 0, ""},
		rows: []fixtureEntry{
			refused("parent", KindRelative, `source "../outside" contains a ".." segment; a plugin source must stay inside the marketplace`),
			refused("sneaky", KindRelative, `contains a ".." segment`),
			refused("cancelled", KindRelative, `contains a ".." segment`),
			refused("absolute", KindRelative, "is absolute"),
			refused("drive", KindRelative, "backslash"),
			refused("drive-slash", KindRelative, "is absolute"),
			refused("unc", KindRelative, "backslash"),
			refused("backslash-parent", KindRelative, `contains a ".." segment`),
			refused("space", KindRelative, "whitespace or a control character"),
			refused("empty", KindUnknown, `"source" is an empty string`),
			refused("url-path-parent", KindURL, `source.path "../../etc" contains a ".." segment; the plugin's subdirectory must stay inside the repository`),
		}},
	{corpusFile: corpusFile{"git-subdir/marketplace.json", 10, 6, 0, 4, 6, ""},
		rows: []fixtureEntry{
			ready("subdir-sha", KindGitSubdir, "plugins/a", "acme/mono "+sha9s+" "),
			ready("subdir-ref", KindGitSubdir, "plugins/b", "acme/mono  main"),
			ready("subdir-neither", KindGitSubdir, "plugins/c", "acme/mono  "),
			ready("subdir-sha-and-ref", KindGitSubdir, "plugins/d", "acme/mono "+shaAs+" main"),
			ready("subdir-shorthand", KindGitSubdir, "plugins/e", "acme/mono  "),
			ready("subdir-root-path", KindGitSubdir, "", "acme/mono  "),
			refused("subdir-no-path", KindGitSubdir, `the "git-subdir" source has no "path" (the plugin's subdirectory in github.com/acme/mono)`),
			refused("subdir-escape", KindGitSubdir, `contains a ".." segment`),
			refused("subdir-short-sha", KindGitSubdir, `source.sha "abc" is not a full 40-character lowercase hex commit SHA`),
			refused("subdir-no-url", KindGitSubdir, `the "git-subdir" source has no "url"`),
		}},
	{corpusFile: corpusFile{"github-sha/marketplace.json", 8, 3, 2, 3, 5, ""},
		rows: []fixtureEntry{
			ready("gh-pinned", KindGitHub, "", "acme/gh "+sha5s+" "),
			ready("gh-pinned-ref", KindGitHub, "", "acme/gh "+sha6s+" release/2.x"),
			ready("gh-path", KindGitHub, "plugins/gh-path", "acme/gh "+sha7s+" "),
			skipped("gh-unpinned", KindGitHub, unpinable, `the "github" source for github.com/acme/moving has no "sha" pin, so it would follow a moving branch`),
			skipped("gh-commit-key", KindGitHub, unpinable, `its non-standard "commit" key is not read; rename it to "sha"`),
			refused("gh-bad-repo", KindGitHub, `source.repo "acme" must be OWNER/REPO`),
			refused("gh-bad-owner", KindGitHub, `source.repo "ac me/gh" is not a valid GitHub OWNER/REPO`),
			refused("gh-bad-ref", KindGitHub, `source.ref "-delete" starts with '-'`),
		},
		warnings: []string{`plugins[4].source.commit: unknown field "commit" of a "github" source; ignored (the pin is "sha")`}},
	{corpusFile: corpusFile{"malformed/marketplace.json", 0, 0, 0, 0, 0, "not valid JSON"}},
	{corpusFile: corpusFile{"malformed-entries/marketplace.json", 9, 1, 0, 8, 1, ""},
		rows: []fixtureEntry{
			refused("", KindUnknown, `expected an object with "name" and "source", found a number`),
			refused("", KindRelative, `has no "name"`),
			refused("", KindRelative, `"name" must be a string, found a number`),
			refused("bad name!", KindRelative, `plugin name "bad name!" is not allowed`),
			refused("no-source", KindUnknown, `has no "source"`),
			refused("number-source", KindUnknown, `"source" must be a path string or an object, found a number`),
			refused("typeless", KindUnknown, `the "source" object has no "source" type field`),
			refused("typed-number", KindUnknown, "source.source must be a string naming the source type, found a number"),
			ready("survivor", KindRelative, "plugins/survivor", ""),
		}},
	{corpusFile: corpusFile{"plugin-root-unusable/marketplace.json", 3, 2, 0, 1, 2, ""},
		rows: []fixtureEntry{
			refused("bare", KindRelative, `source "bare" is relative to metadata.pluginRoot, which is unusable`),
			ready("dot-slash", KindRelative, "kept", ""),
			ready("root", KindRelative, ".", ""),
		},
		warnings: []string{`metadata.pluginRoot "../shared-plugins" contains a ".." segment; entries with bare-name sources cannot be placed`}},
	{corpusFile: corpusFile{"plugins-object/marketplace.json", 0, 0, 0, 0, 0, `expected "plugins" to be an array of entries, found an object`}},
	{corpusFile: corpusFile{"relative/marketplace.json", 7, 7, 0, 0, 7, ""},
		rows: []fixtureEntry{
			ready("dot-slash", KindRelative, "tools/dot-slash", ""),
			ready("bare", KindRelative, "plugins/bare", ""),
			ready("bare-nested", KindRelative, "plugins/group/bare-nested", ""),
			ready("root", KindRelative, ".", ""),
			ready("dot-slash-root", KindRelative, ".", ""),
			ready("trailing-slash", KindRelative, "tools/trailing", ""),
			ready("inner-dot", KindRelative, "tools/inner-dot", ""),
		}},
	{corpusFile: corpusFile{"relative-no-root/marketplace.json", 3, 3, 0, 0, 3, ""},
		rows: []fixtureEntry{
			ready("bare", KindRelative, "bare", ""),
			ready("nested", KindRelative, "plugins/nested", ""),
			ready("dot-slash", KindRelative, "plugins/dot-slash", ""),
		}},
	{corpusFile: corpusFile{"strict/marketplace.json", 7, 3, 1, 3, 4, ""},
		rows: []fixtureEntry{
			ready("strict-true", KindRelative, "plugins/strict-true", ""),
			ready("strict-default", KindRelative, "plugins/strict-default", ""),
			refused("strict-null", KindRelative, `plugins[2].strict: must be true or false, found null`), // Claude Code refuses null too
			// strict: false: the entry supplies the manifest (Claude's semantics).
			ready("strict-false", KindRelative, "plugins/strict-false", ""),
			refused("strict-string", KindRelative, `"strict" must be true or false, found a string`),
			refused("strict-number", KindRelative, `"strict" must be true or false, found a number`),
			// Unpinned: skipped like any unpinned entry (ready with
			// AllowUnpinned).
			skipped("strict-false-unpinned", KindURL, unpinable, `the "url" source for github.com/acme/loose has no "sha" pin`),
		}},
	{corpusFile: corpusFile{"top-array/marketplace.json", 0, 0, 0, 0, 0, `expected a JSON object with a "plugins" array, found an array`}},
	{corpusFile: corpusFile{"unknown-fields/marketplace.json", 3, 2, 0, 1, 2, ""},
		rows: []fixtureEntry{
			ready("extra-entry", KindRelative, "plugins/extra-entry", ""),
			ready("extra-source", KindGitHub, "", "acme/extra "+shaCs+" "),
			refused("mistyped", KindRelative, `plugins[2].version: must be a string, found a number`), // as Claude Code refuses it
		},
		// owner.github is dropped silently, as Claude Code drops it; the
		// mistyped entry is refused, not warned about.
		warnings: []string{
			`homepage: unknown field "homepage"; Claude Code and Reasonix ignore it`,
			`pluginRoot: unknown field "pluginRoot"; Claude Code and Reasonix ignore it (Claude Code reads metadata.pluginRoot)`,
			`metadata.build: unknown field "build"; Claude Code and Reasonix ignore it`,
			`plugins[0].rating: unknown field "rating"; Claude Code and Reasonix ignore it`,
			`plugins[0].stars: unknown field "stars" (did you mean "tags"?); Claude Code and Reasonix ignore it`,
			`plugins[1].source.depth: unknown field "depth" of a "github" source; ignored`,
		}},
	// Source types Claude Code does not know, and strings that are not
	// "./" paths, are refused as Claude Code refuses them; npm, which it
	// knows, is skipped (nothing from a registry can be pinned).
	{corpusFile: corpusFile{"unsupported/marketplace.json", 6, 0, 1, 5, 0, ""},
		rows: []fixtureEntry{
			skipped("from-npm", KindNPM, unpinable, "npm sources are not supported"),
			refused("from-pip", KindPip, `unknown source type "pip"`),
			refused("from-hg", KindUnknown, `unknown source type "mercurial"`),
			refused("external-https", KindExternal, `"https://github.com/acme/tools" is not a plugin source`),
			refused("external-github", KindExternal, "is not a plugin source"),
			refused("external-ssh", KindExternal, "is not a plugin source"),
		}},
	{corpusFile: corpusFile{"url-sha/marketplace.json", 11, 4, 2, 5, 6, ""},
		rows: []fixtureEntry{
			ready("url-pinned", KindURL, "", "acme/tools "+sha1s+" "),
			ready("url-git-suffix", KindURL, "plugins/url-git-suffix", "acme/tools "+sha2s+" "),
			ready("url-ssh-form", KindURL, "", "acme/ssh-tools "+sha3s+" "),
			ready("url-with-ref", KindURL, "", "acme/tools "+sha4s+" v1.0.0"),
			skipped("url-unpinned", KindURL, unpinable, `the "url" source for github.com/acme/floating has no "sha" pin`),
			skipped("url-ref-only", KindURL, unpinable, "--allow-unpinned"),
			refused("url-short-sha", KindURL, `source.sha "abc1234" is not a full 40-character lowercase hex commit SHA`),
			refused("url-upper-sha", KindURL, "is not a full 40-character lowercase hex commit SHA"),
			refused("url-tree", KindURL, "is a tree URL"),
			refused("url-missing", KindURL, `the "url" source has no "url"`),
			refused("url-path-escape", KindURL, `source.path "../elsewhere" contains a ".." segment`),
		}},
	{corpusFile: corpusFile{"wrapped/marketplace.json", 0, 0, 0, 0, 0,
		`found no "plugins" field (top-level fields "marketplace"); the plugins are wrapped in a "marketplace" object`}},
}

// TestSyntheticCorpus runs the corpus checks over the synthetic documents,
// then pins each of their entries.
func TestSyntheticCorpus(t *testing.T) {
	t.Parallel()
	docs, err := marketplaceDocs(syntheticRoot)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]corpusFile, len(syntheticWant))
	for i, w := range syntheticWant {
		counts[i] = w.corpusFile
	}
	checkCorpus(t, syntheticRoot, docs, counts)
	for _, w := range syntheticWant {
		if w.docErr != "" {
			continue
		}
		t.Run(w.file+"/entries", func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(syntheticRoot, filepath.FromSlash(w.file)))
			if err != nil {
				t.Fatal(err)
			}
			m, _ := checkDocument(t, w.corpusFile, data)
			if m == nil {
				return
			}
			if len(m.Entries) != len(w.rows) {
				t.Fatalf("%d entries, the table pins %d", len(m.Entries), len(w.rows))
			}
			for i, row := range w.rows {
				checkRow(t, i, m.Entries[i], row)
			}
			if !slices.Equal(m.Warnings, w.warnings) {
				t.Errorf("warnings\n got %q\nwant %q", m.Warnings, w.warnings)
			}
		})
	}
}

func checkRow(t *testing.T, i int, e Entry, w fixtureEntry) {
	t.Helper()
	if e.Name != w.name || e.Kind != w.kind || e.Status != w.status {
		t.Errorf("plugins[%d] = %q %s %s, want %q %s %s (reason %q)", i, e.Name, e.Kind, e.Status, w.name, w.kind, w.status, e.Reason)
	}
	if w.status == StatusReady {
		if e.Path != w.path {
			t.Errorf("plugins[%d] %q path %q, want %q", i, e.Name, e.Path, w.path)
		}
		pin := ""
		if e.Kind != KindRelative {
			pin = e.Remote.Repo() + " " + e.SHA + " " + e.Ref
		}
		if pin != w.pin {
			t.Errorf("plugins[%d] %q pin %q, want %q", i, e.Name, pin, w.pin)
		}
		return
	}
	if e.Code != w.code || !strings.Contains(e.Reason, w.why) {
		t.Errorf("plugins[%d] %q: %s %q, want %s with %q", i, e.Name, e.Code, e.Reason, w.code, w.why)
	}
}
