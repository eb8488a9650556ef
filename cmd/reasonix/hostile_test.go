package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// hostileSetup is a home with one plugin installed (so its registry is not
// empty), a fake GitHub, and a folder outside the home that hostile trees
// aim at.
type hostileSetup struct {
	home, outside string
	gh            *fakegithub.Server
	registry      []byte
	env           []string
}

func newHostile(t *testing.T, opts ...fakegithub.Option) *hostileSetup {
	t.Helper()
	h := &hostileSetup{home: t.TempDir(), outside: t.TempDir(), gh: fakegithub.New(t, opts...)}
	h.env = h.gh.Env()
	keep := writePluginNamed(t, filepath.Join(t.TempDir(), "keep"), "keep", "1.0.0")
	if r := run(t, h.home, nil, "plugin", "install", keep, "--yes"); r.code != 0 {
		t.Fatalf("install keep: %d %s %s", r.code, r.stdout, r.stderr)
	}
	var err error
	if h.registry, err = os.ReadFile(filepath.Join(h.home, "plugin-packages.json")); err != nil {
		t.Fatal(err)
	}
	return h
}

// refused runs a command that must be refused with code, and checks that
// nothing was written outside the home and the registry is byte-identical.
func (h *hostileSetup) refused(t *testing.T, env []string, code string, args ...string) result {
	t.Helper()
	r := run(t, h.home, append(append([]string{}, h.env...), env...), args...)
	if r.code != 1 {
		t.Fatalf("%v: exit %d, want 1\nstdout %s\nstderr %s", args, r.code, r.stdout, r.stderr)
	}
	if got := r.json(t)["errorCode"]; got != code {
		t.Fatalf("%v: errorCode %v, want %s: %s", args, got, code, r.stdout)
	}
	h.unchanged(t)
	return r
}

func (h *hostileSetup) unchanged(t *testing.T) {
	t.Helper()
	if ents, _ := os.ReadDir(h.outside); len(ents) != 0 {
		t.Fatalf("written outside the home: %v", ents)
	}
	reg, err := os.ReadFile(filepath.Join(h.home, "plugin-packages.json"))
	if err != nil || string(reg) != string(h.registry) {
		t.Fatalf("the registry changed: %v\n%s", err, reg)
	}
	ents, _ := os.ReadDir(filepath.Join(h.home, "plugins"))
	if len(ents) != 1 || ents[0].Name() != "keep" {
		t.Fatalf("plugins/ = %v", ents)
	}
}

var transports = []struct {
	name string
	env  []string
	set  func(*fakegithub.Server)
}{
	{name: "git"},
	{name: "git off", env: []string{"REASONIX_GIT=off"}},
	{name: "git refused", set: func(s *fakegithub.Server) { s.RefuseGit(true) }},
}

// Finding 1 and 4 of the hardening issue: a tree git would never make — a
// symlink "a" beside a folder "a/" (writes through the link at plan time
// before), names that collide by case or Unicode folding — is refused with
// install.unsafe_archive on every transport, during a plain --dry-run and
// with --yes, as a source and as a marketplace entry, and nothing is
// written anywhere.
func TestHostileTreesRefusedOnEveryTransport(t *testing.T) {
	t.Parallel()
	type raw = fakegithub.RawEntry
	trees := map[string]func(outside string) []raw{
		"symlink beside folder": func(outside string) []raw {
			return []raw{
				{Mode: "120000", Name: "a", Content: outside},
				{Mode: "040000", Name: "a", Entries: []raw{{Mode: "100644", Name: "pwned", Content: "x"}}},
				{Mode: "040000", Name: ".claude-plugin", Entries: []raw{{Mode: "100644", Name: "plugin.json", Content: `{"name":"evil"}`}}},
			}
		},
		"case collision": func(string) []raw {
			return []raw{{Mode: "100644", Name: "README.md", Content: "1"}, {Mode: "100644", Name: "readme.md", Content: "2"}}
		},
		"kelvin sign": func(string) []raw {
			return []raw{{Mode: "100644", Name: "k.md", Content: "1"}, {Mode: "100644", Name: "\u212a.md", Content: "2"}}
		},
	}
	for treeName, tree := range trees {
		for _, tr := range transports {
			t.Run(treeName+"/"+tr.name, func(t *testing.T) {
				t.Parallel()
				h := newHostile(t)
				if tr.set != nil {
					tr.set(h.gh)
				}
				repo := h.gh.CreateRepo("evil", "tools")
				repo.Commit("main", map[string]string{"x": "1"})
				sha := repo.CommitRawTree("main", tree(h.outside))
				for _, src := range []string{"git:github.com/evil/tools", "https://github.com/evil/tools/tree/" + sha} {
					h.refused(t, tr.env, "install.unsafe_archive", "plugin", "install", src, "--dry-run")
					h.refused(t, tr.env, "install.unsafe_archive", "plugin", "install", src, "--yes")
				}
				// As one entry of a marketplace: that entry is blocked, the
				// other installs.
				market := h.gh.CreateRepo("evil", "market")
				market.Commit("main", map[string]string{
					".claude-plugin/marketplace.json": `{"name":"m","owner":{"name":"o"},"plugins":[
						{"name":"evil","source":{"source":"url","url":"https://github.com/evil/tools","sha":"` + sha + `"}},
						{"name":"fine","source":"./fine"}]}`,
					"fine/.claude-plugin/plugin.json": `{"name":"fine"}`,
					"fine/skills/s/SKILL.md":          "---\ndescription: fine\n---\n",
				})
				r := run(t, h.home, append(append([]string{}, h.env...), tr.env...), "plugin", "install", "https://github.com/evil/market", "--dry-run")
				acts := actionsOf(t, r)
				if acts["evil"]["errorCode"] != "install.unsafe_archive" || acts["fine"]["status"] != "ready" {
					t.Fatalf("marketplace: %v\n%s", acts, r.stderr)
				}
				h.unchanged(t)
			})
		}
	}
}

// Finding 2: a pin no branch or tag reaches — on GitHub, any commit pushed
// to any fork — is refused on every transport, whether or not the server
// would serve it, as a tree URL and as github/url entries.
func TestUnreachablePinsRefused(t *testing.T) {
	t.Parallel()
	for _, tr := range append(transports, struct {
		name string
		env  []string
		set  func(*fakegithub.Server)
	}{name: "git serving any commit", set: func(s *fakegithub.Server) { s.ServeUnreachableWants(true) }}) {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := newHostile(t)
			if tr.set != nil {
				tr.set(h.gh)
			}
			repo := h.gh.CreateRepo("acme", "tools")
			repo.Commit("main", merge(pluginTree("tools"), map[string]string{"more": "x"}))
			hidden := repo.CommitUnreachable("", pluginTree("forked"))
			r := h.refused(t, tr.env, "install.not_found", "plugin", "install", "https://github.com/acme/tools/tree/"+hidden, "--yes")
			if !strings.Contains(r.stdout, "not on any branch or tag") {
				t.Fatalf("the refusal does not say why: %s", r.stdout)
			}
			market := h.gh.CreateRepo("acme", "market")
			market.Commit("main", map[string]string{".claude-plugin/marketplace.json": `{"name":"m","owner":{"name":"o"},"plugins":[
				{"name":"gh","source":{"source":"github","repo":"acme/tools","sha":"` + hidden + `"}},
				{"name":"url","source":{"source":"url","url":"https://github.com/acme/tools.git","sha":"` + hidden + `"}},
				{"name":"gs","source":{"source":"git-subdir","url":"acme/tools","path":".","sha":"` + hidden + `"}}]}`})
			r = run(t, h.home, append(append([]string{}, h.env...), tr.env...), "plugin", "install", "https://github.com/acme/market", "--yes")
			for name, a := range actionsOf(t, r) {
				if a["status"] != "blocked" || a["errorCode"] != "install.not_found" {
					t.Errorf("%s: %v", name, a)
				}
			}
			h.unchanged(t)
			if n := h.gh.RepoCounts("acme", "tools").Archive; n != 0 {
				t.Errorf("the unreachable commit was downloaded as an archive %d times", n)
			}
		})
	}
}

// Finding 5: a refused source is echoed without its credentials, on stdout
// (the JSON) and stderr, from the command line and from a marketplace.
func TestCredentialsNeverEchoed(t *testing.T) {
	t.Parallel()
	h := newHostile(t)
	for _, src := range []string{
		"https://alice:s3cr3t-value@github.com/acme/tools",
		"https://github.com/acme/tools?access_token=s3cr3t-value",
		"https://s3cr3t-value@git.example.test/team/tools.git",
		"https://git.example.test/team/tools.git?private_token=s3cr3t-value",
		"git:github.com/acme/tools?token=s3cr3t-value",
		"ssh://alice:s3cr3t-value@github.com/acme/tools",
	} {
		r := h.refused(t, nil, "install.invalid_source", "plugin", "install", src, "--dry-run")
		if strings.Contains(r.stdout+r.stderr, "s3cr3t-value") {
			t.Errorf("%s: the credential is echoed:\n%s\n%s", src, r.stdout, r.stderr)
		}
	}
	market := h.gh.CreateRepo("acme", "market")
	market.Commit("main", map[string]string{".claude-plugin/marketplace.json": `{"name":"m","owner":{"name":"o"},"plugins":[
		{"name":"a","source":{"source":"url","url":"https://bob:s3cr3t-value@github.com/acme/x","sha":"0123456789abcdef0123456789abcdef01234567"}},
		{"name":"b","source":"https://github.com/acme/x?access_token=s3cr3t-value"},
		{"name":"c","source":{"source":"git-subdir","url":"https://gitlab.example.test/x.git?private_token=s3cr3t-value","path":"p"}}]}`})
	r := run(t, h.home, h.env, "plugin", "install", "https://github.com/acme/market", "--dry-run")
	if strings.Contains(r.stdout+r.stderr, "s3cr3t-value") {
		t.Errorf("a marketplace entry's credential is echoed:\n%s\n%s", r.stdout, r.stderr)
	}
	if len(actionsOf(t, r)) != 3 {
		t.Errorf("actions: %s", r.stdout)
	}
}

func actionsOf(t *testing.T, r result) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	acts, _ := r.json(t)["actions"].([]any)
	for _, a := range acts {
		m := a.(map[string]any)
		out[m["name"].(string)] = m
	}
	return out
}

func pluginTree(name string) map[string]string {
	return map[string]string{
		".claude-plugin/plugin.json": `{"name":"` + name + `","version":"1.0.0"}`,
		"skills/s/SKILL.md":          "---\ndescription: " + name + "\n---\n",
	}
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
