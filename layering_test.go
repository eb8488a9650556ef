package plugind

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layers is the order of SPEC §3 as a dependency order: a package may
// import only packages on a lower layer (README "Code layout" shows the
// same). Data flows one way: source string → source → resolver (over
// resolver/host) → store → installer → registry; marketplace may use
// source, never resolver. The composition root app opens the home, the
// store, the cache, the host stack and the installer: it sits above them
// all, and only the daemon (server), the mirror, the commands and the
// benchmarks stand on it.
var layers = map[string]int{
	// Helpers that know nothing of the domain.
	"internal/lazyregexp":    0,
	"internal/jsonout":       0,
	"internal/jsondoc":       0, // the document model manifest and marketplace share
	"internal/httpstatus":    0,
	"internal/httpserve":     0, // the daemon's and the mirror's graceful shutdown
	"internal/dirhandle":     0, // open folder handles for the tree writers
	"internal/gitobj":        0, // git object ids: the git host's packs and the archives' trees (SPEC §17)
	"migrations":             0,
	"mirror/meta/migrations": 0,
	// The domain (errors, names, trees), and credential handling, which
	// needs none of it.
	"":        1,
	"secrets": 1,
	// The source grammar, and what stands on the domain alone.
	"source":         2,
	"tarball":        2,
	"manifest":       2,
	"store":          2,
	"cache":          2,
	"cache/maintain": 3, // the store and the cache together, beside the installer
	"mirror/meta":    4, // keeps the host.Cached layer's rows, of the cache's types, and tokens' policy scopes
	"mirror/objects": 2,
	"marketplace":    3,
	"checksumlog":    2, // the checksum log's records and keys (SPEC §17): the mirror serves them, resolver/host checks them
	"lockfile":       3, // the lock document (SPEC §16): names, sources, config values
	"mirror/policy":  3, // spells hosts as source does
	// The host layer below the resolver, one package per host kind.
	"resolver/host":        4,
	"resolver/host/git":    5,
	"resolver/host/github": 5,
	"resolver/host/mirror": 6,
	"resolver":             7,
	"installer":            8,
	"app":                  9,
	"server":               10,
	"mirror":               10,
	"cmd/reasonix":         11,
}

const modulePath = "reasonix.io/plugind"

// leaves may import, of this module, only what they list: the source
// grammar stands on the domain alone (and masks what it echoes), and
// credential handling on no domain package at all, so every layer can
// mask what it shows.
var leaves = map[string][]string{
	"source":  {modulePath, modulePath + "/secrets", modulePath + "/internal/lazyregexp"},
	"secrets": {modulePath + "/internal/lazyregexp", modulePath + "/internal/jsondoc"},
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

// goPackage is what go list says of a package.
type goPackage struct {
	ImportPath string
	Imports    []string
}

// rel is p relative to the module ("" for the root package); ok is false
// outside it.
func rel(p string) (string, bool) {
	switch {
	case p == modulePath:
		return "", true
	case strings.HasPrefix(p, modulePath+"/"):
		return strings.TrimPrefix(p, modulePath+"/"), true
	}
	return "", false
}

// layerOf is the layer of a module package: its own, or for any command
// under cmd/, the commands' (the top).
func layerOf(from string) (int, bool) {
	if l, ok := layers[from]; ok {
		return l, true
	}
	if strings.HasPrefix(from, "cmd/") {
		return layers["cmd/reasonix"], true
	}
	return 0, false
}

// layeringErrors lists every import of pkgs that breaks the layers, the
// leaves or the helpers' exemption; checked counts the packages checked.
func layeringErrors(pkgs []goPackage) (errs []string, checked int) {
	for _, pkg := range pkgs {
		from, _ := rel(pkg.ImportPath)
		if exempt(from) {
			continue
		}
		level, ok := layerOf(from)
		if !ok {
			errs = append(errs, fmt.Sprintf("package %s is on no layer: add it to layers (and to the README's layout table)", pkg.ImportPath))
			continue
		}
		checked++
		for _, imp := range pkg.Imports {
			to, inModule := rel(imp)
			if !inModule {
				continue
			}
			if exempt(to) {
				errs = append(errs, fmt.Sprintf("%s imports %s, a test helper", pkg.ImportPath, imp))
				continue
			}
			if l, ok := layerOf(to); ok && l >= level {
				errs = append(errs, fmt.Sprintf("%s (layer %d) imports %s (layer %d): a package imports only layers below its own", pkg.ImportPath, level, imp, l))
			}
			if allowed, leaf := leaves[from]; leaf && !slices.Contains(allowed, imp) {
				errs = append(errs, fmt.Sprintf("%s imports %s: it is a leaf, which imports of this module only %s", pkg.ImportPath, imp, strings.Join(allowed, ", ")))
			}
		}
	}
	return errs, checked
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
	var pkgs []goPackage
	for dec := json.NewDecoder(bufio.NewReader(bytes.NewReader(out))); dec.More(); {
		var pkg goPackage
		if err := dec.Decode(&pkg); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, pkg)
	}
	errs, checked := layeringErrors(pkgs)
	for _, e := range errs {
		t.Error(e)
	}
	if checked < 10 {
		t.Fatalf("only %d packages checked", checked)
	}
}

// TestLayeringRules: the rules themselves, on packages made up to break
// them or not — above all the composition root's place: only the daemon,
// the mirror, the commands and the benchmarks stand on app, and app on
// everything else.
func TestLayeringRules(t *testing.T) {
	t.Parallel()
	m := func(p string) string { return modulePath + "/" + p }
	for _, tc := range []struct {
		from, imports string
		ok            bool
	}{
		{"cmd/reasonix", "app", true},
		{"cmd/other", "app", true},
		{"server", "app", true},
		{"mirror", "app", true},
		{"bench/load", "app", true},
		{"app", "installer", true},
		{"app", "resolver", true},
		{"app", "cache/maintain", true},
		{"installer", "app", false},
		{"resolver", "app", false},
		{"cache/maintain", "app", false},
		{"cache/maintain", "installer", false},
		{"app", "server", false},
		{"app", "mirror", false},
		{"app", "cmd/reasonix", false},
		{"app", "internal/fakegithub", false},
		{"resolver/host/github", "resolver/host/git", false},
		{"source", "store", false},
	} {
		errs, _ := layeringErrors([]goPackage{{ImportPath: m(tc.from), Imports: []string{m(tc.imports)}}})
		if (len(errs) == 0) != tc.ok {
			t.Errorf("%s importing %s: errors %q, want allowed %v", tc.from, tc.imports, errs, tc.ok)
		}
	}
}
