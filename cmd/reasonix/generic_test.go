package main

import (
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// Any git host over HTTPS (issue: one host interface): a repository on a
// plain git host — no REST API, no archives — named by its real host and
// reached through REASONIX_URL_REWRITE, pinned to a tag or to its HEAD.
func TestGenericGitSourceFromTheCommandLine(t *testing.T) {
	t.Parallel()
	plain := fakegithub.New(t, fakegithub.WithPlainGit())
	repo := plain.CreateRepoAt("team/tools")
	tagged := repo.Commit("main", pluginTree("tools"))
	repo.Tag("v1.2", tagged)
	head := repo.Commit("main", map[string]string{"CHANGELOG.md": "next"})
	home := t.TempDir()
	env := []string{"REASONIX_URL_REWRITE=https://git.example.test/=" + plain.URL + "/"}

	r := run(t, home, env, "plugin", "install", "https://git.example.test/team/tools.git#v1.2", "--dry-run")
	resolved := r.json(t)["resolved"].(map[string]any)
	if r.code != 0 || resolved["commit"] != tagged || resolved["kind"] != "git" || resolved["repo"] != "git.example.test/team/tools" {
		t.Fatalf("#v1.2: exit %d resolved %v\n%s", r.code, resolved, r.stderr)
	}
	r = run(t, home, env, "plugin", "install", "https://git.example.test/team/tools.git", "--yes")
	if r.code != 0 || r.json(t)["resolved"].(map[string]any)["commit"] != head {
		t.Fatalf("HEAD: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if c := plain.Counts(); c.API() != 0 || c.Archive != 0 {
		t.Errorf("a plain git host was asked for REST or archives: %+v", c)
	}
}

// A marketplace on a plain git host with url+sha, git-subdir and relative
// entries installs in bulk; each repo@SHA is fetched once; a warm re-plan
// fetches no content; an --offline re-plan sends nothing and has the same
// planId; a sha no branch or tag of that host reaches is refused.
func TestPlainGitMarketplaceInBulk(t *testing.T) {
	t.Parallel()
	plain := fakegithub.New(t, fakegithub.WithPlainGit())
	tools := plain.CreateRepoAt("team/tools")
	toolsSHA := tools.Commit("main", merge(prefixTree("a", pluginTree("a")), prefixTree("b", pluginTree("b"))))
	mono := plain.CreateRepoAt("group/sub/mono")
	mono.Commit("main", prefixTree("plugins/gs", pluginTree("gs")))
	hidden := tools.CommitUnreachable("", prefixTree("a", pluginTree("evil")))
	market := plain.CreateRepoAt("team/market")
	market.Commit("main", merge(prefixTree("plugins/rel", pluginTree("rel")), map[string]string{
		".claude-plugin/marketplace.json": `{"name":"team","owner":{"name":"o"},"plugins":[
			{"name":"rel","source":"./plugins/rel"},
			{"name":"a","source":{"source":"url","url":"https://git.example.test/team/tools.git","path":"a","sha":"` + toolsSHA + `"}},
			{"name":"b","source":{"source":"url","url":"https://git.example.test/team/tools","path":"b","sha":"` + toolsSHA + `"}},
			{"name":"gs","source":{"source":"git-subdir","url":"https://git.example.test/group/sub/mono.git","path":"plugins/gs"}},
			{"name":"evil","source":{"source":"url","url":"https://git.example.test/team/tools.git","path":"a","sha":"` + hidden + `"}}]}`,
	}))
	home := t.TempDir()
	env := []string{"REASONIX_URL_REWRITE=https://git.example.test/=" + plain.URL + "/"}
	src := "https://git.example.test/team/market.git"

	r := run(t, home, env, "plugin", "install", src, "--yes")
	acts := actionsOf(t, r)
	for _, n := range []string{"rel", "a", "b", "gs"} {
		if acts[n]["status"] != "installed" {
			t.Errorf("%s: %v", n, acts[n])
		}
	}
	if acts["evil"]["status"] != "blocked" || !strings.Contains(acts["evil"]["error"].(string), "not on any branch or tag") {
		t.Errorf("evil: %v", acts["evil"])
	}
	if acts["a"]["source"] != "https://git.example.test/team/tools.git#"+toolsSHA || acts["a"]["subdir"] != "a" {
		t.Errorf("recorded source of a: %v", acts["a"])
	}
	// One content fetch per repo@SHA; team/tools also walks its history
	// once for the pin that is not a branch tip (evil's: a and b pin the
	// tip), and, not finding it there, asks for that one commit alone to
	// say whether it exists at all.
	for p, max := range map[string]int{"team/tools": 3, "group/sub/mono": 1, "team/market": 1} {
		if n := plain.RepoCountsAt(p).UploadPack; n > max {
			t.Errorf("%s: %d upload-packs, want at most %d", p, n, max)
		}
	}

	plain.ResetCounts()
	warm := run(t, home, env, "plugin", "install", src, "--dry-run", "--replace")
	if c := plain.Counts(); c.Content() != 0 {
		t.Errorf("warm re-plan fetched content: %+v", c)
	}
	plain.ResetCounts()
	off := run(t, home, env, "plugin", "install", src, "--dry-run", "--replace", "--offline")
	if c := plain.Counts(); c.Total != 0 {
		t.Errorf("offline re-plan sent %d requests", c.Total)
	}
	if w, o := warm.json(t)["planId"], off.json(t)["planId"]; w != o || w == nil {
		t.Errorf("offline planId %v, online %v", o, w)
	}
}

func prefixTree(prefix string, files map[string]string) map[string]string {
	out := map[string]string{}
	for p, c := range files {
		out[prefix+"/"+p] = c
	}
	return out
}
