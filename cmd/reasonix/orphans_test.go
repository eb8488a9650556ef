package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"reasonix.io/plugind/app"
)

// TestCrashDuringBulkReplaceLeavesNoOrphans (issue 9, finding 11): the
// bundled example marketplace is installed, then replaced in bulk twice
// with new content, the process SIGKILLed at the same step each time. The
// registry stays consistent after every kill, and the next mutation (a
// remove, then a bulk install) leaves plugins/ holding exactly the roots the
// registry names: staging, trash and the sibling roots of replacements that
// were never published (plugins/<name>@<digest12>) are swept, never
// adopted.
func TestCrashDuringBulkReplaceLeavesNoOrphans(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"before-staging", "after-staging", "after-swap", "after-registry"} {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t)
			market := copyDir(t, filepath.Join("..", "..", "examples"), filepath.Join(t.TempDir(), "market"))
			if r := sb.run(t, nil, "plugin", "install", market, "--yes"); r.code != 0 {
				t.Fatalf("install: %d %s %s", r.code, r.stdout, r.stderr)
			}
			for round := 1; round <= 2; round++ {
				for _, p := range []string{"hello-claude", "hello-native"} {
					writeFile(t, filepath.Join(market, p, fmt.Sprintf("NOTES-%d.md", round)), "round "+fmt.Sprint(round)+"\n")
				}
				before := sb.registry(t)
				r := sb.run(t, []string{app.CrashEnv + "=" + step}, "plugin", "install", market, "--yes", "--replace")
				if r.code != -1 {
					t.Fatalf("round %d: not killed at %s: %d %s %s", round, step, r.code, r.stdout, r.stderr)
				}
				if step != "after-registry" && sb.registry(t) != before {
					t.Fatalf("round %d: a kill at %s, before the registry rename, changed the registry", round, step)
				}
				assertRegistryRootsIntact(t, sb.home, 2)
			}
			if step == "after-swap" || step == "after-registry" {
				// The kills left folders the registry does not name.
				if extra := unnamedRoots(t, sb.home); len(extra) == 0 {
					t.Fatalf("no leftovers after kills at %s; the test proves nothing", step)
				}
			}

			reg := sb.registry(t)
			if r := sb.run(t, nil, "plugin", "remove", "hello-native", "--yes"); r.code != 0 {
				t.Fatalf("remove: %d %s %s", r.code, r.stdout, r.stderr)
			}
			if sb.registry(t) == reg {
				t.Fatal("remove did not write the registry")
			}
			if extra := unnamedRoots(t, sb.home); len(extra) != 0 {
				t.Fatalf("after remove, plugins/ still holds %v, which the registry does not name", extra)
			}
			assertRegistryRootsIntact(t, sb.home, 1)

			if r := sb.run(t, nil, "plugin", "install", market, "--yes", "--replace"); r.code != 0 {
				t.Fatalf("install after the kills: %d %s %s", r.code, r.stdout, r.stderr)
			}
			if extra := unnamedRoots(t, sb.home); len(extra) != 0 {
				t.Fatalf("after install, plugins/ still holds %v", extra)
			}
			assertRegistryRootsIntact(t, sb.home, 2)
			for _, p := range []string{"hello-claude", "hello-native"} {
				if !strings.Contains(sb.run(t, nil, "plugin", "doctor", p).stdout, "ok: root present") {
					t.Fatalf("%s is not healthy after recovery", p)
				}
			}
			sb.assertNothingOutside(t)
		})
	}
}

// assertRegistryRootsIntact: the registry parses, has n entries, and each
// root holds exactly the content it records.
func assertRegistryRootsIntact(t *testing.T, home string, n int) {
	t.Helper()
	reg := readRegistry(t, home)
	if len(reg.Plugins) != n {
		t.Fatalf("registry has %d entries, want %d", len(reg.Plugins), n)
	}
	for _, e := range reg.Plugins {
		for _, bad := range []string{".staging-", ".trash-"} {
			if strings.Contains(filepath.Base(e.Root), bad) {
				t.Fatalf("registry adopted a leftover: %s", e.Root)
			}
		}
		assertRootDigest(t, e.Root, e.ContentDigest)
	}
}

// unnamedRoots lists what plugins/ holds beyond the registry's roots.
func unnamedRoots(t *testing.T, home string) []string {
	t.Helper()
	named := map[string]bool{}
	for _, e := range readRegistry(t, home).Plugins {
		named[filepath.Base(e.Root)] = true
	}
	ents, err := os.ReadDir(filepath.Join(home, "plugins"))
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for _, e := range ents {
		if !named[e.Name()] {
			extra = append(extra, e.Name())
		}
	}
	sort.Strings(extra)
	return extra
}
