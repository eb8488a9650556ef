package parity

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMaskJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{name: "prose and commands masked, names kept", ok: true,
			in:   `{"name":"Nice Name","description":"does things","hooks":{"Stop":[{"matcher":"Bash|Edit","hooks":[{"type":"command","command":"echo hi","timeout":5}]}]}}`,
			want: `{"name":"Nice Name","description":"placeholder","hooks":{"Stop":[{"matcher":"Bash|Edit","hooks":[{"type":"command","command":"placeholder","timeout":5}]}]}}`},
		{name: "order and duplicate keys kept", ok: true, in: `{"b":1,"a":[true,null,"x y"],"b":2}`, want: `{"b":1,"a":[true,null,"placeholder"],"b":2}`},
		{name: "paths and URLs kept", ok: true, in: `{"commands":["./c/x.md"],"url":"https://h/mcp","args":["-y","pkg@1"]}`,
			want: `{"commands":["./c/x.md"],"url":"https://h/mcp","args":["-y","pkg@1"]}`},
		{name: "a long word masked", ok: true, in: `{"k":"` + strings.Repeat("a", 201) + `"}`, want: `{"k":"placeholder"}`},
		{name: "not an object", ok: true, in: `["a b", 1.50]`, want: `["placeholder",1.50]`},
		{name: "trailing comma", in: `{"a":1,}`},
		{name: "two documents", in: `{} {}`},
		{name: "unterminated", in: `{"a":[1,2}`},
		{name: "empty", in: ``},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := MaskJSON([]byte(tc.in))
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v (%s)", ok, tc.ok, got)
			}
			if !ok {
				return
			}
			var compact strings.Builder
			for _, line := range strings.Split(string(got), "\n") {
				compact.WriteString(strings.TrimSpace(line))
			}
			if c := strings.ReplaceAll(compact.String(), ": ", ":"); c != tc.want {
				t.Fatalf("got %s\nwant %s", c, tc.want)
			}
		})
	}
}

func TestMarkdownName(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"---\nname: my-skill\ndescription: x\n---\nbody", "my-skill"},
		{"\ufeff---\r\nname: \"quoted\"\r\n---\r\n", "quoted"},
		{"---\ndescription: x\n---\nname: not-front-matter", ""},
		{"no front matter\nname: x", ""},
		{"---\nname: a: b\n---\n", ""},
		{"---\nname: x\n", ""},
	}
	for _, tc := range tests {
		if got := MarkdownName([]byte(tc.in)); got != tc.want {
			t.Errorf("MarkdownName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMaterialize(t *testing.T) {
	t.Parallel()
	corpus := t.TempDir()
	if err := os.MkdirAll(filepath.Join(corpus, "plugins", "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corpus, "plugins", "p", "plugin.json"), []byte(`{"name":"p"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Skeleton{Repo: "o/r", Commit: "c", Files: map[string]SkeletonFile{
		"p/.claude-plugin/plugin.json": {Corpus: "plugins/p/plugin.json"},
		"p/skills/s/SKILL.md":          {Name: "fm-name"},
		"p/commands/c.md":              {},
		"p/hooks/hooks.json":           {JSON: json.RawMessage(`{"hooks":{}}`)},
		"p/.mcp.json":                  {Unparsable: true},
		"p/skills/link":                {Symlink: "../shared"},
		"p/hooks/session-start-codex":  {},
	}}
	files, err := s.Materialize(corpus)
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]string{
		"p/.claude-plugin/plugin.json": `{"name":"p"}`,
		"p/skills/s/SKILL.md":          "---\nname: fm-name\ndescription: placeholder\n---\n\nplaceholder\n",
		"p/commands/c.md":              "---\ndescription: placeholder\n---\n\nplaceholder\n",
		"p/hooks/hooks.json":           "{\"hooks\":{}}\n",
		"p/.mcp.json":                  unparsableJSON,
		"p/hooks/session-start-codex":  "placeholder\n",
	}
	for p, want := range checks {
		if files[p].Content != want {
			t.Errorf("%s = %q, want %q", p, files[p].Content, want)
		}
	}
	if files["p/skills/link"].Symlink != "../shared" {
		t.Errorf("link: %+v", files["p/skills/link"])
	}
	if json.Valid([]byte(files["p/.mcp.json"].Content)) {
		t.Error("an unparsable file became valid JSON")
	}
	s.Files = map[string]SkeletonFile{"x": {Corpus: "../outside"}}
	if _, err := s.Materialize(corpus); err == nil || !strings.Contains(err.Error(), "leaves the corpus folder") {
		t.Fatalf("escaping corpus path: %v", err)
	}
}

func TestRewritePins(t *testing.T) {
	t.Parallel()
	orig, now := strings.Repeat("a", 40), strings.Repeat("b", 40)
	doc := []byte(`{"plugins":[{"source":{"source":"url","url":"u","sha":"` + orig + `"}}]}`)
	got := string(RewritePins(doc, map[string]string{orig: now, "short": "x"}))
	if !strings.Contains(got, now) || strings.Contains(got, orig) {
		t.Fatalf("got %s", got)
	}
}

func TestRootIsPlugin(t *testing.T) {
	t.Parallel()
	sks := []*Skeleton{
		{Repo: "o/both", Head: true, Files: map[string]SkeletonFile{".claude-plugin/marketplace.json": {}, ".codex-plugin/plugin.json": {}}},
		{Repo: "o/both", Files: map[string]SkeletonFile{}},
		{Repo: "o/market", Head: true, Files: map[string]SkeletonFile{".claude-plugin/marketplace.json": {}, "plugins/p/.claude-plugin/plugin.json": {}}},
		{Repo: "o/old", Files: map[string]SkeletonFile{".claude-plugin/plugin.json": {}}},
	}
	for repo, want := range map[string]bool{"o/both": true, "o/market": false, "o/old": false, "o/none": false} {
		if got := RootIsPlugin(sks, repo); got != want {
			t.Errorf("RootIsPlugin(%s) = %t", repo, got)
		}
	}
}

func TestSubmoduleOf(t *testing.T) {
	t.Parallel()
	sks := []*Skeleton{
		{Repo: "o/m", Head: true, Submodules: []string{"plugins/a/vendor"}},
		{Repo: "o/m", Submodules: []string{"plugins/b/vendor"}}, // not HEAD: relative entries read HEAD
		{Repo: "o/r", Submodules: []string{"sub/x"}},
	}
	for _, tc := range []struct {
		e    Entry
		want string
	}{
		{Entry{Kind: "relative", Path: "./plugins/a"}, "o/m:plugins/a/vendor"},
		{Entry{Kind: "relative", Path: "./plugins/a/vendor/inner"}, "o/m:plugins/a/vendor"},
		{Entry{Kind: "relative", Path: "./plugins/b"}, ""},
		{Entry{Kind: "relative", Path: "./plugins/c"}, ""},
		{Entry{Kind: "github", Repo: "o/r"}, "o/r:sub/x"},
		{Entry{Kind: "git-subdir", Repo: "o/r", Path: "sub"}, "o/r:sub/x"},
		{Entry{Kind: "git-subdir", Repo: "o/r", Path: "other"}, ""},
		{Entry{Kind: "github", Repo: "o/none"}, ""},
	} {
		if got := SubmoduleOf(sks, "o/m", tc.e); got != tc.want {
			t.Errorf("SubmoduleOf(%+v) = %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestServedFile(t *testing.T) {
	t.Parallel()
	corpus := t.TempDir()
	if err := os.WriteFile(filepath.Join(corpus, "p.json"), []byte(`{"name":"p","commands":"./c"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sks := []*Skeleton{{Repo: "o/r", Commit: "orig", Files: map[string]SkeletonFile{
		"plugins/p/.claude-plugin/plugin.json": {Corpus: "p.json"},
		"plugins/l/.claude-plugin/plugin.json": {Symlink: "../../p/.claude-plugin/plugin.json"},
	}}}
	served := map[string]string{"orig": "served"}
	for _, tc := range []struct {
		source, want string
		fails        bool
	}{
		{source: "https://github.com/o/r/tree/served/plugins/p", want: `{"name":"p","commands":"./c"}`},
		{source: "https://github.com/o/r/tree/served/plugins/l", want: `{"name":"p","commands":"./c"}`},
		{source: "https://github.com/o/r/tree/served/plugins/none"},
		{source: "https://github.com/o/r/tree/served"},
		{source: "https://github.com/o/r/tree/other/plugins/p", fails: true},
		{source: "/local/folder", fails: true},
	} {
		got, err := ServedFile(sks, served, corpus, tc.source, ".claude-plugin/plugin.json")
		if (err != nil) != tc.fails || string(got) != tc.want {
			t.Errorf("%s: %q %v", tc.source, got, err)
		}
	}
}
