package resolver

import (
	"fmt"
	"testing"

	"reasonix.io/plugind/marketplace"
)

func TestDocMemo(t *testing.T) {
	t.Parallel()
	var d docMemo
	parses := 0
	parse := func(data []byte, opts marketplace.Options) (*marketplace.Marketplace, error) {
		parses++
		return marketplace.Parse(data, opts)
	}
	doc := func(i int) []byte {
		return []byte(fmt.Sprintf(`{"name":"m%d","owner":{"name":"o"},"plugins":[{"name":"p","source":{"source":"github","repo":"o/r"}}]}`, i))
	}
	first, err := d.parse(doc(0), marketplace.ClaudeDocument, marketplace.Options{}, parse)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := d.parse(doc(0), marketplace.ClaudeDocument, marketplace.Options{}, parse)
	if again != first || parses != 1 {
		t.Fatalf("the same bytes were parsed %d times", parses)
	}
	// Another option or format is another parse: the result differs.
	unpinned, _ := d.parse(doc(0), marketplace.ClaudeDocument, marketplace.Options{AllowUnpinned: true}, parse)
	if unpinned == first || parses != 2 || unpinned.Entries[0].Status == first.Entries[0].Status {
		t.Fatalf("--allow-unpinned answered from the plain parse (%d parses)", parses)
	}
	if codex, _ := d.parse(doc(0), marketplace.CodexDocument, marketplace.Options{}, parse); codex == first || parses != 3 {
		t.Fatal("a Codex parse answered from the Claude one")
	}
	// Bounded: after maxParsedDocs others, the first is parsed again.
	for i := 1; i <= maxParsedDocs; i++ {
		if _, err := d.parse(doc(i), marketplace.ClaudeDocument, marketplace.Options{}, parse); err != nil {
			t.Fatal(err)
		}
	}
	if len(d.docs) != maxParsedDocs {
		t.Fatalf("%d documents kept, want %d", len(d.docs), maxParsedDocs)
	}
	before := parses
	if _, err := d.parse(doc(0), marketplace.ClaudeDocument, marketplace.Options{}, parse); err != nil || parses != before+1 {
		t.Fatalf("evicted document not parsed again (%d parses)", parses-before)
	}
	// Errors are not remembered.
	if _, err := d.parse([]byte(`{`), marketplace.ClaudeDocument, marketplace.Options{}, parse); err == nil {
		t.Fatal("a broken document parsed")
	}
}
