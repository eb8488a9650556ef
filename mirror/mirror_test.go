package mirror_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/mirrortest"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/policy"
	"reasonix.io/plugind/resolver/host"
	mirrorclient "reasonix.io/plugind/resolver/host/mirror"
	"reasonix.io/plugind/source"
)

// fixture is one replica over fresh engines, a fake GitHub and a token.
type fixture struct {
	gh    *fakegithub.Server
	eng   *mirrortest.Engines
	rep   *mirrortest.Replica
	token string
}

func newFixture(t *testing.T, o mirrortest.Options) *fixture {
	t.Helper()
	f := &fixture{eng: mirrortest.Open(t), gh: fakegithub.New(t)}
	up, err := mirrortest.Upstream(f.gh)
	if err != nil {
		t.Fatal(err)
	}
	o.Upstream = up
	f.rep = f.eng.StartReplica(t, o)
	f.token = f.eng.Token(t, "tester")
	return f
}

// repo is the mirror-only client Repo of a GitHub repository.
func (f *fixture) repo(t *testing.T, ownerRepo string) host.Repo {
	t.Helper()
	c, err := mirrorclient.New(mirrorclient.Config{URLs: []string{f.rep.URL}, Token: f.token})
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.Parse("https://github.com/" + ownerRepo)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *fixture) get(t *testing.T, path, token string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.rep.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRefsResolveReachableSnapshot(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mirrortest.Options{})
	files := map[string]string{"plugins/a/x.md": "a", "plugins/b/y.md": "b", "README.md": "r"}
	sha := f.gh.CreateRepo("acme", "tools").Commit("main", files)
	r := f.repo(t, "acme/tools")
	ctx := context.Background()

	pin, err := r.Resolve(ctx, "", nil)
	if err != nil || pin.SHA != sha {
		t.Fatalf("resolve: %+v %v", pin, err)
	}
	// Within the ref TTL the mirror answers from its database, and a
	// client that knows the commit gets a 304.
	before := f.gh.RepoCounts("acme", "tools")
	again, err := r.Resolve(ctx, "", &pin)
	if err != nil || !again.NotModified || again.SHA != sha {
		t.Fatalf("conditional resolve: %+v %v", again, err)
	}
	refs, err := r.Refs(ctx)
	if err != nil || refs.Commits["main"] != sha || refs.Head != "main" {
		t.Fatalf("refs: %+v %v", refs, err)
	}
	if _, err := r.Refs(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Reachable(ctx, sha, ""); err != nil {
		t.Fatalf("reachable: %v", err)
	}
	after := f.gh.RepoCounts("acme", "tools")
	if after.APICommits != before.APICommits || after.Total-before.Total > 1 {
		t.Fatalf("upstream asked again within the TTL: %+v then %+v", before, after)
	}

	// The whole tree, then one folder cut from it without going upstream.
	dest := filepath.Join(t.TempDir(), "full")
	got, err := r.Fetch(ctx, sha, dest, host.FetchOptions{Verify: true})
	if err != nil || !got.Verified || got.Transport != "mirror" {
		t.Fatalf("fetch: %+v %v", got, err)
	}
	if tree := readTree(t, dest); len(tree) != 3 || tree["plugins/a/x.md"] != "a" {
		t.Fatalf("tree %v", tree)
	}
	content := f.gh.RepoCounts("acme", "tools").Content()
	part := filepath.Join(t.TempDir(), "part")
	if _, err := r.Fetch(ctx, sha, part, host.FetchOptions{Paths: []string{"plugins/b"}}); err != nil {
		t.Fatal(err)
	}
	if tree := readTree(t, part); len(tree) != 1 || tree["plugins/b/y.md"] != "b" {
		t.Fatalf("folder %v", tree)
	}
	if c := f.gh.RepoCounts("acme", "tools").Content(); c != content || c != 1 {
		t.Fatalf("%d content fetches for one commit, want 1", c)
	}
	// The commit's marketplace documents are none here; the route says so.
	resp, body := f.get(t, "/v1/marketplace?repo=https://github.com/acme/tools.git&sha="+sha, f.token)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "no marketplace document") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

func TestNotFoundAndUnreachableAreRemembered(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mirrortest.Options{})
	repo := f.gh.CreateRepo("acme", "tools")
	repo.Commit("main", map[string]string{"a.md": "a"})
	hidden := repo.CommitUnreachable("", map[string]string{"evil.md": "x"})
	r := f.repo(t, "acme/tools")
	ctx := context.Background()

	dest := filepath.Join(t.TempDir(), "x")
	_, err := r.Fetch(ctx, hidden, dest, host.FetchOptions{Verify: true})
	if !errors.Is(err, host.ErrUnreachable) || plugind.CodeOf(err) != plugind.CodeNotFound {
		t.Fatalf("a fork-network commit: %v", err)
	}
	n := f.gh.RepoCounts("acme", "tools").Total
	if err := r.Reachable(ctx, hidden, ""); !errors.Is(err, host.ErrUnreachable) || !strings.Contains(err.Error(), "remembers") {
		t.Fatalf("remembered verdict: %v", err)
	}
	if c := f.gh.RepoCounts("acme", "tools").Total; c != n {
		t.Fatalf("asked upstream again: %d requests, then %d", n, c)
	}

	missing := f.repo(t, "acme/nothing")
	if _, err := missing.Resolve(ctx, "", nil); !errors.Is(err, host.ErrRepoNotFound) {
		t.Fatalf("missing repository: %v", err)
	}
	n = f.gh.RepoCounts("acme", "nothing").Total
	if _, err := missing.Refs(ctx); !errors.Is(err, host.ErrRepoNotFound) {
		t.Fatalf("missing repository, again: %v", err)
	}
	if c := f.gh.RepoCounts("acme", "nothing").Total; c != n {
		t.Fatalf("asked upstream again for a missing repository: %d then %d", n, c)
	}
	if _, err := f.repo(t, "acme/tools").Resolve(ctx, "no-such-branch", nil); !errors.Is(err, host.ErrRefNotFound) {
		t.Fatalf("missing ref: %v", err)
	}
}

func TestAuthProbesAndMetrics(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mirrortest.Options{})
	f.gh.CreateRepo("acme", "tools").Commit("main", map[string]string{"a.md": "a"})
	if resp, body := f.get(t, "/healthz", ""); resp.StatusCode != 200 || body != "ok\n" {
		t.Fatalf("healthz: %d %q", resp.StatusCode, body)
	}
	if resp, body := f.get(t, "/readyz", ""); resp.StatusCode != 200 || !strings.Contains(body, `"postgres":"ok"`) || !strings.Contains(body, `"objects":"ok"`) {
		t.Fatalf("readyz: %d %q", resp.StatusCode, body)
	}
	const resolve = "/v1/resolve?repo=https://github.com/acme/tools.git"
	for _, tok := range []string{"", "rxm_wrong"} {
		resp, body := f.get(t, resolve, tok)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "REASONIX_MIRROR_TOKEN") || resp.Header.Get("WWW-Authenticate") == "" {
			t.Fatalf("token %q: %d %s", tok, resp.StatusCode, body)
		}
	}
	if resp, _ := f.get(t, "/metrics", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("metrics without a token: %d", resp.StatusCode)
	}
	if resp, body := f.get(t, resolve, f.token); resp.StatusCode != 200 || !strings.Contains(body, `"sha"`) {
		t.Fatalf("resolve: %d %s", resp.StatusCode, body)
	}
	if resp, _ := f.get(t, resolve, f.token); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	resp, body := f.get(t, "/metrics", f.token)
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	for _, want := range []string{
		`reasonix_mirror_requests_total{code="200",route="resolve"} 2`,
		`reasonix_mirror_requests_total{code="401",route="resolve"} 2`,
		`reasonix_mirror_upstream_requests_total{op="resolve",outcome="ok"} 1`,
		`reasonix_mirror_cache_total{op="resolve",result="hit"} 1`,
		`reasonix_mirror_cache_total{op="resolve",result="miss"} 1`,
		"reasonix_mirror_lease_takeovers_total 0",
		"# TYPE reasonix_mirror_request_duration_seconds histogram\n",
		`reasonix_mirror_request_duration_seconds_count{route="resolve"} 4`,
		`reasonix_mirror_lease_wait_seconds_bucket{op="refs",le="+Inf"} 0`,
		`reasonix_mirror_request_duration_seconds_bucket{route="resolve",le="+Inf"} 4`,
		"\ngo_goroutines ",
		"\nprocess_resident_memory_bytes ",
		"\nprocess_cpu_seconds_total ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	// A revoked token is refused at once.
	if err := f.eng.DB.RevokeToken(context.Background(), "tester"); err != nil {
		t.Fatal(err)
	}
	if resp, _ := f.get(t, resolve, f.token); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("revoked token: %d", resp.StatusCode)
	}
	// Bad requests name what is wrong.
	tok := f.eng.Token(t, "other")
	for path, want := range map[string]string{
		"/v1/resolve":                                  "repo is required",
		"/v1/resolve?repo=file:///etc":                 "repo",
		"/v1/snapshot?repo=https://github.com/a/b.git": "40-hex",
		"/v1/snapshot?repo=https://github.com/a/b.git&sha=" + strings.Repeat("a", 40) + "&path=../x": "not a clean",
		"/v1/resolve?repo=https://github.com/a/b.git&ref=a..b":                                       "ref",
		"/v2/nothing": "no such route",
	} {
		resp, body := f.get(t, path, tok)
		if resp.StatusCode/100 != 4 || !strings.Contains(body, want) {
			t.Errorf("%s: %d %s, want 4xx naming %q", path, resp.StatusCode, body, want)
		}
	}
}

func TestPolicyBlocksAndAudits(t *testing.T) {
	t.Parallel()
	pol, err := policy.Parse([]byte(`{"block": ["github.com/evil"]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, mirrortest.Options{Policy: pol})
	f.gh.CreateRepo("evil", "tools").Commit("main", map[string]string{"a.md": "a"})
	_, err = f.repo(t, "evil/tools").Resolve(context.Background(), "", nil)
	if plugind.CodeOf(err) != plugind.CodeBlocked || !strings.Contains(err.Error(), `"github.com/evil"`) {
		t.Fatalf("%v", err)
	}
	if c := f.gh.Counts(); c.Total != 0 {
		t.Fatalf("a blocked repository reached upstream: %+v", c)
	}
	log, err := f.eng.DB.AuditLog(context.Background(), meta.AuditFilter{Outcome: "blocked"})
	if err != nil || len(log) != 1 || log[0].Repo != "github.com/evil/tools" || log[0].Detail != "github.com/evil" || log[0].Client != "tester" || log[0].Action != "resolve" {
		t.Fatalf("audit: %+v %v", log, err)
	}
}

func TestOverBudgetTreeIsFetchedByFolder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mirrortest.Options{Budget: plugind.Budget{MaxBytes: 1 << 20, MaxFiles: 1000}})
	repo := f.gh.CreateRepo("acme", "big")
	repo.Commit("main", map[string]string{"plugins/a/x.md": "a"})
	sha := repo.CommitLargeFile("main", "data/blob.bin", 2<<20)
	r := f.repo(t, "acme/big")
	ctx := context.Background()
	dest := filepath.Join(t.TempDir(), "a")
	if _, err := r.Fetch(ctx, sha, dest, host.FetchOptions{Paths: []string{"plugins/a"}}); err != nil {
		t.Fatal(err)
	}
	if tree := readTree(t, dest); len(tree) != 1 || tree["plugins/a/x.md"] != "a" {
		t.Fatalf("%v", tree)
	}
	_, err := r.Fetch(ctx, sha, filepath.Join(t.TempDir(), "all"), host.FetchOptions{})
	if plugind.CodeOf(err) != plugind.CodeBudgetExceeded || !host.Fatal(err) {
		t.Fatalf("the whole tree: %v", err)
	}
}

func TestMissingObjectIsStoredAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mirrortest.Options{})
	sha := f.gh.CreateRepo("acme", "tools").Commit("main", map[string]string{"a.md": "a"})
	r := f.repo(t, "acme/tools")
	ctx := context.Background()
	if _, err := r.Fetch(ctx, sha, filepath.Join(t.TempDir(), "1"), host.FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	o, ok, err := f.eng.DB.Snapshot(ctx, "github.com/acme/tools", sha, "")
	if err != nil || !ok {
		t.Fatal(err)
	}
	raw, err := mirrortest.RawS3(f.eng.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.RemoveObject(ctx, f.eng.Bucket, "snapshots/"+strings.TrimPrefix(o.Digest, "sha256:")+".tar.gz", minioRemove()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Fetch(ctx, sha, filepath.Join(t.TempDir(), "2"), host.FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	if c := f.gh.RepoCounts("acme", "tools").Content(); c != 2 {
		t.Fatalf("%d content fetches, want 2 (the lost archive fetched again)", c)
	}
}

// A tree's submodules are fetched by the mirror, upstream, as the client
// would fetch them (the same files, so the same digest), and the operator's
// policy applies to them: a tree cannot bring in a blocked repository's
// content.
func TestSubmodulesThroughTheMirror(t *testing.T) {
	t.Parallel()
	pol, err := policy.Parse([]byte(`{"block": ["github.com/acme/secret"]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, mirrortest.Options{Policy: pol})
	lib := f.gh.CreateRepo("acme", "lib").Commit("main", map[string]string{"skills/lib/SKILL.md": "lib"})
	secret := f.gh.CreateRepo("acme", "secret").Commit("main", map[string]string{"key.md": "secret"})
	sha := f.gh.CreateRepo("acme", "tools").Commit("main", map[string]string{
		".gitmodules": "[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib.git\n" +
			"[submodule \"secret\"]\n\tpath = hidden/secret\n\turl = https://github.com/acme/secret\n",
		"lib":           fakegithub.Gitlink(lib),
		"hidden/secret": fakegithub.Gitlink(secret),
		"plugin/p.md":   "p",
	})
	r := f.repo(t, "acme/tools")
	ctx := context.Background()
	dest := filepath.Join(t.TempDir(), "lib")
	got, err := r.Fetch(ctx, sha, dest, host.FetchOptions{Paths: []string{"lib", "plugin"}})
	if err != nil {
		t.Fatal(err)
	}
	if tree := readTree(t, dest); len(tree) != 2 || tree["lib/skills/lib/SKILL.md"] != "lib" || got.Transport != "mirror" {
		t.Fatalf("%v via %s", tree, got.Transport)
	}
	_, err = r.Fetch(ctx, sha, filepath.Join(t.TempDir(), "all"), host.FetchOptions{})
	if plugind.CodeOf(err) != plugind.CodeBlocked || !strings.Contains(err.Error(), "github.com/acme/secret") {
		t.Fatalf("a blocked submodule: %v", err)
	}
	if c := f.gh.RepoCounts("acme", "secret"); c.Total != 0 {
		t.Fatalf("the blocked submodule reached upstream: %+v", c)
	}
}
