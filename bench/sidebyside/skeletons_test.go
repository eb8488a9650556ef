package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/parity"
)

// gitRepo makes a git repository at dir holding files (a value "->T" is
// a symlink to T, "gitlink:SHA" a submodule at commit SHA) in one commit,
// and returns that commit.
func gitRepo(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	var gitlinks []string
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if commit, ok := strings.CutPrefix(c, "gitlink:"); ok {
			gitlinks = append(gitlinks, "160000,"+commit+","+p)
			continue
		}
		if target, ok := strings.CutPrefix(c, "->"); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	steps := [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}}
	for _, l := range gitlinks {
		steps = append(steps, []string{"update-index", "--add", "--cacheinfo", l})
	}
	steps = append(steps, []string{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "c"})
	for _, args := range steps {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	head, err := parity.Git(context.Background(), filepath.Join(dir, ".git"), nil, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return head
}

// TestSkeletons writes the skeletons of a small corpus marketplace: only
// the files that decide an inventory, the corpus's manifests by reference,
// names only.
func TestSkeletons(t *testing.T) {
	root := t.TempDir()
	corpus, mirrors := filepath.Join(root, "corpus"), filepath.Join(root, "mirrors")
	market := `{"name":"m","plugins":[
		{"name":"a","source":"./plugins/a","strict":false,"commands":["./extra/x.md"],"skills":["./declared/s2"],"hooks":"./extra/more-hooks.json"},
		{"name":"r","source":{"source":"git-subdir","url":"https://github.com/o/remote.git","path":"sub","ref":"v1"}},
		{"name":"gone","source":{"source":"github","repo":"o/absent"}},
		{"name":"lsp","source":"./plugins/lsp","lspServers":{"x":{"command":"x"}}}]}`
	head := gitRepo(t, filepath.Join(mirrors, "o+m", "repo"), map[string]string{
		".claude-plugin/marketplace.json":         market,
		"plugins/a/.claude-plugin/plugin.json":    `{"name":"a","agents":["./custom/ag.md"]}`,
		"plugins/a/skills/s/SKILL.md":             "---\nname: fm\ndescription: secret prose\n---\nbody",
		"plugins/a/skills/s/references/doc.md":    "reference prose",
		"plugins/a/commands/sub/c.md":             "---\ndescription: prose\n---\nprompt",
		"plugins/a/extra/x.md":                    "declared",
		"plugins/a/extra/more-hooks.json":         `{"hooks":{}}`,
		"plugins/a/declared/s2/SKILL.md":          "---\nname: s2\n---\n",
		"plugins/a/declared/s2/assets/data.json":  `{"secret":"asset"}`,
		"plugins/a/declared/s2/references/ref.md": "---\nname: a-reference\n---\n",
		"plugins/a/custom/ag.md":                  "---\nname: agent-name\n---\n",
		"plugins/a/hooks/hooks.json":              `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"rm -rf secret"}]}]}}`,
		"plugins/a/.mcp.json":                     `{"mcpServers":{"s":{"command":"npx","args":["-y","pkg"]}},}`,
		"plugins/a/README.md":                     "readme",
		"plugins/a/scripts/run.sh":                "#!/bin/sh",
		"plugins/a/package.json":                  `{"name":"a"}`,
		"plugins/a/agents/linked.md":              "->../custom/ag.md",
		"plugins/a/skills/s/LICENSE":              "->../../../../LICENSE",
		"plugins/a/skills/s/assets":               "->../../../../shared",
		"LICENSE":                                 "license text",
		"shared/b.bin":                            "shared bytes",
		"shared/c.bin":                            "more shared bytes",
		"plugins/lsp/README.md":                   "an LSP plugin's prose",
		"plugins/lsp/LICENSE":                     "license text",
		"plugins/a/vendored":                      "gitlink:0123456789abcdef0123456789abcdef01234567",
		"elsewhere/vendored":                      "gitlink:0123456789abcdef0123456789abcdef01234567",
		"other/skills/x/SKILL.md":                 "not an entry's",
	})
	gitRepo(t, filepath.Join(mirrors, "o+remote", "repo"), map[string]string{
		"sub/.claude-plugin/plugin.json": `{"name":"r","description":"some prose"}`,
		"sub/skills/t/SKILL.md":          "---\nname: t\n---\n",
		"elsewhere/commands/no.md":       "outside the entry's folder",
	})
	remote := filepath.Join(mirrors, "o+remote", "repo", ".git")
	tagged, err := parity.Git(context.Background(), remote, nil, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parity.Git(context.Background(), remote, nil, "tag", "v1"); err != nil {
		t.Fatal(err)
	}
	mdir := filepath.Join(corpus, "o__m")
	if err := os.MkdirAll(filepath.Join(mdir, "plugins", "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"marketplace.json":       market,
		"plugins/a/plugin.json":  `{"name":"a","agents":["./custom/ag.md"]}`,
		"SOURCE.txt":             "repo: o/m\n.claude-plugin/marketplace.json -> marketplace.json\nplugins/a/.claude-plugin/plugin.json -> plugins/a/plugin.json\n",
		"codex-marketplace.json": "{}",
	} {
		if err := os.WriteFile(filepath.Join(mdir, filepath.FromSlash(name)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(root, "out")
	var log strings.Builder
	if err := skeletonsCmd([]string{"-corpus", corpus, "-market", "o__m", "-mirrors", mirrors, "-out", out}, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "not brought here: o/absent") {
		t.Errorf("log: %s", log.String())
	}
	sks, err := parity.ReadSkeletons(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(sks) != 2 {
		t.Fatalf("%d skeletons", len(sks))
	}
	bySrc := map[string]*parity.Skeleton{}
	for _, s := range sks {
		bySrc[s.Repo] = s
	}
	m, r := bySrc["o/m"], bySrc["o/remote"]
	if m == nil || m.Commit != head || !m.Head || r == nil || r.Commit != tagged || strings.Join(r.Refs, ",") != "v1" {
		t.Fatalf("skeletons: %+v %+v", m, r)
	}
	files := func(s *parity.Skeleton) string {
		var names []string
		for p := range s.Files {
			names = append(names, p)
		}
		sort.Strings(names)
		return strings.Join(names, "\n")
	}
	want := strings.Join([]string{".claude-plugin/marketplace.json", "LICENSE", "plugins/a/.claude-plugin/plugin.json", "plugins/a/.mcp.json",
		"plugins/a/agents/linked.md", "plugins/a/commands/sub/c.md", "plugins/a/custom/ag.md", "plugins/a/declared/s2/SKILL.md",
		"plugins/a/extra/more-hooks.json", "plugins/a/extra/x.md", "plugins/a/hooks/hooks.json",
		"plugins/a/skills/s/LICENSE", "plugins/a/skills/s/SKILL.md", "plugins/a/skills/s/assets", "plugins/lsp/LICENSE", "shared/b.bin"}, "\n")
	if got := files(m); got != want {
		t.Errorf("files\n%s\nwant\n%s", got, want)
	}
	if got := strings.Join(m.Submodules, ","); got != "plugins/a/vendored" {
		t.Errorf("submodules %q, want those in plugin folders only", got)
	}
	if got := files(r); got != "sub/.claude-plugin/plugin.json\nsub/skills/t/SKILL.md" {
		t.Errorf("remote files\n%s", got)
	}
	checks := map[string]parity.SkeletonFile{
		".claude-plugin/marketplace.json":      {Corpus: "marketplace.json"},
		"plugins/a/.claude-plugin/plugin.json": {Corpus: "plugins/a/plugin.json"},
		"plugins/a/.mcp.json":                  {Unparsable: true},
		"plugins/a/agents/linked.md":           {Symlink: "../custom/ag.md"},
		"plugins/a/custom/ag.md":               {Name: "agent-name"},
		"plugins/a/skills/s/SKILL.md":          {Name: "fm"},
		"plugins/a/skills/s/LICENSE":           {Symlink: "../../../../LICENSE"},
		"plugins/a/skills/s/assets":            {Symlink: "../../../../shared"},
		"LICENSE":                              {},
		"shared/b.bin":                         {},
		"plugins/lsp/LICENSE":                  {},
	}
	for p, want := range checks {
		if got := m.Files[p]; got.Corpus != want.Corpus || got.Unparsable != want.Unparsable || got.Symlink != want.Symlink || got.Name != want.Name {
			t.Errorf("%s = %+v, want %+v", p, got, want)
		}
	}
	data, err := os.ReadFile(filepath.Join(out, parity.SkeletonFileName("o/m", head)))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"secret", "prose", "prompt", "rm -rf", "license text", "shared bytes"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the skeleton holds the repository's content %q", secret)
		}
	}
	if !strings.Contains(string(r.Files["sub/.claude-plugin/plugin.json"].JSON), `"placeholder"`) {
		t.Errorf("remote manifest not masked: %s", r.Files["sub/.claude-plugin/plugin.json"].JSON)
	}
}

// TestRepair serves a snapshot that lacks a file at HEAD: the repaired
// repository clones, with a placeholder for the file and HEAD's dates.
func TestRepair(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "snap")
	head := gitRepo(t, work, map[string]string{"keep.md": "kept", "big/blob.bin": "large"})
	gitDir := filepath.Join(work, ".git")
	ctx := context.Background()
	blob, err := parity.Git(ctx, gitDir, nil, "rev-parse", "HEAD:big/blob.bin")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(gitDir, "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := repairCmd([]string{"-git-dir", gitDir, "-out", filepath.Join(root, "fixed.git")}, &out); err != nil {
		t.Fatal(err)
	}
	fixed := strings.TrimSpace(out.String())
	if fixed == head {
		t.Fatal("nothing repaired")
	}
	clone := filepath.Join(root, "clone")
	if b, err := exec.Command("git", "clone", "-q", filepath.Join(root, "fixed.git"), clone).CombinedOutput(); err != nil {
		t.Fatalf("clone the repaired repository: %v\n%s", err, b)
	}
	got, err := os.ReadFile(filepath.Join(clone, "big", "blob.bin"))
	if err != nil || !strings.Contains(string(got), "placeholder") {
		t.Fatalf("placeholder: %q %v", got, err)
	}
	msg, err := parity.Git(ctx, filepath.Join(root, "fixed.git"), nil, "log", "-1", "--format=%B")
	if err != nil || !strings.Contains(msg, head) || !strings.Contains(msg, "big/blob.bin") {
		t.Fatalf("message %q %v", msg, err)
	}
	// A complete snapshot needs no repair.
	whole := filepath.Join(root, "whole")
	whead := gitRepo(t, whole, map[string]string{"a": "b"})
	out.Reset()
	if err := repairCmd([]string{"-git-dir", filepath.Join(whole, ".git"), "-out", filepath.Join(root, "unused.git")}, &out); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out.String()) != whead {
		t.Fatalf("complete snapshot: %s", out.String())
	}
	if _, err := os.Stat(filepath.Join(root, "unused.git")); err == nil {
		t.Error("a complete snapshot was copied")
	}
}
