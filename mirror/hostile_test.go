package mirror_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/mirrortest"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/policy"
	"reasonix.io/plugind/resolver/host"
)

// leakSignatures are what a database or object-store error looks like in
// an answer: none may appear in any response.
var leakSignatures = []string{"SQLSTATE", "pq:", "ERROR:", "pgx", "pgconn", "postgres", "relation ", "invalid byte sequence",
	"violates", "syntax error", "object store", "bucket", "minio", "S3", "audit refused", "reasonix_t_"}

// leak returns the first sign of an internal error in an answer, "" when
// there is none.
func (f *fixture) leak(body string) string {
	u, _ := url.Parse(f.eng.Endpoint)
	for _, s := range append(leakSignatures, f.eng.Bucket, u.Host) {
		if strings.Contains(body, s) {
			return s
		}
	}
	return ""
}

func (f *fixture) auditRows(t *testing.T) []meta.Entry {
	t.Helper()
	rows, err := f.eng.DB.AuditLog(context.Background(), meta.AuditFilter{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// served is a fixture whose mirror holds a commit of acme/tools (with a
// marketplace document), so every route can answer 200.
func served(t *testing.T, o mirrortest.Options) (*fixture, string) {
	t.Helper()
	f := newFixture(t, o)
	sha := f.gh.CreateRepo("acme", "tools").Commit("main", map[string]string{
		".claude-plugin/marketplace.json": `{"name":"tools","owner":{"name":"acme"},"plugins":[]}`,
		"plugins/a/x.md":                  "a",
	})
	if _, err := f.repo(t, "acme/tools").Fetch(context.Background(), sha, filepath.Join(t.TempDir(), "warm"), host.FetchOptions{Verify: true}); err != nil {
		t.Fatal(err)
	}
	return f, sha
}

// param is one query parameter: a value already percent-encoded.
type param struct{ name, raw string }

func enc(name, v string) param { return param{name, url.QueryEscape(v)} }

func rawQuery(ps []param) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, p.name+"="+p.raw)
	}
	return strings.Join(parts, "&")
}

// Every field a route audits, given bytes PostgreSQL text cannot hold or a
// value outside its grammar, is refused with a 400 naming it — with its
// audit row written, the bytes escaped — or, when the route does not read
// it, ignored; no request is ever answered without its audit row, and no
// answer carries a database error.
func TestHostileParametersAreAuditedOrRefused(t *testing.T) {
	t.Parallel()
	f, sha := served(t, mirrortest.Options{})
	const repoURL = "https://github.com/acme/tools.git"
	// hostile splices a percent-encoded hostile part into a valid value.
	type hostile struct {
		name   string
		code   string // percent-encoded
		escape string // how the audit log spells it ("" when it is stored as is)
	}
	hostiles := []hostile{
		{"0xFF", "%FF", `\xff`}, {"NUL", "%00", `\x00`}, {"cut UTF-8", "%C3", `\xc3`},
		{"control", "%01", ""}, {"newline", "%0A", ""}, {"long", strings.Repeat("a", 2000), ""},
	}
	splice := map[string]func(code string) string{
		"repo": func(c string) string {
			return url.QueryEscape("https://github.com/acme/t") + c + url.QueryEscape("ools.git")
		},
		"ref":  func(c string) string { return "ma" + c + "in" },
		"sha":  func(c string) string { return sha[:20] + c + sha[20:] },
		"hint": func(c string) string { return "ma" + c + "in" },
		"path": func(c string) string { return "plugins" + c },
	}
	routes := []struct {
		path   string
		params []param
		ok     int
		// ignored are parameters the route does not read: a hostile value
		// there changes nothing, and is not audited. dropped are read but
		// only as hints: a bad one is dropped, not refused.
		ignored, dropped []string
	}{
		{"/v1/refs", []param{enc("repo", repoURL)}, 200, []string{"ref", "sha", "path"}, nil},
		{"/v1/resolve", []param{enc("repo", repoURL), enc("ref", "main")}, 200, []string{"sha", "path"}, nil},
		{"/v1/reachable", []param{enc("repo", repoURL), enc("sha", sha), enc("hint", "main")}, 204, []string{"ref", "path"}, []string{"hint"}},
		{"/v1/snapshot", []param{enc("repo", repoURL), enc("sha", sha), enc("path", "plugins/a")}, 200, []string{"ref", "hint"}, nil},
		{"/v1/marketplace", []param{enc("repo", repoURL), enc("sha", sha), enc("path", ".claude-plugin/marketplace.json")}, 200, []string{"ref", "hint"}, nil},
	}
	for _, rt := range routes {
		fields := append([]string{}, rt.ignored...)
		for _, p := range rt.params {
			fields = append(fields, p.name)
		}
		for _, field := range fields {
			for _, h := range hostiles {
				ps := append([]param{}, rt.params...)
				replaced := false
				for i := range ps {
					if ps[i].name == field {
						ps[i].raw, replaced = splice[field](h.code), true
					}
				}
				if !replaced {
					ps = append(ps, param{field, splice[field](h.code)})
				}
				target := rt.path + "?" + rawQuery(ps)
				before := len(f.auditRows(t))
				resp, body := f.get(t, target, f.token)
				rows := f.auditRows(t)
				what := rt.path + " " + field + "=" + h.name
				if len(rows) != before+1 {
					t.Errorf("%s: %d: %d audit rows written, want 1", what, resp.StatusCode, len(rows)-before)
					continue
				}
				row := rows[len(rows)-1]
				if s := f.leak(body); s != "" {
					t.Errorf("%s: the answer carries %q: %s", what, s, body)
				}
				ignored := contains(rt.ignored, field) || contains(rt.dropped, field)
				switch {
				case ignored && resp.StatusCode != rt.ok:
					t.Errorf("%s: %d %s, want %d (the route does not read %s)", what, resp.StatusCode, body, rt.ok, field)
				case ignored && (row.Outcome == "error" || strings.Contains(row.Ref, "\\x")):
					t.Errorf("%s: audited %+v", what, row)
				case !ignored && (resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, field)):
					t.Errorf("%s: %d %s, want a 400 naming %s", what, resp.StatusCode, body, field)
				case !ignored && row.Outcome != "error":
					t.Errorf("%s: audit row %+v, want outcome error", what, row)
				case !ignored && h.escape != "" && !strings.Contains(row.Repo+row.Ref+row.SHA+row.Paths, h.escape):
					t.Errorf("%s: audit row %+v should record what was sent, spelled %s", what, row, h.escape)
				}
			}
		}
	}
	// The attack as reported: a snapshot request with &ref=%FF is served,
	// and audited (the ref is not the snapshot's to record).
	resp, _ := f.get(t, "/v1/snapshot?"+rawQuery(routes[3].params)+"&ref=%FF", f.token)
	rows := f.auditRows(t)
	if last := rows[len(rows)-1]; resp.StatusCode != 200 || last.Action != "snapshot" || last.Digest == "" {
		t.Fatalf("%d, last audit row %+v", resp.StatusCode, last)
	}
	// A refused URL's credentials are masked in the answer and the audit.
	const secret = "hunter2secretpw"
	resp, body := f.get(t, "/v1/refs?repo="+url.QueryEscape("https://me:"+secret+"@git.example.test/t.git?x=1"), f.token)
	rows = f.auditRows(t)
	if last := rows[len(rows)-1]; resp.StatusCode != 400 || strings.Contains(body, secret) || strings.Contains(last.Repo+last.Detail, secret) {
		t.Fatalf("a URL with credentials: %d %s, audited %+v", resp.StatusCode, body, last)
	}
	// A repeated parameter is refused rather than read one way and audited
	// another.
	if resp, body := f.get(t, "/v1/resolve?repo="+url.QueryEscape(repoURL)+"&ref=main&ref=%FF", f.token); resp.StatusCode != 400 || !strings.Contains(body, "ref is given 2 times") {
		t.Fatalf("repeated ref: %d %s", resp.StatusCode, body)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// When the audit row cannot be written (PostgreSQL refuses the insert),
// every route fails — a refusal as much as an answer — without serving
// anything or saying what the database said.
func TestAuditFailureFailsTheRequest(t *testing.T) {
	t.Parallel()
	f, sha := served(t, mirrortest.Options{})
	db := f.eng.DB.SQLDB()
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'audit refused'; END $$;
		CREATE TRIGGER refuse_audit BEFORE INSERT ON audit FOR EACH ROW EXECUTE FUNCTION refuse_audit()`); err != nil {
		t.Fatal(err)
	}
	q := "repo=" + url.QueryEscape("https://github.com/acme/tools.git")
	for _, target := range []string{
		"/v1/refs?" + q,
		"/v1/resolve?" + q + "&ref=main",
		"/v1/reachable?" + q + "&sha=" + sha,
		"/v1/snapshot?" + q + "&sha=" + sha,
		"/v1/marketplace?" + q + "&sha=" + sha,
		"/v1/snapshot?" + q + "&sha=nope",                                      // a refusal is audited too
		"/v1/resolve?repo=" + url.QueryEscape("https://github.com/evil/x.git"), // and so is a block
	} {
		resp, body := f.get(t, target, f.token)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "cannot write its audit log") ||
			!strings.Contains(body, "incident") || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %q, want 503 saying the audit log cannot be written", target, resp.StatusCode, body)
		}
		if s := f.leak(body); s != "" {
			t.Errorf("%s: the answer carries %q: %s", target, s, body)
		}
	}
	if _, err := db.ExecContext(ctx, `DROP TRIGGER refuse_audit ON audit`); err != nil {
		t.Fatal(err)
	}
	if resp, _ := f.get(t, "/v1/snapshot?"+q+"&sha="+sha, f.token); resp.StatusCode != 200 {
		t.Fatalf("with the audit log back: %d", resp.StatusCode)
	}
}

// No route answers with a database or object-store error, whatever fails
// behind it: the answer names an incident, the log has the details.
func TestNoRouteLeaksAStorageError(t *testing.T) {
	t.Parallel()
	f, sha := served(t, mirrortest.Options{})
	ctx := context.Background()
	q := "repo=" + url.QueryEscape("https://github.com/acme/tools.git")
	routes := []string{
		"/v1/refs?" + q,
		"/v1/resolve?" + q + "&ref=other",
		"/v1/reachable?" + q + "&sha=" + strings.Repeat("b", 40),
		"/v1/snapshot?" + q + "&sha=" + sha + "&path=plugins",
		"/v1/marketplace?" + q + "&sha=" + sha,
		"/v1/marketplace?" + q + "&sha=" + sha + "&path=%FF", // the reported attack
	}
	check := func(phase string, wantStatus int) {
		t.Helper()
		for _, target := range routes {
			resp, body := f.get(t, target, f.token)
			if s := f.leak(body); s != "" {
				t.Errorf("%s: %s: the answer carries %q: %s", phase, target, s, body)
			}
			if wantStatus != 0 && resp.StatusCode != wantStatus && resp.StatusCode != http.StatusBadRequest {
				t.Errorf("%s: %s: %d %s", phase, target, resp.StatusCode, body)
			}
		}
	}
	check("healthy", 0)

	// The object store loses its bucket: the snapshot route fails, naming
	// an incident.
	raw, err := mirrortest.RawS3(f.eng.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := f.get(t, "/v1/snapshot?"+q+"&sha="+sha, f.token)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	for obj := range raw.ListObjects(ctx, f.eng.Bucket, minioList()) {
		if err := raw.RemoveObject(ctx, f.eng.Bucket, obj.Key, minioRemove()); err != nil {
			t.Fatal(err)
		}
	}
	if err := raw.RemoveBucket(ctx, f.eng.Bucket); err != nil {
		t.Fatal(err)
	}
	resp, body = f.get(t, "/v1/snapshot?"+q+"&sha="+sha, f.token)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "storage failed (incident ") {
		t.Fatalf("without its bucket: %d %s", resp.StatusCode, body)
	}
	check("no bucket", 0)

	// The database loses its tables: every route fails the same way (the
	// audit log stays, so the failures are recorded).
	db := f.eng.DB.SQLDB()
	defer db.Close()
	if _, err := db.ExecContext(ctx, `DROP TABLE marketplaces, snapshots, refs, ref_lists, verdicts, negatives, leases`); err != nil {
		t.Fatal(err)
	}
	check("no tables", http.StatusServiceUnavailable)
	recorded := 0
	for _, row := range f.auditRows(t) {
		if row.Outcome == "error" && strings.Contains(row.Detail, "storage failed (incident ") {
			recorded++
		}
	}
	if recorded < len(routes) { // the bucket's failure, and five routes without tables
		t.Fatalf("%d storage failures audited, want at least %d", recorded, len(routes))
	}
}

// A policy rule written with a Unicode host blocks the sources that name
// that host, which carry it in punycode — and so does the punycode rule.
func TestUnicodePolicyRuleMatchesPunycodeSources(t *testing.T) {
	t.Parallel()
	pol, err := policy.Parse([]byte(`{"block": ["bücher.example/team"]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, mirrortest.Options{Policy: pol})
	for _, repo := range []string{"https://xn--bcher-kva.example/team/tools.git", "https://BÜCHER.example/team/tools.git", "https://xn--bcher-kva.example/Team/other.git"} {
		resp, body := f.get(t, "/v1/resolve?repo="+url.QueryEscape(repo), f.token)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, string(plugind.CodeBlocked)) || !strings.Contains(body, `bücher.example/team`) {
			t.Errorf("%s: %d %s, want install.blocked naming the rule", repo, resp.StatusCode, body)
		}
	}
	log, err := f.eng.DB.AuditLog(context.Background(), meta.AuditFilter{Outcome: "blocked"})
	if err != nil || len(log) != 3 || log[0].Repo != "xn--bcher-kva.example/team/tools" || log[1].Repo != "xn--bcher-kva.example/team/tools" {
		t.Fatalf("audit: %+v %v", log, err)
	}
	// Another host, and another owner, pass the policy (and then fail
	// upstream, which is closed in tests).
	for _, repo := range []string{"https://bucher.example/team/tools.git", "https://xn--bcher-kva.example/other/tools.git"} {
		if resp, body := f.get(t, "/v1/resolve?repo="+url.QueryEscape(repo), f.token); resp.StatusCode == http.StatusForbidden {
			t.Errorf("%s: blocked: %s", repo, body)
		}
	}
}

// A snapshot of many folders at once (a bulk plan's, of one repository)
// is stored and served like any other, however long the list: the folder
// list is no part of an index entry's size limit.
func TestSnapshotOfManyFolders(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mirrortest.Options{})
	files := map[string]string{}
	var paths []string
	for i := range 200 {
		p := fmt.Sprintf("plugins/%x", sha256.Sum256([]byte{byte(i)}))[:40]
		files[p+"/SKILL.md"] = "skill"
		paths = append(paths, p)
	}
	sha := f.gh.CreateRepo("acme", "many").Commit("main", files)
	dest := filepath.Join(t.TempDir(), "some")
	if _, err := f.repo(t, "acme/many").Fetch(context.Background(), sha, dest, host.FetchOptions{Paths: paths[:150]}); err != nil {
		t.Fatal(err)
	}
	if tree := readTree(t, dest); len(tree) != 150 {
		t.Fatalf("%d files, want 150", len(tree))
	}
}
