package marketplace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// FuzzParseClaude and FuzzParseCodex feed a parser arbitrary bytes. Seeds:
// testdata/fuzz/<name>/, the synthetic documents under testdata/corpus, and,
// when REASONIX_CORPUS is set, every real-world entry as a one-entry
// document. Whatever the input: no panic; a document error is coded and
// names the document; otherwise every invariant of invariants holds with
// and without AllowUnpinned, the flag only readies unpinned url/github
// entries, and parsing is deterministic.
func FuzzParseClaude(f *testing.F) { fuzzParse(f, false) }

func FuzzParseCodex(f *testing.F) { fuzzParse(f, true) }

func fuzzParse(f *testing.F, codex bool) {
	addSeeds(f)
	parse := parserOf(codex)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parse(data, Options{})
		mu, errU := parse(data, Options{AllowUnpinned: true})
		if err != nil || errU != nil {
			if err == nil || errU == nil || err.Error() != errU.Error() {
				t.Fatalf("AllowUnpinned changed the document verdict: %v vs %v", err, errU)
			}
			if err := docErrorInvariants(err, codex); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := invariants(m, Options{}); err != nil {
			t.Fatal(err)
		}
		if err := invariants(mu, Options{AllowUnpinned: true}); err != nil {
			t.Fatalf("AllowUnpinned: %v", err)
		}
		if err := unpinnedOnlyAdds(m, mu); err != nil {
			t.Fatal(err)
		}
		again, err := parse(data, Options{})
		if err != nil || !reflect.DeepEqual(m, again) {
			t.Fatalf("a second parse differs: %+v, %v", again, err)
		}
	})
}

// maxWholeSeed bounds a corpus document added whole. The fuzzer spends
// each execution on one input and minimizes every new finding for up to a
// minute; real documents of 100–170 KB took ~40 ms per execution and
// stalled it (44 executions in 60 s). Larger documents are split into
// one-entry documents instead, which keep every real entry shape.
const maxWholeSeed = 4 << 10

func addSeeds(f *testing.F) {
	docs, err := marketplaceDocs(syntheticRoot)
	if err != nil {
		f.Fatal(err)
	}
	for _, rel := range docs {
		data, err := os.ReadFile(filepath.Join(syntheticRoot, filepath.FromSlash(rel)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	root, ok, err := fakegithub.LookupCorpus()
	if err != nil {
		f.Fatal(err)
	}
	if !ok {
		return
	}
	docs, err = marketplaceDocs(root)
	if err != nil {
		f.Fatal(err)
	}
	seen := map[string]bool{}
	for _, rel := range docs {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			f.Fatal(err)
		}
		seeds := [][]byte{data}
		if len(data) > maxWholeSeed {
			seeds = oneEntryDocs(data)
		}
		for _, s := range seeds {
			if !seen[string(s)] {
				seen[string(s)] = true
				f.Add(s)
			}
		}
	}
}

// oneEntryDocs splits a document into copies of it holding one entry each;
// nil when it has no plugins array.
func oneEntryDocs(data []byte) [][]byte {
	var top map[string]json.RawMessage
	var plugins []json.RawMessage
	if json.Unmarshal(data, &top) != nil || json.Unmarshal(top["plugins"], &plugins) != nil {
		return nil
	}
	var out [][]byte
	for _, p := range plugins {
		top["plugins"] = json.RawMessage("[" + string(p) + "]")
		doc, err := json.Marshal(top)
		if err == nil {
			out = append(out, doc)
		}
	}
	return out
}
