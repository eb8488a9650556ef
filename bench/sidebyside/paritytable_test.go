package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/parity"
)

func TestParityTable(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, results []parity.Result) {
		data, err := json.Marshal(results)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.json", []parity.Result{
		{Plugin: "x", Claude: true, Reasonix: true},
		{Plugin: "y", Claude: true, Reasonix: true, Differences: []string{"skills and commands only reasonix has: p, q"}},
	})
	write("b.json", []parity.Result{
		{Plugin: "z", Claude: false, Reasonix: true, Differences: []string{
			`verdict: Claude refuses it (failed to load: Hook load failed: [ { "expected": "record" } ]), reasonix installs it`}},
		{Plugin: "w", Claude: true, Reasonix: true, Differences: []string{"skills and commands only reasonix has: r"}},
	})
	var out strings.Builder
	if err := parityTableCmd([]string{"-results", dir}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| a | 2 | 2 | 1 | 0 | 1 | 0 | 0 | 0 |",
		"| b | 2 | 1 | 0 | 0 | 1 | 0 | 1 | 0 |",
		"| **total** | 4 | 3 | 1 | 0 | 2 | 0 | 1 | 0 |",
		"| skills and commands only reasonix has … | 2 |",
		"| verdict: Claude refuses it (failed to load: Hook load failed…), reasonix installs it | 1 |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	if err := parityTableCmd([]string{"-results", t.TempDir()}, &out); err == nil {
		t.Error("no results, no error")
	}
}
