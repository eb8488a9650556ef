package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakegithub"
)

type registryFile struct {
	Plugins []struct {
		Name          string `json:"name"`
		Root          string `json:"root"`
		Version       string `json:"version"`
		Commit        string `json:"commit"`
		ContentDigest string `json:"contentDigest"`
	} `json:"plugins"`
}

func writePlugin(t *testing.T, dir, version string) string {
	t.Helper()
	files := map[string]string{
		".claude-plugin/plugin.json": `{"name":"crashy","version":"` + version + `"}`,
		"skills/s/SKILL.md":          "---\ndescription: skill " + version + "\n---\nbody " + version + "\n",
		"commands/c.md":              "---\ndescription: command\n---\n" + strings.Repeat(version, 1000),
	}
	for p, c := range files {
		writeFile(t, filepath.Join(dir, p), c)
	}
	return dir
}

// TestCrashAtEveryStep kills the real binary (SIGKILL, via the test-only
// REASONIX_TEST_CRASHPOINT switch) at each step of apply and publication,
// for a first install and for a replacement, and checks what a user would
// find afterwards.
func TestCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	steps := []string{"before-staging", "after-staging", "after-swap", "after-registry"}
	for _, replace := range []bool{false, true} {
		for _, step := range steps {
			name := "first/" + step
			if replace {
				name = "replace/" + step
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				home := t.TempDir()
				v1 := writePlugin(t, filepath.Join(t.TempDir(), "v1"), "1.0.0")
				v2 := writePlugin(t, filepath.Join(t.TempDir(), "v2"), "2.0.0")
				if replace {
					if r := run(t, home, nil, "plugin", "install", v1, "--yes"); r.code != 0 {
						t.Fatalf("install v1: %s %s", r.stdout, r.stderr)
					}
				}
				args := []string{"plugin", "install", v2, "--yes"}
				if replace {
					args = append(args, "--replace")
				}
				r := runBinary(t, home, []string{"REASONIX_TEST_CRASHPOINT=" + step}, args...)
				if r.code != -1 {
					t.Fatalf("process was not killed at %s: code %d, %s %s", step, r.code, r.stdout, r.stderr)
				}
				checkConsistent(t, home, replace, step)

				// The next run never adopts leftovers and converges.
				r = run(t, home, nil, "plugin", "install", v2, "--yes", "--replace")
				if r.code != 0 {
					t.Fatalf("install after crash: %d %s %s", r.code, r.stdout, r.stderr)
				}
				reg := readRegistry(t, home)
				if len(reg.Plugins) != 1 || reg.Plugins[0].Version != "2.0.0" {
					t.Fatalf("registry after recovery: %+v", reg)
				}
				assertRootDigest(t, reg.Plugins[0].Root, reg.Plugins[0].ContentDigest)
				ents, _ := os.ReadDir(filepath.Join(home, "plugins"))
				if len(ents) != 1 {
					var names []string
					for _, e := range ents {
						names = append(names, e.Name())
					}
					t.Fatalf("plugins/ after recovery holds %v; want only the live root", names)
				}
			})
		}
	}
}

func readRegistry(t *testing.T, home string) registryFile {
	t.Helper()
	var reg registryFile
	data, err := os.ReadFile(filepath.Join(home, "plugin-packages.json"))
	if os.IsNotExist(err) {
		return reg
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &reg); err != nil {
		t.Fatalf("registry does not parse after crash: %v\n%s", err, data)
	}
	return reg
}

func assertRootDigest(t *testing.T, root, want string) {
	t.Helper()
	got, _, err := plugind.TreeDigest(root, plugind.DefaultBudget)
	if err != nil {
		t.Fatalf("root %s: %v", root, err)
	}
	if got != want {
		t.Fatalf("root %s holds %s, registry records %s", root, got, want)
	}
}

func checkConsistent(t *testing.T, home string, replace bool, step string) {
	t.Helper()
	reg := readRegistry(t, home)
	committed := step == "after-registry"
	switch {
	case len(reg.Plugins) == 0:
		if replace || committed {
			t.Fatalf("registry lost its entry after a crash at %s", step)
		}
		return
	case len(reg.Plugins) != 1:
		t.Fatalf("registry has %d entries", len(reg.Plugins))
	}
	e := reg.Plugins[0]
	wantVersion := "1.0.0"
	if committed {
		wantVersion = "2.0.0"
	}
	if e.Version != wantVersion {
		t.Fatalf("crash at %s: registry names %s, want %s", step, e.Version, wantVersion)
	}
	for _, bad := range []string{".staging-", ".trash-", ".tmp"} {
		if strings.Contains(filepath.Base(e.Root), bad) {
			t.Fatalf("registry adopted a leftover: %s", e.Root)
		}
	}
	assertRootDigest(t, e.Root, e.ContentDigest)
}

// TestUpdateAllCrashAtEveryStep kills `plugin update --all --yes` (SIGKILL)
// at each step of apply and publication: every plugin is either wholly at
// its old commit or wholly at its new one (the registry rename is the one
// commit point), its root holds exactly what the registry records, and the
// next run converges with no leftovers.
func TestUpdateAllCrashAtEveryStep(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"before-staging", "after-staging", "after-swap", "after-registry"} {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			gh := fakegithub.New(t)
			repo := gh.CreateRepo("acme", "market")
			files := func(v string) map[string]string {
				out := map[string]string{".claude-plugin/marketplace.json": `{"name":"acme","owner":{"name":"o"},"plugins":[{"name":"a","source":"./a"},{"name":"b","source":"./b"},{"name":"c","source":"./c"}]}`}
				for _, n := range []string{"a", "b", "c"} {
					out[n+"/.claude-plugin/plugin.json"] = `{"name":"` + n + `","version":"` + v + `"}`
					out[n+"/skills/s/SKILL.md"] = "---\ndescription: " + n + " " + v + "\n---\n"
				}
				return out
			}
			old := repo.Commit("main", files("1.0.0"))
			home, env := t.TempDir(), gh.Env()
			if r := run(t, home, env, "plugin", "install", "https://github.com/acme/market", "--yes"); r.code != 0 {
				t.Fatalf("install: %s %s", r.stdout, r.stderr)
			}
			moved := repo.Commit("main", files("2.0.0"))
			r := runBinary(t, home, append([]string{"REASONIX_TEST_CRASHPOINT=" + step}, env...), "plugin", "update", "--all", "--yes")
			if r.code != -1 {
				t.Fatalf("process was not killed at %s: code %d, %s %s", step, r.code, r.stdout, r.stderr)
			}
			want := old
			if step == "after-registry" {
				want = moved
			}
			reg := readRegistry(t, home)
			if len(reg.Plugins) != 3 {
				t.Fatalf("registry holds %d plugins after a crash at %s", len(reg.Plugins), step)
			}
			for _, e := range reg.Plugins {
				if e.Commit != want {
					t.Fatalf("crash at %s: %s is at %s, want every plugin at %s", step, e.Name, e.Commit, want)
				}
				assertRootDigest(t, e.Root, e.ContentDigest)
			}
			r = run(t, home, env, "plugin", "update", "--all", "--yes")
			if r.code != 0 {
				t.Fatalf("update after the crash: %d %s %s", r.code, r.stdout, r.stderr)
			}
			reg = readRegistry(t, home)
			roots := map[string]bool{}
			for _, e := range reg.Plugins {
				if e.Commit != moved {
					t.Fatalf("after recovery %s is at %s, want %s", e.Name, e.Commit, moved)
				}
				assertRootDigest(t, e.Root, e.ContentDigest)
				roots[filepath.Base(e.Root)] = true
			}
			ents, _ := os.ReadDir(filepath.Join(home, "plugins"))
			for _, d := range ents {
				if !roots[d.Name()] {
					t.Fatalf("plugins/ after recovery holds %s, which the registry does not name", d.Name())
				}
			}
		})
	}
}
