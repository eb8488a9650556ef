package resolver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/store"
)

// env is a resolver over a fake GitHub and a fake plain git host, with its
// own store and cache.
type env struct {
	t     *testing.T
	gh    *fakegithub.Server
	plain *fakegithub.Server
	res   *Sources
	st    *store.Store
	db    *cache.DB
	now   time.Time
}

type envOpts struct {
	gitOff bool
	budget plugind.Budget
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	e := &env{t: t, gh: fakegithub.New(t), plain: fakegithub.New(t, fakegithub.WithPlainGit()), now: time.Unix(1_800_000_000, 0)}
	dir := t.TempDir()
	var err error
	e.st, err = store.Open(filepath.Join(dir, "store"), store.Options{Budget: o.budget})
	if err != nil {
		t.Fatal(err)
	}
	e.db, err = cache.OpenWith(context.Background(), filepath.Join(dir, "cache.db"), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.db.Close() })
	// The plain host stands in for git.example.test; anything else goes to
	// a closed port: nothing here may reach the internet.
	rw, err := host.ParseRewrite("https://git.example.test/=" + e.plain.URL + "/ https://=http://127.0.0.1:1/")
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := NewHosts(HostConfig{
		GitHubURL: e.gh.URL, APIURL: e.gh.APIURL, GitOff: o.gitOff, Rewrite: rw,
		Net: host.NetConfig{Timeout: 5 * time.Second, MaxRetryAfter: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.res = New(Config{Store: e.st, Cache: e.db, Hosts: hosts, Budget: o.budget, Now: func() time.Time { return e.now }})
	return e
}

func (e *env) resolve(src string, mod ...func(*Request)) (*Fetched, error) {
	e.t.Helper()
	s, err := source.Parse(src)
	if err != nil {
		e.t.Fatalf("parse %q: %v", src, err)
	}
	req := Request{Source: s}
	for _, m := range mod {
		m(&req)
	}
	return e.res.Resolve(context.Background(), req)
}

func offline(r *Request) { r.Offline = true }

func (e *env) requests() int { return e.gh.Counts().Total + e.plain.Counts().Total }

func (e *env) content() int { return e.gh.Counts().Content() + e.plain.Counts().Content() }

func (e *env) reset() { e.gh.ResetCounts(); e.plain.ResetCounts() }

func pluginTree(name string) map[string]string {
	return map[string]string{
		".claude-plugin/plugin.json": `{"name":"` + name + `","version":"1.0.0"}`,
		"skills/s/SKILL.md":          "---\ndescription: " + name + "\n---\n",
	}
}

func prefixed(prefix string, files map[string]string) map[string]string {
	out := map[string]string{}
	for p, c := range files {
		out[prefix+"/"+p] = c
	}
	return out
}

func mustCode(t *testing.T, err error, code plugind.Code, sentinel error, fragment string) {
	t.Helper()
	if err == nil {
		t.Fatalf("succeeded, want %s", code)
	}
	if plugind.CodeOf(err) != code || (sentinel != nil && !errors.Is(err, sentinel)) || !strings.Contains(err.Error(), fragment) {
		t.Fatalf("error %q (%s), want %s %v saying %q", err, plugind.CodeOf(err), code, sentinel, fragment)
	}
}

func TestGitHubCold304Offline(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	r := e.gh.CreateRepo("acme", "tools")
	head := r.Commit("main", pluginTree("tools"))
	f, err := e.resolve("git:github.com/acme/tools")
	if err != nil {
		t.Fatal(err)
	}
	c := f.Candidates[0]
	if f.Commit != head || c.Commit != head || c.Source.String() != "git:github.com/acme/tools" || c.Digest == "" || f.Transport != "git" {
		t.Fatalf("cold: %+v %+v", f, c)
	}
	e.reset()
	warm, err := e.resolve("git:github.com/acme/tools")
	if err != nil {
		t.Fatal(err)
	}
	if gc := e.gh.Counts(); gc.Total != 1 || gc.APICommits304 != 1 || warm.Candidates[0].Digest != c.Digest || warm.Transport != "store" {
		t.Errorf("warm: counts %+v transport %s", gc, warm.Transport)
	}
	e.reset()
	off, err := e.resolve("git:github.com/acme/tools", offline)
	if err != nil {
		t.Fatal(err)
	}
	if e.requests() != 0 || off.Candidates[0].Digest != c.Digest || off.Commit != head {
		t.Errorf("offline: %d requests, %+v", e.requests(), off)
	}
	if len(off.Warnings) == 0 || !strings.Contains(off.Warnings[0], "as cached") {
		t.Errorf("offline plan does not say how old its ref is: %v", off.Warnings)
	}
}

func TestTreeURLSplitsSlashedRef(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	r := e.gh.CreateRepo("acme", "tools")
	r.Commit("main", pluginTree("x"))
	sha := r.Commit("release/v2", prefixed("plugins/x", pluginTree("x")))
	f, err := e.resolve("https://github.com/acme/tools/tree/release/v2/plugins/x")
	if err != nil {
		t.Fatal(err)
	}
	if f.Ref != "release/v2" || f.Subdir != "plugins/x" || f.Commit != sha {
		t.Fatalf("split: ref %q subdir %q commit %s", f.Ref, f.Subdir, f.Commit)
	}
	off, err := e.resolve("https://github.com/acme/tools/tree/release/v2/plugins/x", offline)
	if err != nil || off.Ref != "release/v2" || off.Candidates[0].Digest != f.Candidates[0].Digest {
		t.Fatalf("offline split: %+v %v", off, err)
	}
}

// A pin that no branch or tag reaches — on GitHub, any commit of any fork —
// is refused on every transport, and the verdict is remembered.
func TestUnreachablePinRefusedOnEveryTransport(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"git", "git serving any id", "git refused", "git off"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOpts{gitOff: mode == "git off"})
			e.gh.ServeUnreachableWants(mode == "git serving any id")
			e.gh.RefuseGit(mode == "git refused")
			r := e.gh.CreateRepo("acme", "tools")
			old := r.Commit("main", pluginTree("tools"))
			r.Commit("main", map[string]string{"more": "x"})
			hidden := r.CommitUnreachable("", pluginTree("evil"))
			src := "https://github.com/acme/tools/tree/" + hidden
			_, err := e.resolve(src)
			mustCode(t, err, plugind.CodeNotFound, host.ErrUnreachable, "not on any branch or tag")
			if n := e.gh.Counts().Archive; n != 0 {
				t.Errorf("the unreachable commit was downloaded (%d archives)", n)
			}
			e.reset()
			_, err = e.resolve(src)
			mustCode(t, err, plugind.CodeNotFound, host.ErrUnreachable, "not on any branch or tag")
			if n := e.requests(); n != 0 {
				t.Errorf("re-plan asked again: %d requests", n)
			}
			// An ancestor of the default branch is fine.
			if _, err := e.resolve("https://github.com/acme/tools/tree/" + old); err != nil {
				t.Errorf("reachable pin: %v", err)
			}
		})
	}
}

// Budgets count what is stored: a plugin folder of a repository far over
// the budget installs when the folder fits, without fetching the rest into
// the store.
func TestFolderOfHugeRepository(t *testing.T) {
	t.Parallel()
	budget := plugind.Budget{MaxBytes: 256 << 10, MaxFiles: 1000}
	for _, gitOff := range []bool{false, true} {
		e := newEnv(t, envOpts{gitOff: gitOff, budget: budget})
		r := e.gh.CreateRepo("acme", "mono")
		r.Commit("main", prefixed("plugins/small", pluginTree("small")))
		sha := r.CommitLargeFile("main", "assets/huge.bin", 2<<20)
		f, err := e.resolve("https://github.com/acme/mono/tree/main/plugins/small")
		if err != nil {
			t.Fatalf("git off %v: %v", gitOff, err)
		}
		if f.Commit != sha {
			t.Errorf("commit %s", f.Commit)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(f.Candidates[0].Dir), "..", "assets")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("git off %v: the rest of the repository was stored: %v", gitOff, err)
		}
		_, err = e.resolve("git:github.com/acme/mono")
		mustCode(t, err, plugind.CodeBudgetExceeded, nil, "budget")
	}
}

func TestGenericGitHost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	r := e.plain.CreateRepoAt("team/tools")
	v12 := r.Commit("main", pluginTree("tools"))
	r.Tag("v1.2", v12)
	head := r.Commit("main", map[string]string{"CHANGELOG.md": "2"})
	f, err := e.resolve("https://git.example.test/team/tools.git#v1.2")
	if err != nil {
		t.Fatal(err)
	}
	if f.Commit != v12 || f.Kind != KindGit || f.Repo != "git.example.test/team/tools" || f.Candidates[0].Source.String() != "https://git.example.test/team/tools.git#v1.2" {
		t.Fatalf("tag: %+v", f)
	}
	f, err = e.resolve("https://git.example.test/team/tools.git")
	if err != nil || f.Commit != head {
		t.Fatalf("HEAD: %+v %v", f, err)
	}
	hidden := r.CommitUnreachable("", pluginTree("evil"))
	_, err = e.resolve("https://git.example.test/team/tools.git#" + hidden)
	mustCode(t, err, plugind.CodeNotFound, host.ErrUnreachable, "not on any branch or tag")
	_, err = e.resolve("https://git.example.test/team/missing.git")
	mustCode(t, err, plugind.CodeNotFound, host.ErrRepoNotFound, "repository not found")
}

// A marketplace on a plain git host, entries of every kind, some on GitHub:
// each repo@SHA fetched once; warm re-plans fetch no content; offline plans
// send nothing and come out the same.
func TestMarketplaceOnPlainGitHost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	tools := e.plain.CreateRepoAt("team/tools")
	toolsSHA := tools.Commit("main", merge(prefixed("a", pluginTree("a")), prefixed("b", pluginTree("b"))))
	mono := e.plain.CreateRepoAt("group/sub/mono")
	mono.Commit("main", prefixed("plugins/gs", pluginTree("gs")))
	gh := e.gh.CreateRepo("acme", "gh")
	ghSHA := gh.Commit("main", pluginTree("ghp"))
	hidden := tools.CommitUnreachable("", prefixed("a", pluginTree("evil")))
	doc := `{"name":"team","owner":{"name":"o"},"plugins":[
		{"name":"rel","source":"./plugins/rel"},
		{"name":"a","source":{"source":"url","url":"https://git.example.test/team/tools.git","path":"a","sha":"` + toolsSHA + `"}},
		{"name":"b","source":{"source":"url","url":"https://git.example.test/team/tools","path":"b","sha":"` + toolsSHA + `"}},
		{"name":"gs","source":{"source":"git-subdir","url":"https://git.example.test/group/sub/mono.git","path":"plugins/gs"}},
		{"name":"ghp","source":{"source":"github","repo":"acme/gh","sha":"` + ghSHA + `"}},
		{"name":"evil","source":{"source":"url","url":"https://git.example.test/team/tools.git","path":"a","sha":"` + hidden + `"}}
	]}`
	market := e.plain.CreateRepoAt("team/market")
	market.Commit("main", merge(map[string]string{".claude-plugin/marketplace.json": doc}, prefixed("plugins/rel", pluginTree("rel"))))

	src := "https://git.example.test/team/market.git"
	f, err := e.resolve(src)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Candidate{}
	for _, c := range f.Candidates {
		byName[c.Name] = c
	}
	for _, n := range []string{"rel", "a", "b", "gs", "ghp"} {
		if c := byName[n]; c.Err != nil || c.Digest == "" || !source.IsSHA(c.Commit) {
			t.Errorf("%s: %+v", n, c)
		}
	}
	if c := byName["a"]; c.Source.String() != "https://git.example.test/team/tools.git#"+toolsSHA || c.Subdir != "a" {
		t.Errorf("recorded source of a: %q subdir %q", c.Source, c.Subdir)
	}
	if c := byName["evil"]; !errors.Is(c.Err, host.ErrUnreachable) {
		t.Errorf("evil: %v", c.Err)
	}
	if n := e.plain.RepoCountsAt("team/tools").UploadPack; n > 3 {
		// One content fetch for a and b together, one history walk for
		// each pin that is not a tip (the good one and the evil one).
		t.Errorf("team/tools: %d upload-packs", n)
	}
	e.reset()
	warm, err := e.resolve(src)
	if err != nil {
		t.Fatal(err)
	}
	if n := e.content(); n != 0 {
		t.Errorf("warm re-plan: %d content fetches", n)
	}
	e.reset()
	off, err := e.resolve(src, offline)
	if err != nil {
		t.Fatal(err)
	}
	if n := e.requests(); n != 0 {
		t.Errorf("offline re-plan: %d requests", n)
	}
	for i := range warm.Candidates {
		w, o := warm.Candidates[i], off.Candidates[i]
		if w.Name != o.Name || w.Digest != o.Digest || w.Commit != o.Commit || (w.Err == nil) != (o.Err == nil) {
			t.Errorf("offline differs for %s: %+v vs %+v", w.Name, o, w)
		}
	}
}

func TestNegativeCache(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	_, err := e.resolve("git:github.com/acme/missing")
	mustCode(t, err, plugind.CodeNotFound, host.ErrRepoNotFound, "repository not found")
	e.reset()
	_, err = e.resolve("git:github.com/acme/missing")
	mustCode(t, err, plugind.CodeNotFound, host.ErrRepoNotFound, "remembered")
	if n := e.requests(); n != 0 {
		t.Errorf("re-plan asked again: %d requests", n)
	}
	_, err = e.resolve("git:github.com/acme/missing", offline)
	mustCode(t, err, plugind.CodeNotFound, host.ErrRepoNotFound, "repository not found")
	_, err = e.resolve("git:github.com/acme/missing", func(r *Request) { r.Refresh = true })
	mustCode(t, err, plugind.CodeNotFound, host.ErrRepoNotFound, "repository not found")
	if n := e.requests(); n == 0 {
		t.Error("--refresh did not ask again")
	}
	e.now = e.now.Add(2 * time.Hour)
	e.reset()
	_, _ = e.resolve("git:github.com/acme/missing")
	if n := e.requests(); n == 0 {
		t.Error("an expired negative result was still believed")
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
