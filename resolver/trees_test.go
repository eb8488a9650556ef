package resolver

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver/host"
)

// candidateByName returns the candidates of f by marketplace entry name.
func candidateByName(f *Fetched) map[string]Candidate {
	out := map[string]Candidate{}
	for _, c := range f.Candidates {
		out[c.Name] = c
	}
	return out
}

func readAll(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree, err := plugind.ScanTree(dir, plugind.DefaultBudget)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range tree.Files {
		b, err := os.ReadFile(f.Source)
		if err != nil {
			t.Fatal(err)
		}
		out[f.Path] = string(b)
	}
	return out
}

// linkedMarketplace is a marketplace as the world ships them: a plugin
// whose skills folder links to a shared one, a tool-config folder linking
// to the same skills outside every plugin, a link escaping the tree outside
// every plugin, and a plugin whose folder link is a cycle.
func linkedMarketplace(r *fakegithub.Repo) string {
	return r.Commit("main", merge(
		prefixed("plugins/a", pluginTree("a")),
		prefixed("plugins/b", pluginTree("b")),
		prefixed("plugins/c", pluginTree("c")),
		map[string]string{
			".claude-plugin/marketplace.json": `{"name":"links","owner":{"name":"o"},"plugins":[
				{"name":"a","source":"./plugins/a"},
				{"name":"b","source":"./plugins/b"},
				{"name":"c","source":"./plugins/c"}]}`,
			"shared/skills/lint/SKILL.md":    "---\ndescription: lint\n---\n",
			"shared/skills/fmt/SKILL.md":     "---\ndescription: fmt\n---\n",
			"shared/skills/fmt/notes.md":     fakegithub.Symlink("../lint/SKILL.md"),
			"plugins/a/skills/shared":        fakegithub.Symlink("../../../shared/skills"),
			"plugins/a/docs":                 fakegithub.Symlink("../../shared"),
			".cursor/skills":                 fakegithub.Symlink("../shared/skills"),
			"tools/escape":                   fakegithub.Symlink("../../../etc"),
			"plugins/c/skills/loop/back":     fakegithub.Symlink("../.."),
			"plugins/c/skills/loop/SKILL.md": "x",
		}))
}

// Links to folders inside a plugin are copies of the folders they lead to,
// with the same digest over git and over the archive; a link outside every
// plugin (even one escaping the tree) refuses nothing; a cycle refuses its
// own plugin, by name, and no other.
func TestFolderLinksOverBothTransports(t *testing.T) {
	t.Parallel()
	digests := map[string]map[string]string{}
	for _, transport := range []string{"git", "archive"} {
		e := newEnv(t, envOpts{gitOff: transport == "archive"})
		linkedMarketplace(e.gh.CreateRepo("acme", "links"))
		f, err := e.resolve("https://github.com/acme/links")
		if err != nil {
			t.Fatalf("%s: %v", transport, err)
		}
		cands := candidateByName(f)
		a, b, c := cands["a"], cands["b"], cands["c"]
		if a.Err != nil || b.Err != nil {
			t.Fatalf("%s: a %v, b %v", transport, a.Err, b.Err)
		}
		mustCode(t, c.Err, plugind.CodeUnsafeArchive, nil, `plugins/c/skills/loop/back`)
		if !strings.Contains(c.Err.Error(), "cycle") {
			t.Errorf("%s: c: %v", transport, c.Err)
		}
		files := readAll(t, a.Dir)
		for p, want := range map[string]string{
			"skills/shared/lint/SKILL.md": "---\ndescription: lint\n---\n",
			"skills/shared/fmt/notes.md":  "---\ndescription: lint\n---\n",
			"docs/skills/fmt/SKILL.md":    "---\ndescription: fmt\n---\n",
		} {
			if files[p] != want {
				t.Errorf("%s: a/%s = %q", transport, p, files[p])
			}
		}
		digests[transport] = map[string]string{"a": a.Digest, "b": b.Digest}

		// Warm: the refusals are remembered, the rest is in the store; the
		// only request is the branch's conditional one.
		e.reset()
		f, err = e.resolve("https://github.com/acme/links")
		if err != nil {
			t.Fatal(err)
		}
		cands = candidateByName(f)
		if cands["a"].Digest != a.Digest || cands["b"].Digest != b.Digest || cands["c"].Err == nil {
			t.Errorf("%s: warm re-plan: %+v", transport, cands)
		}
		if c := e.gh.Counts(); c.Content() != 0 || c.Total > 1 {
			t.Errorf("%s: warm re-plan sent %+v", transport, c)
		}
	}
	if digests["git"]["a"] != digests["archive"]["a"] || digests["git"]["b"] != digests["archive"]["b"] {
		t.Errorf("digests differ: %v", digests)
	}
}

// A refused tree is a negative answer: a warm re-plan sends nothing for
// it, --refresh asks again, and after the TTL it is downloaded again.
func TestRefusalRemembered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		files  map[string]string
		budget plugind.Budget
		code   plugind.Code
	}{
		{"unsafe", merge(pluginTree("bad"), map[string]string{"skills/evil": fakegithub.Symlink("../../../../etc/passwd")}), plugind.Budget{}, plugind.CodeUnsafeArchive},
		{"over budget", merge(pluginTree("big"), map[string]string{"big.bin": strings.Repeat("z", 64<<10)}), plugind.Budget{MaxBytes: 32 << 10, MaxFiles: 100}, plugind.CodeBudgetExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, transport := range []string{"git", "archive"} {
				e := newEnv(t, envOpts{gitOff: transport == "archive", budget: tc.budget})
				sha := e.gh.CreateRepo("acme", "bad").Commit("main", prefixed("plugin", tc.files))
				src := "https://github.com/acme/bad/tree/" + sha + "/plugin"
				_, err := e.resolve(src)
				mustCode(t, err, tc.code, nil, "")
				if e.content() == 0 {
					t.Fatalf("%s: the cold plan downloaded nothing", transport)
				}
				e.reset()
				_, err = e.resolve(src)
				mustCode(t, err, tc.code, nil, "remembered")
				if n := e.requests(); n != 0 {
					t.Errorf("%s: the warm re-plan sent %d requests: %+v", transport, n, e.gh.Counts())
				}
				_, err = e.resolve(src, func(r *Request) { r.Refresh = true })
				mustCode(t, err, tc.code, nil, "")
				if e.content() == 0 {
					t.Errorf("%s: --refresh did not download again", transport)
				}
				e.reset()
				e.now = e.now.Add(2 * time.Hour)
				_, err = e.resolve(src)
				mustCode(t, err, tc.code, nil, "")
				if e.content() == 0 {
					t.Errorf("%s: an expired refusal was believed", transport)
				}
			}
		})
	}
}

// submoduleRepos makes a parent whose plugin holds a submodule (relative
// URL) that holds one of its own, and a link from the plugin into the
// submodule.
func submoduleRepos(t *testing.T, e *env) (parent, lib, inner string) {
	t.Helper()
	inner = e.gh.CreateRepo("acme", "inner").Commit("main", map[string]string{"deep/DEEP.md": "deep\n"})
	lib = e.gh.CreateRepo("acme", "lib").Commit("main", map[string]string{
		"skills/lib/SKILL.md": "---\ndescription: from lib\n---\n",
		"bin/tool":            fakegithub.Executable("#!/bin/sh\n"),
		".gitmodules":         "[submodule \"inner\"]\n\tpath = vendor/inner\n\turl = ../inner.git\n",
		"vendor/inner":        fakegithub.Gitlink(inner),
	})
	parent = e.gh.CreateRepo("acme", "tools").Commit("main", merge(pluginTree("tools"), map[string]string{
		".gitmodules":  "[submodule \"lib\"]\n\tpath = vendor/lib\n\turl = ../lib.git\n",
		"vendor/lib":   fakegithub.Gitlink(lib),
		"skills/lib":   fakegithub.Symlink("../vendor/lib/skills/lib"),
		"docs/inner":   fakegithub.Symlink("../vendor/lib/vendor/inner/deep"),
		"docs/read.md": "read\n",
	}))
	return parent, lib, inner
}

// Submodules are fetched at the commit their gitlink pins, nested ones too,
// and listed; the digest covers them, and is the same over git, over the
// archive, and as a `git clone --recurse-submodules` checkout's; a path
// inside a submodule resolves; an offline re-plan lists them from the
// cache.
func TestSubmodules(t *testing.T) {
	t.Parallel()
	var digests []string
	for _, transport := range []string{"git", "archive"} {
		e := newEnv(t, envOpts{gitOff: transport == "archive"})
		parent, lib, inner := submoduleRepos(t, e)
		f, err := e.resolve("https://github.com/acme/tools")
		if err != nil {
			t.Fatalf("%s: %v", transport, err)
		}
		c := f.Candidates[0]
		want := []plugind.Submodule{
			{Path: "vendor/lib", URL: "https://github.com/acme/lib", Commit: lib},
			{Path: "vendor/lib/vendor/inner", URL: "https://github.com/acme/inner", Commit: inner},
		}
		if len(c.Submodules) != 2 || c.Submodules[0] != want[0] || c.Submodules[1] != want[1] {
			t.Fatalf("%s: submodules %+v", transport, c.Submodules)
		}
		files := readAll(t, c.Dir)
		if files["vendor/lib/vendor/inner/deep/DEEP.md"] != "deep\n" || files["skills/lib/SKILL.md"] == "" || files["docs/inner/DEEP.md"] != "deep\n" {
			t.Fatalf("%s: files %v", transport, files)
		}
		digests = append(digests, c.Digest)
		if transport == "archive" && e.gh.RepoCounts("acme", "tools").APIContents != 1 {
			t.Errorf("archive: contents requests %+v", e.gh.RepoCounts("acme", "tools"))
		}

		// A path inside a submodule.
		sub, err := e.resolve("https://github.com/acme/tools/tree/" + parent + "/vendor/lib/skills")
		if err != nil {
			t.Fatalf("%s: path inside the submodule: %v", transport, err)
		}
		if got := readAll(t, sub.Candidates[0].Dir); got["lib/SKILL.md"] == "" || len(sub.Candidates[0].Submodules) != 1 {
			t.Fatalf("%s: inside the submodule: %v %+v", transport, got, sub.Candidates[0].Submodules)
		}

		// Offline: the same digest and the same list, nothing sent.
		e.reset()
		off, err := e.resolve("https://github.com/acme/tools/tree/"+parent, offline)
		if err != nil {
			t.Fatalf("%s: offline: %v", transport, err)
		}
		if oc := off.Candidates[0]; oc.Digest != c.Digest || len(oc.Submodules) != 2 || e.requests() != 0 {
			t.Fatalf("%s: offline %s %+v after %d requests", transport, oc.Digest, oc.Submodules, e.requests())
		}

		if transport == "git" {
			checkout := cloneRecursive(t, e.gh.URL+"/acme/tools.git")
			d, _, err := plugind.TreeDigest(checkout, plugind.DefaultBudget)
			if err != nil {
				t.Fatal(err)
			}
			if d != c.Digest {
				t.Errorf("git clone --recurse-submodules has digest %s, the plan %s", d, c.Digest)
			}
		}
	}
	if digests[0] != digests[1] {
		t.Errorf("git %s, archive %s", digests[0], digests[1])
	}
}

// cloneRecursive checks url out as Claude does, submodules and all.
func cloneRecursive(t *testing.T, url string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	cmd := exec.Command("git", "-c", "protocol.file.allow=never", "clone", "-q", "--recurse-submodules", url, dir)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	return dir
}

// A submodule on another host comes through that host's transport (and
// REASONIX_URL_REWRITE); one whose host is down fails its plugin with its
// URL named, and nothing else; one whose URL is not a source is refused.
func TestSubmoduleHosts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	ext := e.plain.CreateRepoAt("team/ext").Commit("main", map[string]string{"EXT.md": "ext\n"})
	e.gh.CreateRepo("acme", "lib").Commit("main", map[string]string{"LIB.md": "lib\n"})
	mono := e.gh.CreateRepo("acme", "mono").Commit("main", merge(
		prefixed("plugins/ok", pluginTree("ok")),
		prefixed("plugins/ext", pluginTree("ext")),
		prefixed("plugins/down", pluginTree("down")),
		prefixed("plugins/local", pluginTree("local")),
		prefixed("plugins/creds", pluginTree("creds")),
		prefixed("plugins/gone", pluginTree("gone")),
		map[string]string{
			".claude-plugin/marketplace.json": `{"name":"mono","owner":{"name":"o"},"plugins":[
				{"name":"ok","source":"./plugins/ok"},
				{"name":"ext","source":"./plugins/ext"},
				{"name":"down","source":"./plugins/down"},
				{"name":"local","source":"./plugins/local"},
				{"name":"creds","source":"./plugins/creds"},
				{"name":"gone","source":"./plugins/gone"}]}`,
			".gitmodules": "[submodule \"ext\"]\n\tpath = plugins/ext/vendor\n\turl = https://git.example.test/team/ext.git\n" +
				"[submodule \"down\"]\n\tpath = plugins/down/vendor\n\turl = https://down.example.test/team/gone.git\n" +
				"[submodule \"local\"]\n\tpath = plugins/local/vendor\n\turl = file:///srv/git/secret.git\n" +
				"[submodule \"creds\"]\n\tpath = plugins/creds/vendor\n\turl = https://bot:hunter2secret@git.example.test/team/ext.git\n" +
				"[submodule \"gone\"]\n\tpath = plugins/gone/vendor\n\turl = ../lib.git\n",
			"plugins/ext/vendor":   fakegithub.Gitlink(ext),
			"plugins/down/vendor":  fakegithub.Gitlink(strings.Repeat("d", 40)),
			"plugins/local/vendor": fakegithub.Gitlink(strings.Repeat("e", 40)),
			"plugins/creds/vendor": fakegithub.Gitlink(ext),
			"plugins/gone/vendor":  fakegithub.Gitlink(strings.Repeat("f", 40)),
		}))
	f, err := e.resolve("https://github.com/acme/mono")
	if err != nil {
		t.Fatal(err)
	}
	cands := candidateByName(f)
	if cands["ok"].Err != nil || cands["ext"].Err != nil {
		t.Fatalf("ok %v, ext %v", cands["ok"].Err, cands["ext"].Err)
	}
	if got := readAll(t, cands["ext"].Dir); got["vendor/EXT.md"] != "ext\n" {
		t.Fatalf("ext: %v", got)
	}
	if s := cands["ext"].Submodules; len(s) != 1 || s[0].URL != "https://git.example.test/team/ext.git" || s[0].Commit != ext {
		t.Fatalf("ext submodules %+v", s)
	}
	mustCode(t, cands["down"].Err, plugind.CodeSourceUnreadable, nil, "https://down.example.test/team/gone.git")
	mustCode(t, cands["local"].Err, plugind.CodeInvalidSource, nil, "file://")
	mustCode(t, cands["creds"].Err, plugind.CodeInvalidSource, nil, "credentials")
	if strings.Contains(cands["creds"].Err.Error(), "hunter2secret") {
		t.Errorf("the credential leaked: %v", cands["creds"].Err)
	}
	// A commit its submodule's repository does not have: the submodule's
	// not-found, never taken for the parent's own.
	mustCode(t, cands["gone"].Err, plugind.CodeNotFound, nil, "https://github.com/acme/lib")
	if errors.Is(cands["gone"].Err, host.ErrCommitNotFound) || errors.Is(cands["gone"].Err, host.ErrUnreachable) {
		t.Errorf("the submodule's not-found passes for the parent's: %v", cands["gone"].Err)
	}
	if _, err := e.resolve("https://github.com/acme/mono/tree/" + mono + "/plugins/ok"); err != nil {
		t.Errorf("the parent commit after its submodule was not found: %v", err)
	}
}

// Submodules of submodules are followed three levels deep; a fourth level,
// like a cycle of repositories naming each other, is refused saying so.
func TestSubmoduleDepth(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	// chain makes levels repositories, each but the last holding the next
	// as a submodule, and returns the first.
	chain := func(prefix string, levels int) string {
		sha := e.gh.CreateRepo("acme", prefix+"-last").Commit("main", map[string]string{"LAST.md": "last\n"})
		for i := levels - 1; i >= 0; i-- {
			files := map[string]string{
				".gitmodules": "[submodule \"next\"]\n\tpath = next\n\turl = ../" + prefix + "-" + nextName(i+1, levels) + ".git\n",
				"next":        fakegithub.Gitlink(sha),
			}
			if i == 0 {
				files = merge(files, pluginTree(prefix))
			}
			sha = e.gh.CreateRepo("acme", prefix+"-"+nextName(i, levels)).Commit("main", files)
		}
		return sha
	}
	chain("ok", 3)
	f, err := e.resolve("https://github.com/acme/ok-0")
	if err != nil {
		t.Fatalf("three levels: %v", err)
	}
	if files := readAll(t, f.Candidates[0].Dir); files["next/next/next/LAST.md"] != "last\n" || len(f.Candidates[0].Submodules) != 3 {
		t.Fatalf("three levels: %v %+v", files, f.Candidates[0].Submodules)
	}
	chain("deep", 4)
	_, err = e.resolve("https://github.com/acme/deep-0")
	mustCode(t, err, plugind.CodeBudgetExceeded, nil, "nested more than 3 deep")
}

// nextName names level i of a chain of levels repositories ("last" for the
// one past the end).
func nextName(i, levels int) string {
	if i == levels {
		return "last"
	}
	return string(rune('0' + i))
}
