package mirror_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/mirrortest"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/policy"
	"reasonix.io/plugind/resolver/host"
)

// routeQueries are the /v1 routes that take a repository, each with the
// rest of a query that it answers 2xx for acme/tools at sha.
func routeQueries(sha string) map[string]string {
	return map[string]string{
		"refs":        "",
		"resolve":     "",
		"reachable":   "&sha=" + sha,
		"snapshot":    "&sha=" + sha,
		"marketplace": "&sha=" + sha,
	}
}

// A scoped token gets, on every route that takes a repository, what its
// scopes cover however the repository is spelled, and a 403
// install.blocked naming the miss for anything else — before anything is
// looked up or fetched, audited as out_of_scope, saying nothing of the
// other tokens. The repository it asks about outside its scopes is never
// fetched upstream, even when the mirror already holds it.
func TestTokenScopesOnEveryRoute(t *testing.T) {
	t.Parallel()
	f, sha := served(t, mirrortest.Options{})
	ctx := context.Background()
	// The mirror holds acme/secret too, fetched for the unscoped token.
	secret := f.gh.CreateRepo("acme", "secret").Commit("main", map[string]string{
		".claude-plugin/marketplace.json": `{"name":"secret","owner":{"name":"acme"},"plugins":[]}`,
	})
	if _, err := f.repo(t, "acme/secret").Fetch(ctx, secret, filepath.Join(t.TempDir(), "secret"), host.FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	scoped := f.eng.Token(t, "ci-tools", "GitHub.com/ACME/tools.git", "bücher.example/team")
	f.gh.ResetCounts()

	inside := []string{"https://github.com/acme/tools.git", "https://github.com/ACME/Tools", "https://GITHUB.com/acme/tools"}
	outside := []string{"https://github.com/acme/secret.git", "https://github.com/Acme/SECRET", "https://github.com/acme/tools-fork",
		"https://github.com/acme-tools/tools", "https://xn--bcher-kva.example/other/tools.git", "https://bucher.example/team/tools.git"}
	refusals := 0
	for route, rest := range routeQueries(sha) {
		for i, repo := range inside {
			// The mirror keeps what it stores under the spelling asked for
			// (source keys keep case), so another spelling of a repository
			// may be a 404 on the marketplace route; it is never a refusal.
			resp, body := f.get(t, "/v1/"+route+"?repo="+url.QueryEscape(repo)+rest, scoped)
			if i == 0 && resp.StatusCode/100 != 2 || resp.StatusCode == http.StatusForbidden {
				t.Errorf("%s %s: %d %s, want it served", route, repo, resp.StatusCode, body)
			}
		}
		for _, repo := range outside {
			q := rest
			if strings.Contains(repo, "secret") {
				q = strings.ReplaceAll(rest, sha, secret)
			}
			resp, body := f.get(t, "/v1/"+route+"?repo="+url.QueryEscape(repo)+q, scoped)
			refusals++
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, string(plugind.CodeBlocked)) ||
				!strings.Contains(body, "outside the scopes of the mirror token") || !strings.Contains(body, `\"ci-tools\"`) ||
				!strings.Contains(body, "GitHub.com/ACME/tools.git, bücher.example/team") {
				t.Errorf("%s %s: %d %s, want 403 install.blocked naming the scope miss", route, repo, resp.StatusCode, body)
			}
			if strings.Contains(body, "tester") || strings.Contains(body, f.token) || strings.Contains(body, scoped) || strings.Contains(body, "rule") {
				t.Errorf("%s %s: the refusal says more than the miss: %s", route, repo, body)
			}
		}
	}
	if c := f.gh.RepoCounts("acme", "secret"); c.Total != 0 {
		t.Errorf("a repository outside the scopes reached upstream: %+v", c)
	}
	log, err := f.eng.DB.AuditLog(ctx, meta.AuditFilter{Client: "ci-tools", Outcome: "out_of_scope"})
	if err != nil || len(log) != refusals {
		t.Fatalf("%d out_of_scope rows (%v), want %d", len(log), err, refusals)
	}
	for _, e := range log {
		if strings.HasPrefix(e.Repo, "github.com/acme/tools") && e.Repo != "github.com/acme/tools-fork" || !strings.Contains(e.Detail, "outside the scopes") {
			t.Errorf("audit row %+v", e)
		}
	}
	// The unscoped token still gets everything.
	if resp, body := f.get(t, "/v1/resolve?repo="+url.QueryEscape("https://github.com/acme/secret"), f.token); resp.StatusCode != http.StatusOK {
		t.Errorf("the unscoped token: %d %s", resp.StatusCode, body)
	}
}

// A repository path that tries to walk out of the scope — dot segments,
// encoded slashes, extra segments — is refused as a bad repository or
// stays the repository it names; it never reaches another one.
func TestScopeCannotBeWalkedOut(t *testing.T) {
	t.Parallel()
	f, sha := served(t, mirrortest.Options{})
	scoped := f.eng.Token(t, "one-repo", "github.com/acme/tools")
	for _, repo := range []string{"https://github.com/acme/tools/../secret", "https://github.com/acme/tools/%2e%2e/secret",
		"https://github.com/acme/tools%2F..%2Fsecret", "https://github.com/acme/tools/x", "https://github.com/acme/tools.git/../secret.git",
		"https://github.com/acme//secret", "https://github.com/./acme/secret"} {
		resp, body := f.get(t, "/v1/snapshot?repo="+url.QueryEscape(repo)+"&sha="+sha, scoped)
		if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d %s, want it refused", repo, resp.StatusCode, body)
		}
	}
	for _, e := range f.auditRows(t) {
		if e.Client == "one-repo" && e.Outcome != "error" && e.Outcome != "out_of_scope" {
			t.Errorf("audit row %+v: served", e)
		}
	}
}

// A client whose token's scopes do not cover a plugin stops at the
// mirror's refusal, reported as install.blocked naming the scope miss —
// never as the mirror being down, never by going upstream around it,
// whatever REASONIX_MIRROR_ONLY says — and its registry is unchanged;
// what the scopes cover installs.
func TestScopedTokenThroughTheClient(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mirrortest.Options{})
	for _, name := range []string{"hello", "secret"} {
		f.gh.CreateRepo("acme", name).Commit("main", map[string]string{
			".claude-plugin/plugin.json": `{"name":"` + name + `"}`,
			"skills/s/SKILL.md":          "---\ndescription: " + name + "\n---\n",
		})
	}
	f.token = f.eng.Token(t, "laptop", "github.com/acme/hello")
	ctx := context.Background()
	for mode, only := range map[string]bool{"fallback": false, "only": true} {
		a := f.client(t, only)
		if _, err := a.Installer.Install(ctx, installer.Request{Source: mustSource("https://github.com/acme/hello")}, installer.Approval{Yes: true}); err != nil {
			t.Fatalf("%s: inside the scopes: %v", mode, err)
		}
		before, err := os.ReadFile(a.Home.RegistryPath())
		if err != nil {
			t.Fatal(err)
		}
		f.gh.ResetCounts()
		_, err = a.Installer.Install(ctx, installer.Request{Source: mustSource("https://github.com/acme/secret")}, installer.Approval{Yes: true})
		if plugind.CodeOf(err) != plugind.CodeBlocked || !strings.Contains(err.Error(), "outside the scopes of the mirror token \"laptop\"") ||
			errors.Is(err, host.ErrRefused) || strings.Contains(err.Error(), f.token) {
			t.Errorf("%s: %v, want install.blocked naming the scope miss", mode, err)
		}
		if c := f.gh.Counts(); c.Total != 0 {
			t.Errorf("%s: outside the scopes, upstream saw %+v", mode, c)
		}
		if after, _ := os.ReadFile(a.Home.RegistryPath()); string(before) != string(after) {
			t.Errorf("%s: the registry changed", mode)
		}
	}
}

// The policy applies to a scoped token too, and wins: a scope covering a
// blocked repository does not unblock it.
func TestPolicyBlockWinsOverScope(t *testing.T) {
	t.Parallel()
	pol, err := policy.Parse([]byte(`{"block": ["github.com/acme/secret"]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, mirrortest.Options{Policy: pol})
	scoped := f.eng.Token(t, "acme", "github.com/acme")
	resp, body := f.get(t, "/v1/resolve?repo=https://github.com/acme/secret", scoped)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `"rule":"github.com/acme/secret"`) {
		t.Fatalf("%d %s, want the policy's block", resp.StatusCode, body)
	}
	log, err := f.eng.DB.AuditLog(context.Background(), meta.AuditFilter{Client: "acme"})
	if err != nil || len(log) != 1 || log[0].Outcome != "blocked" {
		t.Fatalf("audit %+v %v", log, err)
	}
}

// A token whose stored scopes no longer parse is refused, never taken as
// a token without scopes.
func TestUnreadableScopesFailClosed(t *testing.T) {
	t.Parallel()
	f, _ := served(t, mirrortest.Options{})
	scoped := f.eng.Token(t, "edited", "github.com/acme/tools")
	if _, err := f.eng.DB.SQLDB().Exec(`UPDATE tokens SET scopes = ARRAY['https://github.com/acme'] WHERE name = 'edited'`); err != nil {
		t.Fatal(err)
	}
	resp, body := f.get(t, "/v1/refs?repo=https://github.com/acme/tools", scoped)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "cannot read the scopes") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

// A snapshot holds its submodules' content, fetched with the mirror's
// credentials: a token whose scopes miss a submodule's repository is
// refused the snapshot (naming the submodule) even once another token has
// had the mirror store it, and gets the folders that hold no such
// submodule. A marketplace document a submodule brings in is not kept.
func TestScopesCoverSubmodules(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mirrortest.Options{})
	lib := f.gh.CreateRepo("acme", "lib").Commit("main", map[string]string{"skills/lib/SKILL.md": "lib"})
	secret := f.gh.CreateRepo("other", "secret").Commit("main", map[string]string{"marketplace.json": `{"name":"secret","owner":{"name":"o"},"plugins":[]}`})
	sha := f.gh.CreateRepo("acme", "tools").Commit("main", map[string]string{
		".gitmodules": "[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib.git\n" +
			"[submodule \"secret\"]\n\tpath = .claude-plugin\n\turl = https://github.com/other/secret\n",
		"lib":            fakegithub.Gitlink(lib),
		".claude-plugin": fakegithub.Gitlink(secret),
		"plugin/p.md":    "p",
	})
	ctx := context.Background()
	// The unscoped token has the mirror store the whole tree.
	if _, err := f.repo(t, "acme/tools").Fetch(ctx, sha, filepath.Join(t.TempDir(), "all"), host.FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	repo := "/v1/snapshot?repo=" + url.QueryEscape("https://github.com/acme/tools") + "&sha=" + sha
	narrow := f.eng.Token(t, "narrow", "github.com/acme")
	for _, tc := range []struct {
		query, want string
		status      int
	}{
		{"", "holds the submodule github.com/other/secret (at .claude-plugin)", http.StatusForbidden},
		{"&path=.claude-plugin", "holds the submodule github.com/other/secret", http.StatusForbidden},
		{"&path=plugin&path=lib", "", http.StatusOK}, // acme/lib is inside github.com/acme
		{"&path=plugin", "", http.StatusOK},
	} {
		resp, body := f.get(t, repo+tc.query, narrow)
		if resp.StatusCode != tc.status || tc.want != "" && (!strings.Contains(body, tc.want) || !strings.Contains(body, string(plugind.CodeBlocked))) {
			t.Errorf("%q: %d %s, want %d %q", tc.query, resp.StatusCode, body, tc.status, tc.want)
		}
	}
	wide := f.eng.Token(t, "wide", "github.com/acme", "github.com/other/secret")
	if resp, body := f.get(t, repo, wide); resp.StatusCode != http.StatusOK {
		t.Errorf("scopes covering every submodule: %d %s", resp.StatusCode, body)
	}
	log, err := f.eng.DB.AuditLog(ctx, meta.AuditFilter{Client: "narrow", Outcome: "out_of_scope"})
	if err != nil || len(log) != 2 || !strings.Contains(log[0].Detail, "github.com/other/secret") {
		t.Errorf("audit %+v %v", log, err)
	}
	// The submodule's marketplace.json is not the parent's document.
	if resp, body := f.get(t, "/v1/marketplace?repo="+url.QueryEscape("https://github.com/acme/tools")+"&sha="+sha, narrow); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a submodule's marketplace document is served as the parent's: %d %s", resp.StatusCode, body)
	}
}

// Policy rules and scopes name a repository by its host and path, so an
// SSH spelling of a blocked repository is blocked, and one inside a
// token's scopes is never refused as outside them.
func TestPolicyAndScopesNameSSHByPlace(t *testing.T) {
	t.Parallel()
	pol, err := policy.Parse([]byte(`{"block": ["git.example.test/team/secret"]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, mirrortest.Options{Policy: pol})
	scoped := f.eng.Token(t, "team", "git.example.test/team")
	for _, repo := range []string{"ssh://git@git.example.test/team/secret.git", "git@git.example.test:team/secret.git", "ssh://git@git.example.test:2222/team/secret"} {
		resp, body := f.get(t, "/v1/resolve?repo="+url.QueryEscape(repo)+"&ref=main", f.token)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `"rule":"git.example.test/team/secret"`) {
			t.Errorf("%s: %d %s, want the policy's block", repo, resp.StatusCode, body)
		}
	}
	// The marketplace route answers from the database alone: a repository
	// inside the scopes is a 404 there, never a refusal (and never a
	// lookup of a name that is not on the network).
	sha := strings.Repeat("a", 40)
	for repo, inside := range map[string]bool{"ssh://git@git.example.test/team/tools.git": true, "ssh://git@git.example.test/other/tools.git": false} {
		resp, body := f.get(t, "/v1/marketplace?repo="+url.QueryEscape(repo)+"&sha="+sha, scoped)
		if refused := resp.StatusCode == http.StatusForbidden && strings.Contains(body, "outside the scopes"); refused == inside || inside && resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d %s, want it %s the scope", repo, resp.StatusCode, body, map[bool]string{true: "inside", false: "outside"}[inside])
		}
	}
}
