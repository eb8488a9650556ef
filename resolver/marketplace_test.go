package resolver

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/store"
)

func newLocalSources(t *testing.T) *Sources {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "store"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// No cache and no hosts: these tests must not need either.
	return New(Config{Store: st})
}

func write(t *testing.T, root string, files map[string]string) string {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const plugin = `{"name":"p","version":"1.0.0"}`

func TestLocalMarketplaceResolution(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		files     map[string]string
		link      bool
		wantKind  string
		wantNames []string
		wantErrs  map[string]plugind.Code // candidate name → code of its Err
	}{
		{
			name: "plugin manifest wins over a marketplace at the same root",
			files: map[string]string{
				".claude-plugin/plugin.json":      plugin,
				".claude-plugin/marketplace.json": `{"name":"m","owner":{"name":"o"},"plugins":[{"name":"x","source":"./x"}]}`,
			},
			wantKind: "local", wantNames: []string{""},
		},
		{
			name: "relative, bare under pluginRoot, and the root itself",
			files: map[string]string{
				".claude-plugin/marketplace.json": `{"name":"m","owner":{"name":"o"},"metadata":{"pluginRoot":"./plugins"},"plugins":[
					{"name":"a","source":"./plugins/a"},{"name":"b","source":"b"},{"name":"root","source":"."}]}`,
				"plugins/a/.claude-plugin/plugin.json": plugin,
				"plugins/b/.claude-plugin/plugin.json": plugin,
			},
			wantKind: "marketplace", wantNames: []string{"a", "b", "root"},
		},
		{
			name: "codex marketplace",
			files: map[string]string{
				".agents/plugins/marketplace.json":    `{"name":"m","plugins":[{"name":"c","source":{"source":"local","path":"./plugins/c"}}]}`,
				"plugins/c/.codex-plugin/plugin.json": plugin,
			},
			wantKind: "marketplace", wantNames: []string{"c"},
		},
		{
			name: "a missing folder is that entry's error only",
			files: map[string]string{
				".claude-plugin/marketplace.json": `{"name":"m","owner":{"name":"o"},"plugins":[{"name":"gone","source":"./gone"},{"name":"a","source":"./a"}]}`,
				"a/.claude-plugin/plugin.json":    plugin,
			},
			wantKind: "marketplace", wantNames: []string{"gone", "a"},
			wantErrs: map[string]plugind.Code{"gone": plugind.CodeNotFound},
		},
		{
			name: "--link links local entries and refuses remote ones",
			files: map[string]string{
				".claude-plugin/marketplace.json": `{"name":"m","owner":{"name":"o"},"plugins":[{"name":"a","source":"./a"},
					{"name":"r","source":{"source":"github","repo":"acme/r","sha":"0123456789abcdef0123456789abcdef01234567"}}]}`,
				"a/.claude-plugin/plugin.json": plugin,
			},
			link:     true,
			wantKind: "marketplace", wantNames: []string{"a", "r"},
			wantErrs: map[string]plugind.Code{"r": plugind.CodeNotPinnable},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := write(t, t.TempDir(), tc.files)
			f, err := newLocalSources(t).Resolve(context.Background(), Request{Source: localSrc(dir), Link: tc.link})
			if err != nil {
				t.Fatal(err)
			}
			if f.Kind != tc.wantKind || len(f.Candidates) != len(tc.wantNames) {
				t.Fatalf("kind %s with %d candidates, want %s with %d", f.Kind, len(f.Candidates), tc.wantKind, len(tc.wantNames))
			}
			for i, c := range f.Candidates {
				if c.Name != tc.wantNames[i] {
					t.Errorf("candidate %d is %q, want %q", i, c.Name, tc.wantNames[i])
				}
				want, bad := tc.wantErrs[c.Name]
				switch {
				case bad && plugind.CodeOf(c.Err) != want:
					t.Errorf("%s: err %v, want code %s", c.Name, c.Err, want)
				case !bad && c.Err != nil:
					t.Errorf("%s: unexpected err %v", c.Name, c.Err)
				case !bad && tc.wantKind == "marketplace" && (c.Dir == "" || c.Source.String() != c.Dir || c.Link != tc.link || c.Marketplace.String() != dir):
					t.Errorf("%s: %+v", c.Name, c)
				}
			}
		})
	}
}

func TestLocalMarketplaceEntryCannotLeaveThroughASymlink(t *testing.T) {
	t.Parallel()
	outside := write(t, t.TempDir(), map[string]string{".claude-plugin/plugin.json": plugin})
	dir := write(t, t.TempDir(), map[string]string{
		".claude-plugin/marketplace.json": `{"name":"m","owner":{"name":"o"},"plugins":[{"name":"esc","source":"./esc"}]}`,
	})
	if err := os.Symlink(outside, filepath.Join(dir, "esc")); err != nil {
		t.Fatal(err)
	}
	s := newLocalSources(t)
	f, err := s.Resolve(context.Background(), Request{Source: localSrc(dir)})
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Candidates[0]; plugind.CodeOf(c.Err) != plugind.CodeInvalidSource {
		t.Fatalf("symlinked entry: %v", c.Err)
	}
	if _, err := s.Resolve(context.Background(), Request{Source: localSrc(dir), Name: "esc"}); plugind.CodeOf(err) != plugind.CodeInvalidSource {
		t.Fatalf("--name on a symlinked entry: %v", err)
	}
}

func TestMarketplaceDocumentErrors(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"not json":         `{"plugins": [`,
		"wrapped":          `{"marketplace":{"plugins":[]}}`,
		"plugins not list": `{"plugins": {}}`,
	} {
		dir := write(t, t.TempDir(), map[string]string{".claude-plugin/marketplace.json": doc})
		_, err := newLocalSources(t).Resolve(context.Background(), Request{Source: localSrc(dir)})
		if plugind.CodeOf(err) != plugind.CodeInvalidSource {
			t.Errorf("%s: %v, want install.invalid_source", name, err)
		}
	}
}

func localSrc(dir string) source.Source { return source.Source{Kind: source.LocalDir, Path: dir} }
