package manifest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseNative, FuzzParseClaude and FuzzParseCodex feed one manifest
// parser arbitrary bytes for a package root built once per fuzzing process
// (fuzzRoot): one of everything the formats map, plus symlinks leading out
// of it. Seeds: testdata/fuzz/<name>/ and every manifest under
// testdata. Whatever the input: no panic; an error is coded; otherwise
// packageInvariants holds (nothing it lists lies outside the root), and a
// second parse under a --name override holds the same items in the same
// order, invoked under the new name.
func FuzzParseNative(f *testing.F) { fuzzManifest(f, KindReasonix) }

func FuzzParseClaude(f *testing.F) { fuzzManifest(f, KindClaude) }

func FuzzParseCodex(f *testing.F) { fuzzManifest(f, KindCodex) }

func fuzzManifest(f *testing.F, kind Kind) {
	addManifestSeeds(f)
	root := fuzzRoot(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(kind, data, root, LoadOptions{})
		if err != nil {
			if err := parseErrorInvariants(err); err != nil {
				t.Fatal(err)
			}
		} else if err := packageInvariants(p, kind, root); err != nil {
			t.Fatal(err)
		}
		// Each parse costs a few hundred stat calls, so the second one
		// serves twice: a --name override and a determinism check.
		renamed, rerr := Parse(kind, data, root, LoadOptions{Name: "renamed"})
		switch {
		case rerr != nil:
			if err := parseErrorInvariants(rerr); err != nil {
				t.Fatal(err)
			}
			if err == nil {
				t.Fatalf("parses, but not under --name: %v", rerr)
			}
		case err == nil:
			if renamed.Name != "renamed" || !sameInventory(p, renamed) {
				t.Fatalf("--name changed more than the name:\n%+v\n%+v", p, renamed)
			}
		}
	})
}

// sameInventory compares two parses of one manifest, the second under
// --name renamed: the same items from the same files in the same order,
// each invoked under the new name, and the same verdict.
func sameInventory(a, b *Package) bool {
	type item struct{ what, name, path, invocation string }
	items := func(p *Package) (out []item) {
		for _, s := range p.Skills {
			out = append(out, item{"skill", s.Name, s.Path, s.Invocation})
		}
		for _, c := range p.Commands {
			out = append(out, item{"command", c.Name, c.Path, c.Invocation})
		}
		for _, g := range p.Agents {
			out = append(out, item{"agent", g.Name, g.Path, g.Invocation})
		}
		for _, h := range p.Hooks {
			out = append(out, item{"hook", h.Event, h.Command + h.ContextFile, ""})
		}
		for _, s := range p.MCPServers {
			out = append(out, item{"mcp", s.Name, s.Source, s.ToolPrefix})
		}
		return out
	}
	ia, ib := items(a), items(b)
	if len(ia) != len(ib) || len(a.Warnings) != len(b.Warnings) || a.Compatibility != b.Compatibility ||
		a.Blocked != b.Blocked || (a.Runtime == nil) != (b.Runtime == nil) {
		return false
	}
	for i := range ia {
		x, y := ia[i], ib[i]
		switch x.what {
		case "skill", "command", "agent":
			// A skill at the root is named after the package.
			if x.what == "skill" && x.path == "." {
				x.name, y.name = "", ""
			}
			x.invocation = strings.Replace(x.invocation, "/"+a.Name+":", "/renamed:", 1)
			if x.what == "skill" && x.path == "." {
				x.invocation, y.invocation = "", ""
			}
		case "mcp":
			x.invocation = strings.Replace(x.invocation, "mcp__plugin_"+toolID(a.Name)+"_", "mcp__plugin_renamed_", 1)
		}
		if x != y {
			return false
		}
	}
	return true
}

// addManifestSeeds adds every manifest of the fixtures: each parser is
// seeded with the others' documents too, which its own must survive.
func addManifestSeeds(f *testing.F) {
	err := filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "fuzz" {
				return filepath.SkipDir // the fuzzer reads its own seeds
			}
			return nil
		}
		switch name := d.Name(); {
		case name == NativeManifest, name == "plugin.json", name == "codex-plugin.json",
			filepath.Base(filepath.Dir(p)) == "schema":
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			f.Add(data)
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
}

// fuzzRootFiles is the package the fuzz targets parse against: one of each
// thing any of the three formats maps (declared or by convention), kept
// small because every parse scans the conventional folders.
var fuzzRootFiles = map[string]string{
	"skills/tdd/SKILL.md":       "---\nname: tdd\ndescription: Write the test first\nallowed-tools: Read Bash(go test:*)\n---\n",
	"skills/notes/README.md":    "not a skill: no SKILL.md\n",
	"commands/commit.md":        "---\ndescription: Commit\nargument-hint: [message]\n---\nCommit $ARGUMENTS\n",
	"commands/git/push.md":      "---\ndescription: Push\n---\n",
	"agents/reviewer.md":        "---\nname: reviewer\ndescription: Reviews\n---\n",
	"prompts/plan.md":           "---\ndescription: Plan\n---\n",
	"extra/release.md":          "---\ndescription: Release\n---\n",
	"context/startup.md":        "Read me at startup.\n",
	"CLAUDE.md":                 "Codex reads this at session start.\n",
	"hooks/hooks.json":          `{"hooks":{"SessionStart":[{"matcher":"startup","hooks":[{"type":"command","command":"${CLAUDE_PLUGIN_ROOT}/hooks/guard","args":[]}]}],"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo $TOKEN","env":{"TOKEN":"ghp_abcdefghijklmnopqrstuvwxyz0123456789"}}]}]}}`,
	"hooks/session-start-codex": "#!/bin/sh\n",
	"hooks/guard":               "#!/bin/sh\n",
	".claude/settings.json":     `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo done"}]}]}}`,
	".mcp.json":                 `{"mcpServers":{"local":{"command":"bin/helper","args":["--api-key","sk-abcdefghijklmnop1234"]},"remote":{"type":"http","url":"https://user:pw@mcp.example.test/v1?access_token=abc"}}}`,
	"bin/helper":                "#!/bin/sh\n",
	"themes/dark/theme.json":    `{"name":"dark"}`,
}

// fuzzRoot builds the package root of fuzzRootFiles, plus links a
// manifest might name to reach outside it. Built once per process: an
// execution only reads it.
func fuzzRoot(tb testing.TB) string {
	tb.Helper()
	base := tb.TempDir()
	root := filepath.Join(base, "root")
	write := func(dir string, files map[string]string) {
		for rel, content := range files {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				tb.Fatal(err)
			}
			mode := os.FileMode(0o644)
			if strings.HasPrefix(content, "#!") {
				mode = 0o755
			}
			if err := os.WriteFile(p, []byte(content), mode); err != nil {
				tb.Fatal(err)
			}
		}
	}
	write(root, fuzzRootFiles)
	outside := filepath.Join(base, "outside")
	write(outside, map[string]string{
		"secret.md":           "---\ndescription: outside\n---\n",
		"evil/SKILL.md":       "---\nname: evil\ndescription: outside\n---\n",
		"hooks.json":          `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"evil"}]}]}}`,
		"mcp.json":            `{"mcpServers":{"evil":{"command":"evil"}}}`,
		"agents/spy.md":       "---\ndescription: outside\n---\n",
		"skills/far/SKILL.md": "---\ndescription: outside\n---\n",
	})
	for link, target := range map[string]string{
		"escape-dir":        outside,                    // absolute, outward
		"escape-skills":     "../outside/skills",        // relative, outward
		"escape-agents":     "../outside/agents",        // relative, outward
		"escape.md":         "../outside/secret.md",     // a file outward
		"escape-hooks.json": "../outside/hooks.json",    // a sidecar outward
		"escape-mcp.json":   "../outside/mcp.json",      // a sidecar outward
		"commands/leak.md":  "../../outside/secret.md",  // outward from a conventional folder
		"skills/evil":       "../../outside/evil",       // a skill directory outward
		"dangling":          "../outside/not-there-yet", // dangling, outward
		"inner.md":          "commands/commit.md",       // inward
		"skills/inner":      "tdd",                      // inward directory link
		"loop":              "loop",                     // a link to itself
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			tb.Fatal(err)
		}
	}
	return root
}

// TestInvariantsCatchEscapes makes sure the fuzz targets' oracle would see
// an escape: each path below leaves fuzzRoot, or stays in it.
func TestInvariantsCatchEscapes(t *testing.T) {
	t.Parallel()
	root := fuzzRoot(t)
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, tc := range []struct {
		rel    string
		dir    bool
		inside bool
	}{
		{"commands/commit.md", false, true},
		{"inner.md", false, true},
		{"skills/inner", true, true},
		{"escape.md", false, false},
		{"commands/leak.md", false, false},
		{"skills/evil", true, false},
		{"escape-dir/secret.md", false, false},
		{"dangling", false, false},
		{"loop", false, false},
		{"../outside/secret.md", false, false},
		{"commands/../commands/commit.md", false, false}, // not clean
	} {
		if err := inside(r, tc.rel, tc.dir); (err == nil) != tc.inside {
			t.Errorf("inside(%q) = %v, want inside=%v", tc.rel, err, tc.inside)
		}
	}
	for _, tc := range []struct {
		rel string
		ok  bool
	}{
		{"context/missing.md", true},
		{"inner.md", true},
		{"dangling/x.md", false},
		{"escape-dir/x.md", false},
		{"escape.md", false},
	} {
		if err := noOutwardLink(r, tc.rel); (err == nil) != tc.ok {
			t.Errorf("noOutwardLink(%q) = %v, want ok=%v", tc.rel, err, tc.ok)
		}
	}
	// A package listing an outward skill fails the invariants.
	p, err := Parse(KindClaude, []byte(`{"name":"ok"}`), root, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := packageInvariants(p, KindClaude, root); err != nil {
		t.Fatal(err)
	}
	p.Skills = append(p.Skills, Skill{Name: "evil", Invocation: "/ok:evil", Path: "skills/evil"})
	if err := packageInvariants(p, KindClaude, root); err == nil || !strings.Contains(err.Error(), "not inside the package root") {
		t.Errorf("a skill outside the root passed: %v", err)
	}
}

// TestSameInventory checks the --name oracle itself: a renamed parse of a
// rich package matches, a changed one does not.
func TestSameInventory(t *testing.T) {
	t.Parallel()
	root := fuzzRoot(t)
	data, err := os.ReadFile(filepath.Join("testdata", "claude", ".claude-plugin", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), `"commands": ["./extra/release.md"]`, `"commands": ["./extra/release.md", "./inner.md"], "skills": ["./"]`, 1))
	p, err := Parse(KindClaude, data, root, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	renamed, err := Parse(KindClaude, data, root, LoadOptions{Name: "renamed"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Skills) == 0 || len(p.Commands) < 2 || len(p.Agents) == 0 || len(p.Hooks) == 0 || len(p.MCPServers) == 0 {
		t.Fatalf("the package maps too little to test with: %s", p.Counts())
	}
	if !sameInventory(p, renamed) {
		t.Fatalf("a renamed parse differs:\n%+v\n%+v", p, renamed)
	}
	renamed.Commands[1].Path = "elsewhere.md"
	if sameInventory(p, renamed) {
		t.Error("a changed command path went unnoticed")
	}
	renamed.Commands[1] = p.Commands[1]
	if sameInventory(p, renamed) {
		t.Error("an invocation under the old name went unnoticed")
	}
}
