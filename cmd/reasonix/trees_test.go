package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// Trees as the world ships them (issue 23), through the fake GitHub and the
// real binary: links to folders, git submodules, refusals remembered.

// installedFile reads a file of an installed plugin.
func installedFile(t *testing.T, home, plugin, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "plugins", plugin, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatalf("%s/%s: %v", plugin, rel, err)
	}
	return string(b)
}

// A marketplace with a plugin whose skills link to a shared folder (through
// a chain), a tool-config folder linking to them outside every plugin, a
// link escaping the tree outside every plugin, and a plugin holding a
// cycle: the first installs with the linked skills as files, the cycle
// refuses its own plugin by name and nothing else; git and the archive
// (REASONIX_GIT=off) give the same digests.
func TestFolderLinksFromTheBinary(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	gh.CreateRepo("acme", "links").Commit("main", merge(
		prefixTree("plugins/linked", pluginTree("linked")),
		prefixTree("plugins/plain", pluginTree("plain")),
		prefixTree("plugins/loop", pluginTree("loop")),
		map[string]string{
			".claude-plugin/marketplace.json": `{"name":"links","owner":{"name":"o"},"plugins":[
				{"name":"linked","source":"./plugins/linked"},
				{"name":"plain","source":"./plugins/plain"},
				{"name":"loop","source":"./plugins/loop"}]}`,
			"shared/skills/lint/SKILL.md":    "---\ndescription: lint\n---\n",
			"shared/all":                     fakegithub.Symlink("skills"),
			"plugins/linked/skills/shared":   fakegithub.Symlink("../../../shared/all"),
			".cursor/skills":                 fakegithub.Symlink("../shared/skills"),
			"scripts/escape":                 fakegithub.Symlink("../../../../etc"),
			"plugins/loop/skills/self/again": fakegithub.Symlink(".."),
		}))
	digests := map[string]string{}
	for _, gitOff := range []bool{false, true} {
		home := t.TempDir()
		env := gh.Env()
		if gitOff {
			env = append(env, "REASONIX_GIT=off")
		}
		r := runBinary(t, home, env, "plugin", "install", "https://github.com/acme/links", "--yes")
		acts := actionsOf(t, r)
		if acts["linked"]["status"] != "installed" || acts["plain"]["status"] != "installed" {
			t.Fatalf("gitOff=%v: exit %d\n%s\n%s", gitOff, r.code, r.stdout, r.stderr)
		}
		if acts["loop"]["status"] != "blocked" || acts["loop"]["errorCode"] != "install.unsafe_archive" ||
			!strings.Contains(acts["loop"]["error"].(string), "plugins/loop/skills/self/again") || !strings.Contains(acts["loop"]["error"].(string), "cycle") {
			t.Fatalf("gitOff=%v: loop: %v", gitOff, acts["loop"])
		}
		if got := installedFile(t, home, "linked", "skills/shared/lint/SKILL.md"); got != "---\ndescription: lint\n---\n" {
			t.Fatalf("gitOff=%v: linked skill %q", gitOff, got)
		}
		if info, err := os.Lstat(filepath.Join(home, "plugins", "linked", "skills", "shared")); err != nil || !info.IsDir() {
			t.Fatalf("gitOff=%v: the link is not a folder in the installed copy: %v %v", gitOff, info, err)
		}
		key := "git"
		if gitOff {
			key = "archive"
		}
		digests[key] = acts["linked"]["contentDigest"].(string)
	}
	if digests["git"] != digests["archive"] {
		t.Errorf("digests differ: %v", digests)
	}
}

// A plugin with a submodule (relative URL) holding one of its own is
// installed with their files, lists both with URL and commit, and matches
// the digest of a `git clone --recurse-submodules` checkout; a folder
// inside the submodule installs from a tree URL; an offline re-plan gives
// the same planId; a submodule whose host is down blocks its plugin with
// the URL named.
func TestSubmodulesFromTheBinary(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	inner := gh.CreateRepo("acme", "inner").Commit("main", map[string]string{"deep/DEEP.md": "deep\n"})
	lib := gh.CreateRepo("acme", "lib").Commit("main", merge(prefixTree("plugin", pluginTree("libplugin")), map[string]string{
		"skills/lib/SKILL.md": "---\ndescription: lib\n---\n",
		".gitmodules":         "[submodule \"inner\"]\n\tpath = vendor/inner\n\turl = ../inner.git\n",
		"vendor/inner":        fakegithub.Gitlink(inner),
	}))
	tools := gh.CreateRepo("acme", "tools")
	head := tools.Commit("main", merge(pluginTree("tools"), map[string]string{
		".gitmodules": "[submodule \"lib\"]\n\tpath = vendor/lib\n\turl = ../lib.git\n",
		"vendor/lib":  fakegithub.Gitlink(lib),
		"skills/lib":  fakegithub.Symlink("../vendor/lib/skills/lib"),
	}))
	home := t.TempDir()
	env := gh.Env()

	r := runBinary(t, home, env, "plugin", "install", "https://github.com/acme/tools", "--dry-run")
	plan := r.json(t)
	acts := actionsOf(t, r)
	subs, _ := acts["tools"]["submodules"].([]any)
	if r.code != 0 || len(subs) != 2 {
		t.Fatalf("exit %d, submodules %v\n%s\n%s", r.code, subs, r.stdout, r.stderr)
	}
	first, second := subs[0].(map[string]any), subs[1].(map[string]any)
	if first["path"] != "vendor/lib" || first["url"] != "https://github.com/acme/lib" || first["commit"] != lib ||
		second["path"] != "vendor/lib/vendor/inner" || second["url"] != "https://github.com/acme/inner" || second["commit"] != inner {
		t.Fatalf("submodules %v", subs)
	}
	off := runBinary(t, home, env, "plugin", "install", "https://github.com/acme/tools/tree/"+head, "--dry-run", "--offline")
	if off.code != 0 || actionsOf(t, off)["tools"]["contentDigest"] != acts["tools"]["contentDigest"] {
		t.Fatalf("offline: exit %d\n%s\n%s", off.code, off.stdout, off.stderr)
	}
	if pid := plan["planId"]; pid == "" {
		t.Fatal("no planId")
	}

	r = runBinary(t, home, env, "plugin", "install", "https://github.com/acme/tools", "--yes")
	if r.code != 0 {
		t.Fatalf("install: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := installedFile(t, home, "tools", "vendor/lib/vendor/inner/deep/DEEP.md"); got != "deep\n" {
		t.Fatalf("nested submodule file %q", got)
	}
	if got := installedFile(t, home, "tools", "skills/lib/SKILL.md"); got != "---\ndescription: lib\n---\n" {
		t.Fatalf("linked skill %q", got)
	}
	checkout := filepath.Join(t.TempDir(), "clone")
	if out, err := gitCommand("clone", "-q", "--recurse-submodules", gh.URL+"/acme/tools.git", checkout); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	d := runBinary(t, home, nil, "plugin", "install", checkout, "--dry-run", "--replace")
	if got, want := actionsOf(t, d)["tools"]["contentDigest"], acts["tools"]["contentDigest"]; got != want {
		t.Errorf("a recursive clone has digest %v, the plan %v", got, want)
	}

	// A folder inside the submodule, from a tree URL.
	r = runBinary(t, t.TempDir(), env, "plugin", "install", "https://github.com/acme/tools/tree/"+head+"/vendor/lib/plugin", "--dry-run")
	if r.code != 0 || actionsOf(t, r)["libplugin"]["status"] != "ready" {
		t.Fatalf("inside the submodule: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// A submodule whose host is down.
	down := gh.CreateRepo("acme", "down")
	down.Commit("main", merge(pluginTree("down"), map[string]string{
		".gitmodules": "[submodule \"x\"]\n\tpath = vendor/x\n\turl = https://git.down.example.test/team/x.git\n",
		"vendor/x":    fakegithub.Gitlink(strings.Repeat("c", 40)),
	}))
	r = runBinary(t, t.TempDir(), append(env, "REASONIX_URL_REWRITE=https://git.down.example.test/=http://127.0.0.1:1/"),
		"plugin", "install", "https://github.com/acme/down", "--dry-run")
	if r.code == 0 || !strings.Contains(r.stdout, "https://git.down.example.test/team/x.git") || !strings.Contains(r.stdout, `vendor/x`) {
		t.Fatalf("host down: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// gitCommand runs git isolated from the user's configuration.
func gitCommand(args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	return cmd.CombinedOutput()
}

// A refused repository (unsafe content, or over the budget) is remembered:
// the warm re-plan sends no request at all to the fake GitHub, and
// --refresh downloads it again.
func TestRefusalRememberedFromTheBinary(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	evil := gh.CreateRepo("acme", "evil").Commit("main", merge(pluginTree("evil"), map[string]string{
		"skills/s/leak": fakegithub.Symlink("../../../../../etc/passwd"),
	}))
	home := t.TempDir()
	src := "https://github.com/acme/evil/tree/" + evil
	for i, want := range []string{"", "remembered"} {
		gh.ResetCounts()
		r := runBinary(t, home, gh.Env(), "plugin", "install", src, "--dry-run")
		if r.code != 1 || r.json(t)["errorCode"] != "install.unsafe_archive" || !strings.Contains(r.stdout, want) {
			t.Fatalf("plan %d: exit %d\n%s\n%s", i, r.code, r.stdout, r.stderr)
		}
		c := gh.Counts()
		t.Logf("plan %d: %d requests (%d content)", i, c.Total, c.Content())
		if i == 1 && c.Total != 0 {
			t.Fatalf("the warm re-plan sent %d requests: %+v", c.Total, c)
		}
	}
	gh.ResetCounts()
	r := runBinary(t, home, gh.Env(), "plugin", "install", src, "--dry-run", "--refresh")
	if r.code != 1 || gh.Counts().Content() == 0 {
		t.Fatalf("--refresh: exit %d, counts %+v\n%s", r.code, gh.Counts(), r.stdout)
	}
}
