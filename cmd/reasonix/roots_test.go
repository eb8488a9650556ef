package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tamperedRoot is one way to point a registry entry somewhere the home does
// not own (issue 21, item 8). make returns the root to write into the
// registry, given the home and a precious folder outside it that the
// attacker wants deleted; it may also arrange the disk.
type tamperedRoot struct {
	name string
	make func(t *testing.T, home, precious string) string
}

var tamperedRoots = []tamperedRoot{
	{"absolute-elsewhere", func(t *testing.T, home, precious string) string { return precious }},
	{"dotdot", func(t *testing.T, home, precious string) string {
		rel, err := filepath.Rel(home, precious)
		if err != nil {
			t.Fatal(err)
		}
		return home + "/plugins/../" + rel // cleans to the precious folder
	}},
	{"plugins-dir", func(t *testing.T, home, precious string) string { return filepath.Join(home, "plugins") }},
	{"the-home", func(t *testing.T, home, precious string) string { return home }},
	{"relative", func(t *testing.T, home, precious string) string { return "plugins/relative" }},
	{"other-plugin", func(t *testing.T, home, precious string) string { return filepath.Join(home, "plugins", "innocent") }},
	{"symlink-root", func(t *testing.T, home, precious string) string {
		// The registry says plugins/<name>, which now is a link out.
		root := filepath.Join(home, "plugins", "symlink-root")
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(precious, root); err != nil {
			t.Fatal(err)
		}
		return root
	}},
	{"symlinked-parent", func(t *testing.T, home, precious string) string {
		// plugins/evil is a link to the folder holding a folder named like
		// the plugin: plugins/evil/symlinked-parent is outside.
		dir := filepath.Join(filepath.Dir(filepath.Dir(precious)), "parent")
		if err := os.MkdirAll(filepath.Join(dir, "symlinked-parent"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "symlinked-parent", "keep.txt"), "keep")
		if err := os.Symlink(dir, filepath.Join(home, "plugins", "evil")); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(home, "plugins", "evil", "symlinked-parent")
	}},
}

// rootsFixture is a home with one plugin per tampered root, each pointing
// at its own precious folder outside the home, and one innocent plugin
// installed normally.
type rootsFixture struct {
	home     string
	sources  map[string]string // plugin → the folder it was installed from
	precious map[string]string // plugin → its precious folder
	outside  string
}

func newRootsFixture(t *testing.T) *rootsFixture {
	t.Helper()
	fx := &rootsFixture{home: t.TempDir(), sources: map[string]string{}, precious: map[string]string{}, outside: t.TempDir()}
	srcs := t.TempDir()
	names := []string{"innocent"}
	for _, c := range tamperedRoots {
		names = append(names, c.name)
	}
	for _, n := range names {
		fx.sources[n] = writeNamedPlugin(t, srcs, n)
		if r := runBinary(t, fx.home, nil, "plugin", "install", fx.sources[n], "--yes"); r.code != 0 {
			t.Fatalf("install %s: exit %d %s %s", n, r.code, r.stdout, r.stderr)
		}
	}
	roots := map[string]string{}
	for _, c := range tamperedRoots {
		p := filepath.Join(fx.outside, c.name, "precious")
		writeFile(t, filepath.Join(p, "keep.txt"), "keep")
		fx.precious[c.name] = p
		roots[c.name] = c.make(t, fx.home, p)
	}
	fx.editRegistry(t, func(e map[string]any) {
		if root, ok := roots[e["name"].(string)]; ok {
			e["root"] = root
		}
	})
	return fx
}

// editRegistry rewrites every registry entry with edit, keeping every
// field it does not touch.
func (fx *rootsFixture) editRegistry(t *testing.T, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(fx.home, "plugin-packages.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]any
	if err := json.Unmarshal(data, &reg); err != nil {
		t.Fatal(err)
	}
	for _, p := range reg["plugins"].([]any) {
		edit(p.(map[string]any))
	}
	out, err := json.MarshalIndent(reg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// intact fails the test unless every folder outside the home survived, and
// the innocent plugin's copy too (when it was not the one acted on).
func (fx *rootsFixture) intact(t *testing.T, innocentToo bool) {
	t.Helper()
	err := filepath.WalkDir(fx.outside, func(p string, d os.DirEntry, err error) error { return err })
	if err != nil {
		t.Fatalf("the folders outside the home: %v", err)
	}
	for name, p := range fx.precious {
		if data, err := os.ReadFile(filepath.Join(p, "keep.txt")); err != nil || string(data) != "keep" {
			t.Errorf("%s: the folder outside the home is damaged: %v", name, err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(fx.outside, "parent", "symlinked-parent", "keep.txt")); err != nil || string(data) != "keep" {
		t.Errorf("the folder behind plugins/evil is damaged: %v", err)
	}
	if innocentToo {
		if _, err := os.Stat(filepath.Join(fx.home, "plugins", "innocent", ".claude-plugin", "plugin.json")); err != nil {
			t.Errorf("the innocent plugin's copy is damaged: %v", err)
		}
	}
}

// TestRegistryRootsOutsidePluginsAreNeverFollowed (issue 21, item 8): a
// registry edited so that roots point outside plugins/ (absolute, "..",
// the plugins folder, the home, another plugin's folder, a symbolic link,
// a symlinked parent). doctor reports each, list excludes each from
// loading, and remove, install --replace, prune, update --all and the
// daemon's DELETE /plugins/{name} all leave every folder outside the home
// (and the innocent plugin) as it was.
func TestRegistryRootsOutsidePluginsAreNeverFollowed(t *testing.T) {
	t.Parallel()
	t.Run("doctor-and-list", func(t *testing.T) {
		t.Parallel()
		fx := newRootsFixture(t)
		for _, c := range tamperedRoots {
			r := runBinary(t, fx.home, nil, "plugin", "doctor", c.name)
			if r.code != 1 || !strings.Contains(r.stdout, "problem: root ") || !strings.Contains(r.stdout, "excluded from loading") {
				t.Errorf("doctor %s: exit %d\n%s%s", c.name, r.code, r.stdout, r.stderr)
			}
		}
		if r := runBinary(t, fx.home, nil, "plugin", "doctor", "innocent"); r.code != 0 {
			t.Errorf("doctor innocent: exit %d %s", r.code, r.stdout)
		}
		list := runBinary(t, fx.home, nil, "plugin", "list", "--json")
		var listed struct{ Plugins []map[string]any }
		if err := json.Unmarshal([]byte(list.stdout), &listed); err != nil {
			t.Fatalf("list --json: %v %s", err, list.stdout)
		}
		for _, p := range listed.Plugins {
			bad := p["name"] != "innocent"
			if bad != (p["status"] == "excluded") || bad == (p["loaded"] == true) {
				t.Errorf("list: %v is %v, loaded %v", p["name"], p["status"], p["loaded"])
			}
			if bad && len(p["skills"].([]any)) != 0 {
				t.Errorf("list read the skills of %v from a root outside plugins/", p["name"])
			}
		}
		if r := runBinary(t, fx.home, nil, "plugin", "export", "absolute-elsewhere", "-o", filepath.Join(t.TempDir(), "x.zip")); r.code != 1 || !strings.Contains(r.stderr+r.stdout, "outside") {
			t.Errorf("export of a root outside plugins/: exit %d %s %s", r.code, r.stdout, r.stderr)
		}
		fx.intact(t, true)
	})
	t.Run("remove", func(t *testing.T) {
		t.Parallel()
		fx := newRootsFixture(t)
		for _, c := range tamperedRoots {
			r := runBinary(t, fx.home, nil, "plugin", "remove", c.name, "--yes")
			if r.code != 0 || !strings.Contains(r.stdout, "left in place, not deleted") {
				t.Errorf("remove %s: exit %d %s %s", c.name, r.code, r.stdout, r.stderr)
			}
			fx.intact(t, true)
		}
		if got := stateOf(t, fx.home); strings.Join(got, " ") != "innocent@1.0.0" {
			t.Errorf("after the removes: %v", got)
		}
	})
	t.Run("replace", func(t *testing.T) {
		t.Parallel()
		fx := newRootsFixture(t)
		for _, c := range tamperedRoots {
			r := runBinary(t, fx.home, nil, "plugin", "install", fx.sources[c.name], "--replace", "--yes")
			if r.code != 0 || !strings.Contains(r.stdout, "left in place, not deleted") {
				t.Errorf("install --replace %s: exit %d %s %s", c.name, r.code, r.stdout, r.stderr)
			}
			fx.intact(t, true)
			// The replacement is a proper copy again.
			if d := runBinary(t, fx.home, nil, "plugin", "doctor", c.name); d.code != 0 {
				t.Errorf("doctor %s after --replace: exit %d %s", c.name, d.code, d.stdout)
			}
		}
	})
	t.Run("prune-and-update", func(t *testing.T) {
		t.Parallel()
		fx := newRootsFixture(t)
		// update --all re-reads each local source, changed since.
		for _, c := range tamperedRoots[:4] {
			writePluginNamed(t, fx.sources[c.name], c.name, "2.0.0")
		}
		if r := runBinary(t, fx.home, nil, "plugin", "update", "--all", "--yes"); r.code != 0 {
			t.Errorf("update --all: exit %d %s %s", r.code, r.stdout, r.stderr)
		}
		fx.intact(t, true)
		// Everything left a dependency that nothing needs: prune takes it.
		fx.editRegistry(t, func(e map[string]any) {
			if e["name"] != "innocent" {
				e["dependency"] = true
			}
		})
		if r := runBinary(t, fx.home, nil, "plugin", "prune", "--yes"); r.code != 0 || !strings.Contains(r.stdout, "left in place, not deleted") {
			t.Errorf("prune: exit %d %s %s", r.code, r.stdout, r.stderr)
		}
		fx.intact(t, true)
	})
	t.Run("daemon-delete", func(t *testing.T) {
		t.Parallel()
		fx := newRootsFixture(t)
		d := startDaemon(t, fx.home, nil)
		for _, c := range tamperedRoots {
			r := d.do("DELETE", "/plugins/"+c.name, nil)
			if r.status != 200 || !strings.Contains(string(r.body), "left in place, not deleted") {
				t.Errorf("DELETE /plugins/%s: %d %s", c.name, r.status, r.body)
			}
		}
		fx.intact(t, true)
		if d.stop() != 0 {
			t.Errorf("serve exited with %d: %s", d.code, d.stderr)
		}
	})
}

// TestLinkedPluginFolderIsNeverDeleted: a --link install's root is the
// user's own folder outside plugins/. It loads (doctor is happy), and
// remove takes only the registry entry.
func TestLinkedPluginFolderIsNeverDeleted(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	src := writeNamedPlugin(t, t.TempDir(), "linked")
	if r := runBinary(t, home, nil, "plugin", "install", src, "--link", "--yes"); r.code != 0 {
		t.Fatalf("install --link: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := runBinary(t, home, nil, "plugin", "doctor", "linked"); r.code != 0 {
		t.Errorf("doctor of a linked plugin: exit %d %s", r.code, r.stdout)
	}
	if r := runBinary(t, home, nil, "plugin", "remove", "linked", "--yes"); r.code != 0 {
		t.Fatalf("remove: exit %d %s", r.code, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(src, ".claude-plugin", "plugin.json")); err != nil {
		t.Errorf("remove deleted the linked folder: %v", err)
	}
}
