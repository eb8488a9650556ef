package resolver

import (
	"testing"

	"reasonix.io/plugind/marketplace"
)

// A parse of a marketplace document is remembered under its bytes, format
// and options: any of them different is another parse.
func TestDocKey(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"name":"m","owner":{"name":"o"},"plugins":[]}`)
	keys := map[string]string{
		"claude":   docKey(doc, marketplace.ClaudeDocument, marketplace.Options{}),
		"unpinned": docKey(doc, marketplace.ClaudeDocument, marketplace.Options{AllowUnpinned: true}),
		"codex":    docKey(doc, marketplace.CodexDocument, marketplace.Options{}),
		"bytes":    docKey(append(doc, ' '), marketplace.ClaudeDocument, marketplace.Options{}),
	}
	seen := map[string]string{}
	for name, k := range keys {
		if other, ok := seen[k]; ok {
			t.Fatalf("%s and %s share a key", name, other)
		}
		seen[k] = name
	}
	if docKey(doc, marketplace.ClaudeDocument, marketplace.Options{}) != keys["claude"] {
		t.Fatal("the same document has two keys")
	}
}
