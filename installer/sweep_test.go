package installer

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/store"
)

// plantOrphans puts under plugins/ what crashed runs leave: staging, trash,
// a sibling root of a replacement that never got published, a root whose
// plugin was never registered, and a stray file.
func plantOrphans(t *testing.T, home Home) []string {
	t.Helper()
	names := []string{".staging-a-0123", ".trash-4567", "a@0123456789ab", "ghost", "stray.txt"}
	for _, n := range names {
		p := filepath.Join(home.PluginsDir(), n)
		if strings.Contains(n, ".") && !strings.HasPrefix(n, ".") {
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		writeTree(t, p, map[string]string{".claude-plugin/plugin.json": `{"name":"a"}`, "skills/x/SKILL.md": "x"})
	}
	return names
}

// TestMutationsSweepOrphans (issue 9, finding 11): every mutation under the
// home lock (install, update, remove) deletes whatever plugins/ holds that
// the registry does not name as a root, and never touches a registered one.
func TestMutationsSweepOrphans(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(t *testing.T, env *testEnv, srcA, other string) error
	}{
		{"install", func(t *testing.T, env *testEnv, srcA, other string) error {
			_, err := env.install(Request{Source: mustSource(other)}, Approval{Yes: true})
			return err
		}},
		{"update", func(t *testing.T, env *testEnv, srcA, other string) error {
			// A changed source, so the update applies (an up-to-date one
			// writes nothing, and sweeps nothing).
			writeTree(t, srcA, map[string]string{".claude-plugin/plugin.json": `{"name":"a","version":"2.0.0"}`})
			_, err := env.in.Update(context.Background(), UpdateRequest{Names: []string{"a"}}, Request{}, Approval{Yes: true})
			return err
		}},
		{"remove", func(t *testing.T, env *testEnv, srcA, other string) error {
			if _, err := env.install(Request{Source: mustSource(other)}, Approval{Yes: true}); err != nil {
				return err
			}
			// Orphans planted after that install: only remove sweeps them.
			plantOrphans(t, env.home)
			_, err := env.in.Remove(context.Background(), "b", false)
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t)
			srcA := claudePlugin(t, "a", "1.0.0")
			env.mustInstall(srcA)
			plantOrphans(t, env.home)
			if err := tc.mutate(t, env, srcA, claudePlugin(t, "b", "1.0.0")); err != nil {
				t.Fatal(err)
			}
			reg, err := LoadRegistry(env.home.RegistryPath())
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, e := range reg.Plugins {
				want = append(want, filepath.Base(e.Root))
				assertDigest(t, e.Root, e.ContentDigest)
			}
			got := env.pluginsDirEntries()
			sort.Strings(want)
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("plugins/ holds %v; the registry names %v", got, want)
			}
		})
	}
}

// TestSweepKeepsRootsNamedThroughAnotherPath: a registry written through a
// symlinked home names the same folders by another path; they are the
// registry's, and stay.
func TestSweepKeepsRootsNamedThroughAnotherPath(t *testing.T) {
	t.Parallel()
	real := filepath.Join(t.TempDir(), "real-home")
	link := filepath.Join(t.TempDir(), "link-home")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	open := func(dir string) *testEnv {
		env := &testEnv{t: t, home: Home{Dir: dir}}
		st, err := store.Open(env.home.StoreDir(), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		env.in = New(Config{Home: env.home, Sources: resolver.New(resolver.Config{Store: st})})
		return env
	}
	viaLink := open(link)
	viaLink.mustInstall(claudePlugin(t, "a", "1.0.0"))
	viaReal := open(real)
	viaReal.mustInstall(claudePlugin(t, "b", "1.0.0"))
	for _, name := range []string{"a", "b"} {
		if _, err := os.Stat(filepath.Join(real, "plugins", name, ".claude-plugin", "plugin.json")); err != nil {
			t.Fatalf("%s was swept: %v", name, err)
		}
	}
}

func assertDigest(t *testing.T, root, want string) {
	t.Helper()
	got, _, err := plugind.TreeDigest(root, plugind.DefaultBudget)
	if err != nil || got != want {
		t.Fatalf("root %s: digest %s (%v), registry says %s", root, got, err, want)
	}
}
