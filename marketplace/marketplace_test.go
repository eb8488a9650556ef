package marketplace

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDocumentErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string
		want []string // substrings of the error
	}{
		{"not json", `{"plugins": [`, []string{"not valid JSON"}},
		{"empty input", ``, []string{"not valid JSON"}},
		{"array", `[{"name":"p","source":"./p"}]`, []string{`expected a JSON object with a "plugins" array, found an array`}},
		{"string", `"plugins"`, []string{"found a string"}},
		{"null", `null`, []string{"found null"}},
		{"no plugins", `{"name":"m","owner":{"name":"o"}}`, []string{`expected a top-level "plugins" array, found no "plugins" field`, `"name", "owner"`}},
		{"empty object", `{}`, []string{"found no \"plugins\" field (an empty object)"}},
		{"wrapped", `{"marketplace":{"name":"m","plugins":[{"name":"p","path":"plugins/p"}]}}`,
			[]string{`top-level fields "marketplace"`, `wrapped in a "marketplace" object`, `"plugins" must be at the top level`}},
		{"plugins object", `{"plugins":{"p":"./p"}}`, []string{`expected "plugins" to be an array of entries, found an object`}},
		{"plugins null", `{"plugins":null}`, []string{"found null"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			parsers := []struct {
				file  string
				parse func([]byte, Options) (*Marketplace, error)
			}{{".claude-plugin/marketplace.json: ", Parse}, {".agents/plugins/marketplace.json: ", ParseCodex}}
			for _, p := range parsers {
				m, err := p.parse([]byte(tt.doc), Options{})
				if err == nil {
					t.Fatalf("parsed %q: %+v", tt.doc, m)
				}
				if plugind.CodeOf(err) != plugind.CodeInvalidSource {
					t.Errorf("code %q, want %q", plugind.CodeOf(err), plugind.CodeInvalidSource)
				}
				if !strings.HasPrefix(err.Error(), p.file) {
					t.Errorf("error %q does not start with %q", err, p.file)
				}
				for _, w := range tt.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
			}
		})
	}
}

func manyEntries(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"name":"big","owner":{"name":"o"},"plugins":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"plugin-%04d","source":"./plugins/p%d"}`, i, i)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

func TestEntryLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n       int
		wantErr bool
	}{
		{0, false}, {65, false}, {MaxEntries, false}, {MaxEntries + 1, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			t.Parallel()
			m, err := Parse(manyEntries(tt.n), Options{})
			if tt.wantErr {
				if err == nil || plugind.CodeOf(err) != plugind.CodeInvalidSource ||
					!strings.Contains(err.Error(), fmt.Sprintf("lists %d plugin entries; the limit is %d", tt.n, MaxEntries)) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r, s, e := m.Counts(); r != tt.n || s != 0 || e != 0 {
				t.Fatalf("counts %d/%d/%d, want %d ready", r, s, e, tt.n)
			}
			if tt.n > 0 && m.Entries[tt.n-1].Path != fmt.Sprintf("plugins/p%d", tt.n-1) {
				t.Errorf("last entry %+v", m.Entries[tt.n-1])
			}
		})
	}
}

func TestFixtureClaude(t *testing.T) {
	t.Parallel()
	m, err := Parse(readTestdata(t, "claude.json"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "fixture-market" || m.Description != "A fixture marketplace" || m.PluginRoot != "plugins" {
		t.Errorf("header %q %q %q", m.Name, m.Description, m.PluginRoot)
	}
	type row struct {
		name   string
		kind   Kind
		status Status
		path   string
	}
	want := []row{
		{"local-dot", KindRelative, StatusReady, "tools/local-dot"},
		{"bare", KindRelative, StatusReady, "plugins/bare"},
		{"root-itself", KindRelative, StatusReady, "."},
		{"pinned-url", KindURL, StatusReady, "plugins/pinned-url"},
		{"pinned-github", KindGitHub, StatusReady, ""},
		{"mono", KindGitSubdir, StatusReady, "packages/mono-plugin"},
		{"floating", KindURL, StatusSkipped, ""},
		{"old-commit", KindGitHub, StatusSkipped, ""},
		{"from-npm", KindNPM, StatusSkipped, ""},
		{"loose", KindRelative, StatusReady, "plugins/loose"}, // strict: false: the entry is the manifest
		{"escapes", KindRelative, StatusError, ""},
		{"short-sha", KindGitSubdir, StatusError, "p"},
		{"mystery", KindUnknown, StatusError, ""}, // a source type Claude Code does not know
	}
	if len(m.Entries) != len(want) {
		t.Fatalf("%d entries, want %d", len(m.Entries), len(want))
	}
	for i, w := range want {
		e := m.Entries[i]
		if e.Name != w.name || e.Kind != w.kind || e.Status != w.status || e.Path != w.path {
			t.Errorf("plugins[%d] = %s %s %s %q, want %+v (%s)", i, e.Name, e.Kind, e.Status, e.Path, w, e.Reason)
		}
	}
	if e := m.Entries[0]; e.Version != "1.2.3" || e.Description != "Under the root, not pluginRoot" {
		t.Errorf("version/description %q %q", e.Version, e.Description)
	}
	if e := m.Entries[4]; e.Remote.Owner() != "acme" || e.Remote.Name() != "gh-plugin" || e.SHA != sha2 || e.Ref != "v2.0.0" {
		t.Errorf("pinned-github %+v", e)
	}
	if r, s, e := m.Counts(); r != 7 || s != 3 || e != 3 {
		t.Errorf("counts %d/%d/%d, want 7/3/3", r, s, e)
	}
	// owner.twitter is dropped silently, as Claude Code drops it.
	wantWarnings := []string{
		`metadata.generatedBy: unknown field "generatedBy"; Claude Code and Reasonix ignore it`,
		`x-extra: unknown field "x-extra"; Claude Code and Reasonix ignore it`,
		`plugins[7].source.commit: unknown field "commit" of a "github" source; ignored (the pin is "sha")`,
		`plugins[12].rating: unknown field "rating"; Claude Code and Reasonix ignore it`,
	}
	if !slices.Equal(m.Warnings, wantWarnings) {
		t.Errorf("warnings\n got %q\nwant %q", m.Warnings, wantWarnings)
	}
}

func TestWarnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		doc   string
		codex bool
		want  []string
	}{
		{"none", `{"$schema":"x","name":"m","version":"1","description":"d","owner":{"name":"o","email":"e","url":"u"},"forceRemoveDeletedPlugins":true,"allowCrossMarketplaceDependenciesOn":[],"renames":{},"metadata":{"pluginRoot":".","version":"1","description":"d"},"plugins":[{"$schema":"x","name":"p","source":"./p","author":{},"homepage":"h","repository":"r","license":"MIT","keywords":[],"dependencies":[],"hooks":{},"commands":[],"agents":[],"skills":[],"outputStyles":[],"themes":[],"channels":[],"mcpServers":{},"lspServers":{},"monitors":[],"settings":{},"userConfig":{},"category":"c","tags":[],"strict":true,"displayName":"P"}]}`, false, nil},
		{"entry and source paths", `{"name":"m","owner":{"name":"o"},"plugins":[{"name":"a","source":"./a"},{"name":"b","source":{"source":"git-subdir","url":"o/r","path":"x","depth":1},"foo":1,"bar":2}]}`, false,
			[]string{`plugins[1].source.depth: unknown field "depth" of a "git-subdir" source; ignored`, `plugins[1].foo: unknown field "foo"; Claude Code and Reasonix ignore it`, `plugins[1].bar: unknown field "bar"; Claude Code and Reasonix ignore it`}},
		{"top-level pluginRoot", `{"name":"m","owner":{"name":"o"},"pluginRoot":"./plugins","plugins":[{"name":"a","source":"a"}]}`, false,
			[]string{`pluginRoot: unknown field "pluginRoot"; Claude Code and Reasonix ignore it (Claude Code reads metadata.pluginRoot)`}},
		{"bad pluginRoot", `{"name":"m","owner":{"name":"o"},"metadata":{"pluginRoot":"/abs"},"plugins":[]}`, false,
			[]string{`metadata.pluginRoot: path "/abs" is absolute; entries with bare-name sources cannot be placed`}},
		{"codex", `{"name":"c","interface":{},"version":"1","plugins":[{"name":"a","source":{"source":"local","path":"./a","ref":"x"},"policy":{"installation":"AVAILABLE"},"category":"c","strict":false}]}`, true,
			[]string{`version: unknown field "version"; Claude Code and Reasonix ignore it`, `plugins[0].source.ref: unknown field "ref"; Claude Code and Reasonix ignore it`, `plugins[0].strict: unknown field "strict"; Claude Code and Reasonix ignore it`}},
		{"codex policy mistyped", `{"plugins":[{"name":"a","source":"./a","policy":"open"}]}`, true,
			[]string{`plugins[0].policy: must be an object, found the string "open"; ignored`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			parse := Parse
			if tt.codex {
				parse = ParseCodex
			}
			m, err := parse([]byte(tt.doc), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(m.Warnings, tt.want) {
				t.Errorf("warnings\n got %q\nwant %q", m.Warnings, tt.want)
			}
		})
	}
}

// TestDocumentRefusals: what Claude Code's rules refuse outside the
// entries refuses the whole marketplace, naming each problem.
func TestDocumentRefusals(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte(`{"name":5,"description":[],"metadata":"x","owner":"me","plugins":[]}`), Options{})
	if err == nil {
		t.Fatal("a document with mistyped fields was accepted")
	}
	for _, want := range []string{"name: must be a string", "description: must be", "metadata: must be an object", "and 1 more", "reasonix plugin validate"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v does not say %q", err, want)
		}
	}
}

func TestFixtureCodex(t *testing.T) {
	t.Parallel()
	m, err := ParseCodex(readTestdata(t, "codex.json"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "fixture-codex" {
		t.Errorf("name %q", m.Name)
	}
	got := make([]string, len(m.Entries))
	for i, e := range m.Entries {
		got[i] = fmt.Sprintf("%s %s %s %s", e.Name, e.Kind, e.Status, e.Path)
	}
	want := []string{
		"root relative ready .",
		"nested relative ready plugins/nested",
		"hidden relative skipped plugins/hidden",
		"no-path relative error ",
		"self-url url skipped ",
		"remote url ready ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("entries\n got %q\nwant %q", got, want)
	}
	if !slices.Equal(m.Warnings, []string{`plugins[5].products: unknown field "products"; Claude Code and Reasonix ignore it`}) {
		t.Errorf("warnings %q", m.Warnings)
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	m, err := Parse(readTestdata(t, "claude.json"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		code     plugind.Code // "" = selected
		contains []string
	}{
		{"pinned-url", "", nil},
		{"mono", "", nil},
		{"floating", plugind.CodeNotPinnable, []string{`cannot install plugin "floating" from marketplace "fixture-market"`, `has no "sha" pin`, "--allow-unpinned"}},
		{"from-npm", plugind.CodeNotPinnable, []string{"npm sources are not supported"}},
		{"mystery", plugind.CodeInvalidSource, []string{`source type "hg"`}},
		{"loose", "", nil},
		{"escapes", plugind.CodeInvalidSource, []string{`marketplace entry "escapes" (plugins[10])`, `".."`}},
		{"short-sha", plugind.CodeInvalidSource, []string{"source.sha"}},
		{"nope", plugind.CodeNotFound, []string{`no plugin named "nope" in marketplace "fixture-market", which lists 13 entries`}},
		{"MONO", plugind.CodeNotFound, []string{`did you mean "mono"?`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := m.Select(tt.name)
			if tt.code == "" {
				if err != nil || e == nil || e.Name != tt.name || e.Status != StatusReady {
					t.Fatalf("Select = %+v, %v", e, err)
				}
				e.Path = "mutated" // a copy: the marketplace is unchanged
				if again, _ := m.Select(tt.name); again.Path == "mutated" {
					t.Error("Select returned an alias into the marketplace")
				}
				return
			}
			if err == nil || e != nil {
				t.Fatalf("Select = %+v, %v; want an error", e, err)
			}
			if plugind.CodeOf(err) != tt.code {
				t.Errorf("code %q, want %q (%v)", plugind.CodeOf(err), tt.code, err)
			}
			for _, c := range tt.contains {
				if !strings.Contains(err.Error(), c) {
					t.Errorf("error %q does not contain %q", err, c)
				}
			}
		})
	}
}

func TestSelectAllowUnpinned(t *testing.T) {
	t.Parallel()
	m, err := Parse(readTestdata(t, "claude.json"), Options{AllowUnpinned: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"floating", "old-commit"} {
		e, err := m.Select(name)
		if err != nil || !e.Unpinned || e.SHA != "" || e.Ref != "" {
			t.Errorf("Select(%q) = %+v, %v", name, e, err)
		}
	}
	if _, err := m.Select("from-npm"); plugind.CodeOf(err) != plugind.CodeNotPinnable {
		t.Errorf("npm still selectable with AllowUnpinned: %v", err)
	}
	if r, s, e := m.Counts(); r != 9 || s != 1 || e != 3 {
		t.Errorf("counts %d/%d/%d, want 9/1/3", r, s, e)
	}
}

func TestSelectDuplicate(t *testing.T) {
	t.Parallel()
	m, err := Parse([]byte(`{"name":"m","owner":{"name":"o"},"plugins":[{"name":"a","source":"./a"},{"name":"a","source":"./b"}]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Select("a")
	if plugind.CodeOf(err) != plugind.CodeInvalidSource || !strings.Contains(err.Error(), "duplicate name") {
		t.Errorf("err %v", err)
	}
}

func TestSelectEmptyName(t *testing.T) {
	t.Parallel()
	m, err := Parse([]byte(`{"name":"m","owner":{"name":"o"},"plugins":[{"source":"./a"}]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Select(""); plugind.CodeOf(err) != plugind.CodeNotFound || !strings.Contains(err.Error(), "no plugin name given") {
		t.Errorf("err %v", err)
	}
}

func TestByteOrderMark(t *testing.T) {
	t.Parallel()
	m, err := Parse(append([]byte("\xef\xbb\xbf"), `{"name":"m","owner":{"name":"o"},"plugins":[{"name":"a","source":"./a"}]}`...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := m.Counts(); r != 1 {
		t.Errorf("ready %d", r)
	}
}

func TestSelectNil(t *testing.T) {
	t.Parallel()
	var m *Marketplace
	if _, err := m.Select("a"); plugind.CodeOf(err) != plugind.CodeNotFound {
		t.Errorf("err %v", err)
	}
}
