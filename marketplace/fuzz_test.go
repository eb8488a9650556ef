package marketplace

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// FuzzParseClaude and FuzzParseCodex feed a parser arbitrary bytes. Seeds:
// testdata/fuzz/<name>/, the synthetic documents under testdata/corpus and,
// when fuzzing with REASONIX_CORPUS set, the real-world documents; any
// document over maxWholeSeed is split into one-entry documents. Whatever
// the input: no panic; a document error is coded and names the document;
// otherwise invariants holds with and without AllowUnpinned, the flag only
// readies unpinned url/github entries, and parsing is deterministic.
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

// maxWholeSeed bounds a document added as a seed whole; larger ones are
// split into one-entry documents, which keep every entry shape. Seed size
// is what made fuzzing crawl (44 executions in 60 s when the corpus
// documents of up to 170 KB were seeds): an execution costs ~40 ms on such
// a document, and the fuzzer minimizes every input that finds new
// coverage, for up to a minute each, with a number of executions that
// grows with the square of its length.
const maxWholeSeed = 1 << 10

func addSeeds(f *testing.F) {
	seen := map[string]bool{}
	add := func(data []byte) {
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
	addDocs := func(root string) {
		docs, err := marketplaceDocs(root)
		if err != nil {
			f.Fatal(err)
		}
		for _, rel := range docs {
			data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
			if err != nil {
				f.Fatal(err)
			}
			add(data)
		}
	}
	addDocs(syntheticRoot)
	// The real-world entries seed a fuzzing run only: as plain tests they
	// would repeat TestCorpus, which checks the same invariants on them.
	if !fuzzing() {
		return
	}
	root, ok, err := fakegithub.LookupCorpus()
	if err != nil {
		f.Fatal(err)
	}
	if ok {
		addDocs(root)
	}
}

// fuzzing reports whether this is a fuzzing run (go test -fuzz).
func fuzzing() bool {
	fl := flag.Lookup("test.fuzz")
	return fl != nil && fl.Value.String() != ""
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
