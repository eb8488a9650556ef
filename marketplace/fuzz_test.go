package marketplace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

// FuzzParse feeds both parsers arbitrary bytes, seeded with every corpus
// document and the fixtures. Whatever the input: no panic, a document error
// is coded, and every entry is classified with a reason when not ready.
func FuzzParse(f *testing.F) {
	for _, rel := range corpusDocs(f) {
		data, err := os.ReadFile(filepath.Join(corpusRoot, filepath.FromSlash(rel)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, name := range []string{"claude.json", "codex.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"metadata":{"pluginRoot":"x"},"plugins":[{"name":"a","source":"a"},{"name":"A","source":{"source":"git-subdir","url":"o/r","path":"p","sha":"0123456789abcdef0123456789abcdef01234567"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, parse := range []func([]byte, Options) (*Marketplace, error){Parse, ParseCodex} {
			for _, opts := range []Options{{}, {AllowUnpinned: true}} {
				m, err := parse(data, opts)
				if err != nil {
					if plugind.CodeOf(err) != plugind.CodeInvalidSource {
						t.Fatalf("document error without invalid_source: %v", err)
					}
					continue
				}
				ready, skipped, errored := m.Counts()
				if ready+skipped+errored != len(m.Entries) || len(m.Entries) > MaxEntries {
					t.Fatalf("counts %d/%d/%d for %d entries", ready, skipped, errored, len(m.Entries))
				}
				for i, e := range m.Entries {
					if (e.Status == StatusReady) != (e.Reason == "") {
						t.Fatalf("plugins[%d] status %s reason %q", i, e.Status, e.Reason)
					}
					if e.Status != StatusReady && !strings.HasPrefix(e.Reason, "marketplace entry ") {
						t.Fatalf("plugins[%d] reason %q", i, e.Reason)
					}
					if e.Status == StatusReady && (plugind.ValidateName(e.Name) != nil || hasDotDot(e.Path)) {
						t.Fatalf("plugins[%d] ready but unsafe: %+v", i, e)
					}
					if e.Name != "" {
						if _, err := m.Select(e.Name); (err == nil) != (e.Status == StatusReady) {
							t.Fatalf("Select(%q) = %v for status %s", e.Name, err, e.Status)
						}
					}
				}
			}
		}
	})
}

func hasDotDot(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return true
		}
	}
	return strings.HasPrefix(p, "/") || strings.Contains(p, `\`)
}
