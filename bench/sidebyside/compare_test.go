package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeTree writes files (path -> content; a content starting "->" makes a
// symlink to the rest, a path ending "*" an executable file) below root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		mode := os.FileMode(0o644)
		if r, ok := strings.CutSuffix(rel, "*"); ok {
			rel, mode = r, 0o755
		}
		path := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDiffTrees(t *testing.T) {
	tests := []struct {
		name       string
		claude, rx map[string]string
		want       []string
	}{
		{"identical, claude's .in_use aside", map[string]string{"a.md": "x", "bin/run*": "#!", "l": "->a.md", ".in_use/123": "{}"},
			map[string]string{"a.md": "x", "bin/run*": "#!", "l": "->a.md"}, nil},
		{"only one side", map[string]string{"a.md": "x", "c.md": "y"}, map[string]string{"a.md": "x", "r.md": "z"},
			[]string{"only claude: c.md", "only reasonix: r.md"}},
		{"a .git only one side has is one line", map[string]string{"a.md": "x", ".git/HEAD": "ref", ".git/config": "c", "sub/.git/x": "y"},
			map[string]string{"a.md": "x"}, []string{"only claude: sub/.git/x", "only claude: .git/ (2 files)"}},
		{"bytes", map[string]string{"a.md": "xx"}, map[string]string{"a.md": "x"},
			[]string{"bytes: a.md (claude 2 B, reasonix 1 B)"}},
		{"exec bit", map[string]string{"run*": "#!"}, map[string]string{"run": "#!"},
			[]string{"exec: run (only claude +x)"}},
		{"symlink target", map[string]string{"l": "->a"}, map[string]string{"l": "->b"},
			[]string{"symlink: l (claude -> a, reasonix -> b)"}},
		{"symlink vs file", map[string]string{"l": "->a"}, map[string]string{"l": "a"},
			[]string{"kind: l (claude symlink, reasonix file)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, r := t.TempDir(), t.TempDir()
			writeTree(t, c, tt.claude)
			writeTree(t, r, tt.rx)
			ct, err := snapshotTree(c)
			if err != nil {
				t.Fatal(err)
			}
			rt, err := snapshotTree(r)
			if err != nil {
				t.Fatal(err)
			}
			if got := diffTrees(ct, rt); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("diffTrees = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReadEntriesKinds(t *testing.T) {
	dir := t.TempDir()
	doc := `{"name":"m","plugins":[
	 {"name":"rel","source":"./plugins/rel"},
	 {"name":"u","source":{"source":"url","url":"https://github.com/o/u.git","sha":"0123456789012345678901234567890123456789"}},
	 {"name":"uu","source":{"source":"url","url":"https://github.com/o/uu.git"}},
	 {"name":"sub","source":{"source":"git-subdir","url":"https://github.com/o/s.git","path":"p","sha":"0123456789012345678901234567890123456789"},"strict":false},
	 {"name":"gh","source":{"source":"github","repo":"o/g"}}]}`
	path := filepath.Join(dir, "marketplace.json")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	got, name, err := readEntries(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []mktEntry{{"rel", "relative", ""}, {"u", "url", "o/u"}, {"uu", "url(unpinned)", "o/uu"},
		{"sub", "git-subdir+strict:false", "o/s"}, {"gh", "github(unpinned)", "o/g"}}
	if name != "m" || !reflect.DeepEqual(got, want) {
		t.Errorf("readEntries = %q %+v, want m %+v", name, got, want)
	}
	if !onlyGitDir([]string{"only claude: .git/ (3 files)"}) || onlyGitDir([]string{"only claude: .git/ (3 files)", "bytes: a"}) || onlyGitDir(nil) {
		t.Error("onlyGitDir misjudges")
	}
	if false {
		t.Errorf("readEntries = %q %+v, want m %+v", name, got, want)
	}
	var out bytes.Buffer
	if err := namesCmd([]string{"-served", "O/U,o/g", path}, &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "rel\nu\ngh\n" {
		t.Errorf("names -served = %q", out.String())
	}
	if _, _, err := readEntries(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("readEntries of a missing file succeeded")
	}
}

// TestCompareCmd runs the whole comparison on two fake homes: one plugin
// installed identically, one differing, one only Claude installed (reasonix
// blocked it), one neither (Claude's log says why).
func TestCompareCmd(t *testing.T) {
	dir := t.TempDir()
	mkt := filepath.Join(dir, "marketplace.json")
	writeTree(t, dir, map[string]string{"marketplace.json": `{"name":"m","plugins":[
	 {"name":"same","source":"./same"},{"name":"diff","source":"./diff"},
	 {"name":"conly","source":"./conly"},{"name":"none","source":{"source":"url","url":"https://github.com/o/none.git"}}]}`})
	cc, logs, rx := filepath.Join(dir, "cc"), filepath.Join(dir, "logs"), filepath.Join(dir, "rx")
	writeTree(t, filepath.Join(cc, "cache"), map[string]string{"same/1/a.md": "a", "diff/1/a.md": "a", "diff/1/b.md": "b", "conly/1/a.md": "a"})
	writeTree(t, filepath.Join(rx, "plugins"), map[string]string{"same/a.md": "a", "diff/a.md": "A"})
	installed := map[string]any{"version": 2, "plugins": map[string]any{}}
	for _, n := range []string{"same", "diff", "conly"} {
		installed["plugins"].(map[string]any)[n+"@m"] = []map[string]string{{"installPath": filepath.Join(cc, "cache", n, "1")}}
	}
	data, _ := json.Marshal(installed)
	writeTree(t, cc, map[string]string{"plugins/installed_plugins.json": string(data)})
	writeTree(t, logs, map[string]string{"none.log": "\x1b[31m✘ Failed to install: repository not found\x1b[0m\n", "same.log": "ok"})
	reg := `{"version":1,"plugins":[{"name":"same","root":"` + filepath.Join(rx, "plugins", "same") + `"},{"name":"diff","root":"` + filepath.Join(rx, "plugins", "diff") + `"}]}`
	resp := `{"ok":false,"actions":[{"name":"conly","status":"blocked","errorCode":"install.x","error":"because"},{"name":"none","status":"blocked","error":"not found"}]}`
	writeTree(t, rx, map[string]string{"plugin-packages.json": reg, "resp.json": resp})
	var out bytes.Buffer
	err := compareCmd([]string{"-market", mkt, "-claude-config", cc, "-claude-logs", logs,
		"-reasonix-home", rx, "-reasonix-response", filepath.Join(rx, "resp.json")}, &out)
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"Installed by both: 2 (1 identical file by file, 0 identical but for a .git/ only one has, 1 differing otherwise); only Claude: 1; only reasonix: 0; neither: 1",
		"bytes: a.md (claude 1 B, reasonix 1 B)", "only claude: b.md",
		"reasonix: blocked install.x: because",
		"claude:   ✘ Failed to install: repository not found",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}
