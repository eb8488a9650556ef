package main

import (
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// rangesFixture serves testdata/ranges from the fake GitHub: acme/dep with
// one commit per release, each tagged dep--vVERSION as `claude plugin tag`
// tags it (two of them annotated, as GitHub has them), a commit after the
// last release, a tag that is no semantic version (dep--v1.3) and a commit
// on no branch or tag; acme/ranges, the marketplace, whose plugins/reldep
// is released in the marketplace's own repository (reldep--v1.0.0,
// reldep--v1.1.0) and is at 2.0.0 at its head.
type rangesFixture struct {
	gh                     *fakegithub.Server
	dep, market            *fakegithub.Repo
	release                map[string]string // dep version → commit
	relRelease             map[string]string // reldep version → marketplace commit
	head, marketHead, dark string
}

func newRangesFixture(t *testing.T) *rangesFixture {
	t.Helper()
	gh := fakegithub.New(t)
	f := &rangesFixture{gh: gh, release: map[string]string{}, relRelease: map[string]string{}}
	f.dep = gh.CreateRepo("acme", "dep")
	depTree := treeFiles(t, filepath.Join("testdata", "ranges", "dep"))
	for i, v := range []string{"1.0.0", "1.2.0", "1.5.0", "2.0.0"} {
		f.release[v] = f.dep.Commit("main", fill(depTree, "@VERSION@", v))
		if i%2 == 0 {
			f.dep.AnnotatedTag("dep--v"+v, f.release[v], "dep "+v)
		} else {
			f.dep.Tag("dep--v"+v, f.release[v])
		}
	}
	f.dep.Tag("dep--v1.3", f.release["1.5.0"])
	f.head = f.dep.Commit("main", map[string]string{"NOTES.md": "after the 2.0.0 release\n"})
	f.dark = f.dep.CommitUnreachable(f.release["1.0.0"], fill(depTree, "@VERSION@", "1.0.1"))

	f.market = gh.CreateRepo("acme", "ranges")
	marketTree := treeFiles(t, filepath.Join("testdata", "ranges", "market"))
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		tree := fill(marketTree, "@RELDEP_VERSION@", v, "@DEP_HEAD@", f.head, "@DEP_V1_0_0@", f.release["1.0.0"], "@DEP_UNREACHABLE@", f.dark)
		f.relRelease[v] = f.market.Commit("main", tree)
		if v != "2.0.0" {
			f.market.Tag("reldep--v"+v, f.relRelease[v])
		}
	}
	f.marketHead = f.relRelease["2.0.0"]
	return f
}

// fill replaces placeholders (pairs of old, new) in every file.
func fill(files map[string]string, pairs ...string) map[string]string {
	r := strings.NewReplacer(pairs...)
	out := make(map[string]string, len(files))
	for k, v := range files {
		out[k] = r.Replace(v)
	}
	return out
}

const rangesMarket = "https://github.com/acme/ranges"

// TestDependencyRangeTakesTheHighestReleaseTag: a dependency's range is
// resolved as Claude Code resolves it — to the highest dep--vVERSION tag
// that satisfies it (not the entry's own pin, not a higher major, not a
// tag that is no semantic version) — and pinned to the tag's commit; the
// plan, the terminal review and the registry say which tag and commit.
// The string form NAME@MARKET@^RANGE resolves the same way.
func TestDependencyRangeTakesTheHighestReleaseTag(t *testing.T) {
	t.Parallel()
	f := newRangesFixture(t)
	home, env := t.TempDir(), f.gh.Env()

	for _, app := range []string{"app", "app-string"} {
		dry := runBinary(t, home, env, "plugin", "install", rangesMarket, "--name", app, "--dry-run")
		if dry.code != 0 {
			t.Fatalf("%s: exit %d %s %s", app, dry.code, dry.stdout, dry.stderr)
		}
		dep := actionsOf(t, dry)["dep"]
		if dep["status"] != "ready" || dep["tag"] != "dep--v1.5.0" || dep["commit"] != f.release["1.5.0"] ||
			dep["resolvedVersion"] != "1.5.0" || dep["version"] != "1.5.0" || dep["dependency"] != true ||
			dep["source"] != "https://github.com/acme/dep/tree/"+f.release["1.5.0"] {
			t.Fatalf("%s: the dependency is not at the highest release satisfying ^1.2: %v", app, dep)
		}
	}

	review := runOnTerminal(t, home, env, "plugin", "install", rangesMarket, "--name", "app", "--dry-run")
	if !strings.Contains(review.stderr, f.release["1.5.0"][:12]+" (dep--v1.5.0)") {
		t.Errorf("the review does not show the tag beside the commit:\n%s", review.stderr)
	}

	yes := runBinary(t, home, env, "plugin", "install", rangesMarket, "--name", "app", "--yes")
	if yes.code != 0 {
		t.Fatalf("install: exit %d %s", yes.code, yes.stdout)
	}
	show := runBinary(t, home, env, "plugin", "show", "dep", "--json")
	for _, want := range []string{`"tag": "dep--v1.5.0"`, `"resolvedVersion": "1.5.0"`, `"commit": "` + f.release["1.5.0"] + `"`} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show dep lacks %s:\n%s", want, show.stdout)
		}
	}
}

// TestDependencyRangeWithoutMatchingTag: no release tag satisfies ^3, and
// dep has a repository of its own: dep is blocked with an error naming the
// range and every tag found (the one that is no semantic version apart),
// and app with it. A relative entry stays at the marketplace's commit as
// in Claude Code, whose version (2.0.0) does not satisfy ^5 either: its
// dependent is blocked saying both.
func TestDependencyRangeWithoutMatchingTag(t *testing.T) {
	t.Parallel()
	f := newRangesFixture(t)
	home, env := t.TempDir(), f.gh.Env()

	r := runBinary(t, home, env, "plugin", "install", rangesMarket, "--name", "app-none", "--dry-run")
	acts := actionsOf(t, r)
	const tags = "tags found: dep--v1.0.0, dep--v1.2.0, dep--v1.5.0, dep--v2.0.0; not semantic versions, so not releases: dep--v1.3"
	if r.code != 1 || acts["dep"]["status"] != "blocked" || acts["dep"]["errorCode"] != "install.not_found" ||
		!strings.Contains(acts["dep"]["error"].(string), "no release tag dep--v* of github.com/acme/dep satisfies ^3 ("+tags+")") {
		t.Fatalf("dep without a matching tag: exit %d %v", r.code, acts["dep"])
	}
	if acts["app-none"]["status"] != "blocked" || !strings.Contains(acts["app-none"]["error"].(string), "app-none → dep") {
		t.Errorf("app-none: %v", acts["app-none"])
	}

	r = runBinary(t, home, env, "plugin", "install", rangesMarket, "--name", "app-rel-miss", "--dry-run")
	acts = actionsOf(t, r)
	want := "needs reldep ^5, but reldep at " + f.marketHead[:12] + " has 2.0.0 (no release tag reldep--v* of github.com/acme/ranges satisfies ^5 (tags found: reldep--v1.0.0, reldep--v1.1.0))"
	if r.code != 1 || acts["app-rel-miss"]["status"] != "blocked" || !strings.Contains(acts["app-rel-miss"]["error"].(string), want) {
		t.Fatalf("app-rel-miss: exit %d %v", r.code, acts["app-rel-miss"])
	}
}

// TestRelativeDependencyTakesTheMarketplacesReleaseTag: reldep is a folder
// of the marketplace; its release tags are the marketplace repository's,
// and the folder is read at the tag's commit.
func TestRelativeDependencyTakesTheMarketplacesReleaseTag(t *testing.T) {
	t.Parallel()
	f := newRangesFixture(t)
	r := runBinary(t, t.TempDir(), f.gh.Env(), "plugin", "install", rangesMarket, "--name", "app-rel", "--dry-run")
	rel := actionsOf(t, r)["reldep"]
	at := f.relRelease["1.1.0"]
	if r.code != 0 || rel["tag"] != "reldep--v1.1.0" || rel["commit"] != at || rel["version"] != "1.1.0" ||
		rel["source"] != rangesMarket+"/tree/"+at+"/plugins/reldep" {
		t.Fatalf("reldep: exit %d %v", r.code, rel)
	}
}

// TestDependencyShaIsHonoured: an object dependency's sha pins dep to that
// commit, whatever the entry's own pin; a sha on no branch or tag is
// refused as every sha pin is (SPEC §6).
func TestDependencyShaIsHonoured(t *testing.T) {
	t.Parallel()
	f := newRangesFixture(t)
	home, env := t.TempDir(), f.gh.Env()
	r := runBinary(t, home, env, "plugin", "install", rangesMarket, "--name", "app-sha", "--yes")
	dep := actionsOf(t, r)["dep"]
	if r.code != 0 || dep["commit"] != f.release["1.0.0"] || dep["version"] != "1.0.0" || dep["tag"] != nil {
		t.Fatalf("app-sha: exit %d %v", r.code, dep)
	}
	list := runBinary(t, home, env, "plugin", "show", "dep", "--json")
	if !strings.Contains(list.stdout, `"commit": "`+f.release["1.0.0"]+`"`) {
		t.Errorf("installed dep: %s", list.stdout)
	}

	r = runBinary(t, t.TempDir(), env, "plugin", "install", rangesMarket, "--name", "app-unreachable", "--dry-run")
	acts := actionsOf(t, r)
	if r.code != 1 || acts["dep"]["status"] != "blocked" || !strings.Contains(acts["dep"]["error"].(string), "not on any branch or tag") ||
		acts["app-unreachable"]["status"] != "blocked" {
		t.Fatalf("a sha on no branch or tag: exit %d dep %v app %v", r.code, acts["dep"], acts["app-unreachable"])
	}
}

// TestDependencyRangeOffline: an offline re-plan resolves the range from
// the cached tag listing: the same tag, commit and planId, even after a
// newer release appears upstream (which the next online plan takes).
func TestDependencyRangeOffline(t *testing.T) {
	t.Parallel()
	f := newRangesFixture(t)
	home, env := t.TempDir(), f.gh.Env()
	online := runBinary(t, home, env, "plugin", "install", rangesMarket, "--name", "app", "--dry-run")
	if online.code != 0 {
		t.Fatalf("online: exit %d %s", online.code, online.stdout)
	}
	newer := f.dep.Commit("main", map[string]string{".claude-plugin/plugin.json": `{"name":"dep","version":"1.9.0"}`})
	f.dep.Tag("dep--v1.9.0", newer)

	offline := runBinary(t, home, env, "plugin", "install", rangesMarket, "--name", "app", "--dry-run", "--offline")
	if offline.code != 0 || offline.json(t)["planId"] != online.json(t)["planId"] || actionsOf(t, offline)["dep"]["tag"] != "dep--v1.5.0" {
		t.Fatalf("offline: exit %d plan %v (online %v) dep %v", offline.code, offline.json(t)["planId"], online.json(t)["planId"], actionsOf(t, offline)["dep"])
	}
	again := runBinary(t, home, env, "plugin", "install", rangesMarket, "--name", "app", "--dry-run")
	if dep := actionsOf(t, again)["dep"]; dep["tag"] != "dep--v1.9.0" || dep["commit"] != newer {
		t.Fatalf("online after a new release: %v", dep)
	}

	// A home that never listed the tags has nothing to resolve from.
	cold := runBinary(t, t.TempDir(), env, "plugin", "install", rangesMarket, "--name", "app", "--dry-run", "--offline")
	if cold.code != 1 || cold.json(t)["errorCode"] != "install.offline_miss" {
		t.Fatalf("offline with nothing cached: exit %d %s", cold.code, cold.stdout)
	}
}

// TestUpdateKeepsDependenciesWithinTheirDependentsRanges: updating a
// dependency takes the highest release its installed dependents' ranges
// allow (1.6.0 for app's ^1.2, not 2.1.0 nor the entry's pin), as Claude
// Code's update does; when no release tag satisfies them it falls back to
// the entry's pin only if that version does, and otherwise stays, saying
// who needs what.
func TestUpdateKeepsDependenciesWithinTheirDependentsRanges(t *testing.T) {
	t.Parallel()
	f := newRangesFixture(t)
	home, env := t.TempDir(), f.gh.Env()
	for _, app := range []string{"app", "app-rel"} {
		if r := runBinary(t, home, env, "plugin", "install", rangesMarket, "--name", app, "--yes"); r.code != 0 {
			t.Fatalf("install %s: exit %d %s", app, r.code, r.stdout)
		}
	}
	depTree := treeFiles(t, filepath.Join("testdata", "ranges", "dep"))
	for _, v := range []string{"1.6.0", "2.1.0"} {
		f.release[v] = f.dep.Commit("main", fill(depTree, "@VERSION@", v))
		f.dep.Tag("dep--v"+v, f.release[v])
	}
	f.market.Commit("main", map[string]string{".claude-plugin/marketplace.json": fill(treeFiles(t, filepath.Join("testdata", "ranges", "market")), "@DEP_HEAD@", f.release["2.1.0"])[".claude-plugin/marketplace.json"]})
	f.market.DeleteTag("reldep--v1.0.0")
	f.market.DeleteTag("reldep--v1.1.0")

	r := runBinary(t, home, env, "plugin", "update", "dep", "reldep", "--dry-run")
	acts := actionsOf(t, r)
	if dep := acts["dep"]; r.code != 0 || dep["tag"] != "dep--v1.6.0" || dep["commit"] != f.release["1.6.0"] || dep["status"] != "ready" {
		t.Fatalf("update dep: exit %d %v", r.code, dep)
	}
	rel := acts["reldep"]
	w, _ := rel["warnings"].([]any)
	want := "reldep stays at " + f.relRelease["1.1.0"][:12] + ": app-rel needs reldep ^1, and the marketplace's pin (reldep at "
	if rel["action"] != "keep" || len(w) != 1 || !strings.HasPrefix(w[0].(string), want) || !strings.Contains(w[0].(string), "has 2.0.0; no release tag reldep--v* of github.com/acme/ranges satisfies ^1 (tags found: none)") {
		t.Fatalf("update reldep without a release tag: %v", rel)
	}
}
