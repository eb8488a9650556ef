package plugind

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// layers is the order of SPEC §3 as a dependency order: a package may
// import only packages on a lower layer (README "Code layout" shows the
// same). Data flows one way: source string → resolver/source → resolver
// (over resolver/hosts) → store → installer → registry; marketplace may use
// resolver/source, never the rest of resolver.
var layers = map[string]int{
	"":                       0, // the root: shared domain types
	"internal/jsondoc":       0, // the document model manifest and marketplace share
	"migrations":             0,
	"mirror/meta/migrations": 0,
	"mirror/meta":            1,
	"mirror/objects":         1,
	"resolver/source":        1,
	"tarball":                1,
	"manifest":               1,
	"store":                  1,
	"cache":                  1,
	"marketplace":            2,
	"mirror/policy":          2, // spells hosts as resolver/source does
	"resolver/host":          3,
	"resolver/host/git":      4,
	"resolver/host/github":   5,
	"resolver/host/mirror":   5,
	"resolver":               6,
	"installer":              7,
	"server":                 8,
	"mirror":                 8,
	"cmd/reasonix":           9,
}

// exempt are the test helpers and the benchmarks: they may import
// anything, and nothing but tests and benchmarks may import the helpers.
// internal/ also holds helpers of the product itself (SPEC §3), which are
// layered like any package.
func exempt(rel string) bool {
	if _, layered := layers[rel]; layered {
		return false
	}
	return strings.HasPrefix(rel, "bench/") || strings.HasPrefix(rel, "internal/")
}

func TestLayering(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("skipped: the go command is not on PATH")
	}
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "reasonix.io/plugind"
	rel := func(p string) (string, bool) {
		switch {
		case p == module:
			return "", true
		case strings.HasPrefix(p, module+"/"):
			return strings.TrimPrefix(p, module+"/"), true
		}
		return "", false
	}
	dec := json.NewDecoder(bufio.NewReader(bytes.NewReader(out)))
	seen := 0
	for dec.More() {
		var pkg struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&pkg); err != nil {
			t.Fatal(err)
		}
		from, _ := rel(pkg.ImportPath)
		if exempt(from) {
			continue
		}
		level, ok := layers[from]
		if !ok {
			t.Errorf("package %s is on no layer: add it to layers (and to the README's layout table)", pkg.ImportPath)
			continue
		}
		seen++
		for _, imp := range pkg.Imports {
			to, inModule := rel(imp)
			if !inModule {
				continue
			}
			if exempt(to) {
				t.Errorf("%s imports %s, a test helper", pkg.ImportPath, imp)
				continue
			}
			if l, ok := layers[to]; ok && l >= level {
				t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only layers below its own", pkg.ImportPath, level, imp, l)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("only %d packages checked", seen)
	}
}
