package mirror_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"reasonix.io/plugind"
	"reasonix.io/plugind/checksumlog"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/mirrortest"
	"reasonix.io/plugind/mirror"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/mirror/policy"
)

// logOps are Go's sumdb client's operations over HTTP to a replica's /log,
// with the mirror token, its configuration and cache in memory: the client
// checks every answer (signatures, inclusion proofs, the tree it saw last).
type logOps struct {
	t          *testing.T
	url, token string
	vkey       string
	mu         sync.Mutex
	config     map[string][]byte
	cache      map[string][]byte
	security   []string
}

func newLogClient(t *testing.T, url, token, vkey string) (*sumdb.Client, *logOps) {
	ops := &logOps{t: t, url: url, token: token, vkey: vkey, config: map[string][]byte{}, cache: map[string][]byte{}}
	return sumdb.NewClient(ops), ops
}

func (o *logOps) ReadRemote(path string) ([]byte, error) {
	status, body := logGet(o.t, o.url+"/log"+path, o.token)
	if status != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d %s", path, status, body)
	}
	return body, nil
}

func (o *logOps) ReadConfig(file string) ([]byte, error) {
	if file == "key" {
		return []byte(o.vkey), nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.config[file], nil
}

func (o *logOps) WriteConfig(file string, old, new []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !bytes.Equal(o.config[file], old) {
		return sumdb.ErrWriteConflict
	}
	o.config[file] = new
	return nil
}

func (o *logOps) ReadCache(file string) ([]byte, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if b, ok := o.cache[file]; ok {
		return b, nil
	}
	return nil, os.ErrNotExist
}

func (o *logOps) WriteCache(file string, data []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cache[file] = data
}

func (o *logOps) Log(msg string) { o.t.Log(msg) }

func (o *logOps) SecurityError(msg string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.security = append(o.security, msg)
}

func logGet(t *testing.T, url, token string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// newLogKey makes a log key file and reads it as serve --log-key does.
func newLogKey(t *testing.T) *mirror.LogKey {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log.key")
	if _, err := mirror.CreateLogKey("mirror.example.test", path); err != nil {
		t.Fatal(err)
	}
	k, err := mirror.ReadLogKey(path)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// logFixture is newFixture with the replica serving the checksum log.
func logFixture(t *testing.T, o mirrortest.Options) (*fixture, *mirror.LogKey) {
	t.Helper()
	if o.LogKey == nil {
		o.LogKey = newLogKey(t)
	}
	return newFixture(t, o), o.LogKey
}

// lookup looks up the record of place/path@sha through c and parses it.
func lookup(c *sumdb.Client, place, path, sha string) (checksumlog.Record, error) {
	lines, err := c.Lookup(checksumlog.LogPath(place, path), sha)
	if err != nil {
		return checksumlog.Record{}, err
	}
	if len(lines) != 1 {
		return checksumlog.Record{}, fmt.Errorf("%d lines for %s: %q", len(lines), checksumlog.KeyOf(place, path, sha), lines)
	}
	return checksumlog.ParseLine(lines[0], place, path)
}

// digestOf is the tree digest a client computes for files written out.
func digestOf(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, _, err := plugind.TreeDigest(dir, plugind.DefaultBudget)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func logSize(t *testing.T, db *meta.DB) int64 {
	t.Helper()
	tree, err := db.LogTree(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tree.N
}

// An unknown record is fetched and verified by the mirror, appended and
// proven to the client; asked again, by another client, it is the same
// record, and upstream is not asked again.
func TestChecksumLogLookup(t *testing.T) {
	t.Parallel()
	f, key := logFixture(t, mirrortest.Options{})
	files := map[string]string{"README.md": "r", "plugins/fmt/x.md": "x", "plugins/fmt/bin/run": "run", "plugins/lint/y.md": "y"}
	sha := f.gh.CreateRepo("acme", "tools").Commit("main", files)
	const place = "github.com/acme/tools"
	c, ops := newLogClient(t, f.rep.URL, f.token, key.Verifier)

	root, err := lookup(c, place, "", sha)
	if err != nil {
		t.Fatal(err)
	}
	if want := digestOf(t, files); root.Digest != want || root.GitTree != f.gh.Repo("acme", "tools").TreeID(sha, "") || root.Commit != sha {
		t.Fatalf("root record %+v, want digest %s and the commit's tree", root, want)
	}
	folder, err := lookup(c, place, "plugins/fmt", sha)
	if err != nil {
		t.Fatal(err)
	}
	// A folder of the whole tree the mirror stored: its git tree id is
	// the one the fetch of the whole proved.
	if want := digestOf(t, map[string]string{"x.md": "x", "bin/run": "run"}); folder.Digest != want || folder.GitTree != f.gh.Repo("acme", "tools").TreeID(sha, "plugins/fmt") {
		t.Fatalf("folder record %+v, want digest %s (its files relative to it) and the folder's git tree", folder, want)
	}
	if n := f.gh.RepoCounts("acme", "tools").Content(); n != 1 {
		t.Fatalf("%d upstream content fetches for two records of one commit, want 1", n)
	}

	// Another client, nothing cached: the same records, no upstream.
	upstream := f.gh.RepoCounts("acme", "tools").Total
	c2, ops2 := newLogClient(t, f.rep.URL, f.token, key.Verifier)
	for _, p := range []string{"", "plugins/fmt"} {
		again, err := lookup(c2, place, p, sha)
		if err != nil || (p == "" && again != root) || (p != "" && again != folder) {
			t.Fatalf("%q again: %+v %v", p, again, err)
		}
	}
	if n := f.gh.RepoCounts("acme", "tools").Total; n != upstream || logSize(t, f.eng.DB) != 2 {
		t.Fatalf("known records: %d upstream requests (was %d), log size %d, want 2", n, upstream, logSize(t, f.eng.DB))
	}
	if len(ops.security)+len(ops2.security) != 0 {
		t.Fatalf("security errors: %q %q", ops.security, ops2.security)
	}

	// The head is signed by the key whose verifier the operator printed.
	status, body := logGet(t, f.rep.URL+"/log/latest", f.token)
	v, _ := note.NewVerifier(key.Verifier)
	n, err := note.Open(body, note.VerifierList(v))
	if status != 200 || err != nil {
		t.Fatalf("latest: %d %v %s", status, err, body)
	}
	if tree, err := tlog.ParseTree([]byte(n.Text)); err != nil || tree.N != 2 {
		t.Fatalf("latest tree %+v %v", tree, err)
	}

	// Every request is audited: the first lookups appended, the next hit.
	entries, err := f.eng.DB.AuditLog(context.Background(), meta.AuditFilter{Action: "log.lookup"})
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, e := range entries {
		outcomes = append(outcomes, e.Outcome+" "+e.Paths)
		if e.Repo != place || e.SHA != sha || e.Client != "tester" {
			t.Errorf("audit entry %+v", e)
		}
	}
	if got := strings.Join(outcomes, ","); got != "appended ,appended plugins/fmt,hit ,hit plugins/fmt" {
		t.Errorf("lookup outcomes %q", got)
	}
	if tiles, _ := f.eng.DB.AuditLog(context.Background(), meta.AuditFilter{Action: "log.tile"}); len(tiles) == 0 {
		t.Error("tile requests were not audited")
	}

	// Upper case travels escaped (the client's "!a" for "A") and comes
	// back as the repository's own spelling.
	mixed := map[string]string{"Plugins/Fmt/X.md": "X"}
	msha := f.gh.CreateRepo("Acme", "Mixed").Commit("main", mixed)
	rec, err := lookup(c, "github.com/Acme/Mixed", "Plugins/Fmt", msha)
	if err != nil || rec.Digest != digestOf(t, map[string]string{"X.md": "X"}) {
		t.Fatalf("a mixed-case key: %+v %v", rec, err)
	}
}

// Tiles and records past 256 (a full tile, a level-1 tile) prove to the
// client, and malformed or out-of-range requests are refused, naming what
// is wrong, without a database error in any answer.
func TestChecksumLogTilesAndRefusals(t *testing.T) {
	t.Parallel()
	f, key := logFixture(t, mirrortest.Options{})
	ctx := context.Background()
	sha := strings.Repeat("c", 40)
	for i := range 300 {
		r := checksumlog.Record{Place: "github.com/acme/bulk", Path: fmt.Sprintf("plugins/p%03d", i), Commit: sha, Digest: "sha256:" + strings.Repeat(fmt.Sprintf("%x", i%16), 64)}
		id, appended, err := f.eng.DB.AppendLogRecord(ctx, checksumlog.LogPath(r.Place, r.Path), sha, []byte(r.Line()))
		if err != nil || !appended || id != int64(i) {
			t.Fatalf("append %d: id %d appended %v %v", i, id, appended, err)
		}
	}
	c, ops := newLogClient(t, f.rep.URL, f.token, key.Verifier)
	for _, i := range []int{0, 255, 256, 299} {
		rec, err := lookup(c, "github.com/acme/bulk", fmt.Sprintf("plugins/p%03d", i), sha)
		if err != nil || rec.Digest != "sha256:"+strings.Repeat(fmt.Sprintf("%x", i%16), 64) {
			t.Fatalf("record %d: %+v %v", i, rec, err)
		}
	}
	if len(ops.security) != 0 {
		t.Fatalf("security errors: %q", ops.security)
	}
	if n := f.gh.Counts().Total; n != 0 {
		t.Fatalf("known records went upstream: %d requests", n)
	}

	for path, want := range map[string]struct {
		status int
		says   string
	}{
		"/log/tile/8/0/000":                                     {200, ""},
		"/log/tile/8/0/001.p/44":                                {200, ""},
		"/log/tile/8/1/000.p/1":                                 {200, ""},
		"/log/tile/8/data/001.p/44":                             {200, "github.com/acme/bulk/-/plugins/p299 " + sha},
		"/log/tile/8/0/002":                                     {404, "past the log's 300 records"},
		"/log/tile/8/0/001":                                     {404, "not in the checksum log"}, // 44 of 256: not full yet
		"/log/tile/8/data/x001/000":                             {404, "past the log"},
		"/log/tile/8/5/000":                                     {404, "not in the checksum log"},
		"/log/tile/4/0/000":                                     {400, "height 4"},
		"/log/tile/8/0/abc":                                     {400, "not a tile path"},
		"/log/lookup/github.com/acme/bulk@" + sha:               {404, ""},
		"/log/lookup/github.com/acme/bulk@v1.0.0":               {400, "40-hex"},
		"/log/lookup/github.com/acme/bulk":                      {400, "LOGPATH@COMMIT"},
		"/log/lookup/escaped.invalid/!!@" + sha:                 {400, "escaped"},
		"/log/lookup/not%20a%20path@" + sha:                     {400, ""},
		"/log/lookup/" + strings.Repeat("a/", 3000) + "@" + sha: {400, "at most"},
		"/log/nothing":                                          {404, "no such route"},
		"/log/":                                                 {404, "no such route"},
	} {
		status, body := logGet(t, f.rep.URL+path, f.token)
		if status != want.status || !strings.Contains(string(body), want.says) {
			t.Errorf("%s: %d %.300s; want %d saying %q", path, status, body, want.status, want.says)
		}
		if strings.Contains(strings.ToLower(string(body)), "sqlstate") || strings.Contains(string(body), "log_records") {
			t.Errorf("%s: a database error in the answer: %s", path, body)
		}
	}
	_, full := logGet(t, f.rep.URL+"/log/tile/8/0/000", f.token)
	if len(full) != 256*tlog.HashSize {
		t.Errorf("a full tile is %d bytes", len(full))
	}
	for _, path := range []string{"/log/latest", "/log/tile/8/0/000", "/log/lookup/github.com/acme/bulk/-/plugins/p000@" + sha} {
		if status, body := logGet(t, f.rep.URL+path, ""); status != http.StatusUnauthorized || !strings.Contains(string(body), "REASONIX_MIRROR_TOKEN") {
			t.Errorf("%s without a token: %d %s", path, status, body)
		}
	}
	if logSize(t, f.eng.DB) != 300 {
		t.Errorf("refused lookups changed the log: %d records", logSize(t, f.eng.DB))
	}

	// A client that trusts another key refuses the log.
	_, other, _ := note.GenerateKey(nil, "mirror.example.test")
	wrong, _ := newLogClient(t, f.rep.URL, f.token, other)
	if _, err := lookup(wrong, "github.com/acme/bulk", "plugins/p000", sha); err == nil {
		t.Error("a client with another verifier key accepted the log")
	}
}

// Records the mirror cannot make — no such commit, a commit on no branch or
// tag, no such folder or repository, a repository the policy or the token's
// scopes refuse — are refused, naming why, and append nothing; a known
// record is answered to a token outside its scopes (its tiles hold it
// anyway).
func TestChecksumLogRefusesWhatItCannotVerify(t *testing.T) {
	t.Parallel()
	pol, err := policy.Parse([]byte(`{"block": ["github.com/evil"]}`))
	if err != nil {
		t.Fatal(err)
	}
	f, key := logFixture(t, mirrortest.Options{Policy: pol})
	repo := f.gh.CreateRepo("acme", "tools")
	sha := repo.Commit("main", map[string]string{"plugins/a/x.md": "a", "file.md": "f"})
	hidden := repo.CommitUnreachable("", map[string]string{"evil.md": "x"})
	evil := f.gh.CreateRepo("evil", "tools").Commit("main", map[string]string{"a.md": "a"})
	third := f.gh.CreateRepo("third", "tools").Commit("main", map[string]string{"a.md": "a"})
	other := f.gh.CreateRepo("other", "tools").Commit("main", map[string]string{"a.md": "a"})
	c, _ := newLogClient(t, f.rep.URL, f.token, key.Verifier)
	if _, err := lookup(c, "github.com/other/tools", "", other); err != nil {
		t.Fatal(err)
	}
	scoped := f.eng.Token(t, "scoped", "github.com/acme")

	for name, tc := range map[string]struct {
		place, path, sha, token string
		says                    string
	}{
		"missing commit":     {"github.com/acme/tools", "", strings.Repeat("d", 40), f.token, "404"},
		"unreachable commit": {"github.com/acme/tools", "", hidden, f.token, "404"},
		"missing folder":     {"github.com/acme/tools", "plugins/nope", sha, f.token, `has no folder \"plugins/nope\"`},
		"a file, not folder": {"github.com/acme/tools", "file.md", sha, f.token, `has no folder \"file.md\"`},
		"missing repository": {"github.com/acme/nothing", "", sha, f.token, "404"},
		"blocked":            {"github.com/evil/tools", "", evil, f.token, `"github.com/evil"`},
		"out of scope":       {"github.com/third/tools", "", third, scoped, "outside the scopes"},
		"unfetchable place":  {"127.0.0.1:9/team/tools", "", sha, f.token, "cannot add one"},
	} {
		cl, ops := newLogClient(t, f.rep.URL, tc.token, key.Verifier)
		_, err := lookup(cl, tc.place, tc.path, tc.sha)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tc.says)
		}
		if len(ops.security) != 0 {
			t.Errorf("%s: a refusal is not a security error: %q", name, ops.security)
		}
	}
	if n := logSize(t, f.eng.DB); n != 1 {
		t.Fatalf("refused lookups appended: %d records, want 1", n)
	}
	// Known to the log: any token reads it.
	cs, _ := newLogClient(t, f.rep.URL, scoped, key.Verifier)
	if _, err := lookup(cs, "github.com/other/tools", "", other); err != nil {
		t.Errorf("a known record to a token outside its scopes: %v", err)
	}
	if _, err := lookup(cs, "github.com/acme/tools", "plugins/a", sha); err != nil {
		t.Errorf("an unknown record inside the token's scopes: %v", err)
	}
	blocked, _ := f.eng.DB.AuditLog(context.Background(), meta.AuditFilter{Action: "log.lookup", Outcome: "blocked"})
	scopes, _ := f.eng.DB.AuditLog(context.Background(), meta.AuditFilter{Action: "log.lookup", Outcome: "out_of_scope"})
	if len(blocked) != 1 || len(scopes) != 1 || scopes[0].Client != "scoped" {
		t.Errorf("audit: blocked %+v, out of scope %+v", blocked, scopes)
	}
}

// Two replicas over one database append concurrently, each record once,
// the ids dense; a record appended through one is found through the other,
// whose head is the same bytes (one key, deterministic signatures); a
// restarted replica serves the same log.
func TestChecksumLogReplicas(t *testing.T) {
	t.Parallel()
	eng := mirrortest.Open(t)
	gh := fakegithub.New(t)
	key := newLogKey(t)
	start := func() *mirrortest.Replica {
		up, err := mirrortest.Upstream(gh)
		if err != nil {
			t.Fatal(err)
		}
		return eng.StartReplica(t, mirrortest.Options{Upstream: up, LogKey: key})
	}
	a, b := start(), start()
	token := eng.Token(t, "fleet")
	type key3 struct{ place, path, sha string }
	var keys []key3
	for r := range 3 {
		files := map[string]string{}
		for p := range 4 {
			files[fmt.Sprintf("plugins/p%d/x.md", p)] = fmt.Sprintf("%d/%d", r, p)
		}
		name := fmt.Sprintf("tools%d", r)
		sha := gh.CreateRepo("acme", name).Commit("main", files)
		for p := range 4 {
			keys = append(keys, key3{"github.com/acme/" + name, fmt.Sprintf("plugins/p%d", p), sha})
		}
		keys = append(keys, key3{"github.com/acme/" + name, "", sha})
	}

	// Eight clients, half on each replica, all looking up every key at once.
	var wg sync.WaitGroup
	results := make([][]checksumlog.Record, 8)
	errs := make(chan error, 8*len(keys))
	for i := range 8 {
		rep := a
		if i%2 == 1 {
			rep = b
		}
		c, _ := newLogClient(t, rep.URL, token, key.Verifier)
		results[i] = make([]checksumlog.Record, len(keys))
		for j, k := range keys {
			wg.Go(func() {
				rec, err := lookup(c, k.place, k.path, k.sha)
				if err != nil {
					errs <- fmt.Errorf("client %d, %s: %w", i, checksumlog.KeyOf(k.place, k.path, k.sha), err)
				}
				results[i][j] = rec
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	for i := 1; i < 8; i++ {
		for j := range keys {
			if results[i][j] != results[0][j] {
				t.Errorf("client %d saw %+v, client 0 %+v", i, results[i][j], results[0][j])
			}
		}
	}
	if n := logSize(t, eng.DB); n != int64(len(keys)) {
		t.Fatalf("%d records for %d keys", n, len(keys))
	}
	for r := range 3 {
		if n := gh.RepoCounts("acme", fmt.Sprintf("tools%d", r)).Content(); n != 1 {
			t.Errorf("tools%d fetched upstream %d times, want once across replicas", r, n)
		}
	}
	latest := func(rep *mirrortest.Replica) []byte {
		status, body := logGet(t, rep.URL+"/log/latest", token)
		if status != 200 {
			t.Fatalf("latest: %d %s", status, body)
		}
		return body
	}
	if la, lb := latest(a), latest(b); !bytes.Equal(la, lb) {
		t.Errorf("two replicas sign different heads of one log:\n%s\n%s", la, lb)
	}

	// One appended through A, then looked up through B.
	sha := gh.CreateRepo("acme", "late").Commit("main", map[string]string{"a.md": "a"})
	ca, opsA := newLogClient(t, a.URL, token, key.Verifier)
	viaA, err := lookup(ca, "github.com/acme/late", "", sha)
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := newLogClient(t, b.URL, token, key.Verifier)
	if viaB, err := lookup(cb, "github.com/acme/late", "", sha); err != nil || viaB != viaA {
		t.Fatalf("via B: %+v %v; via A %+v", viaB, err, viaA)
	}
	hits, _ := eng.DB.AuditLog(context.Background(), meta.AuditFilter{Action: "log.lookup", Repo: "github.com/acme/late"})
	if len(hits) != 2 || hits[0].Outcome != "appended" || hits[1].Outcome != "hit" || hits[0].Replica == hits[1].Replica {
		t.Errorf("audit of the late record: %+v", hits)
	}

	// Restarted: the same log, and a client that remembers its head agrees.
	before := latest(a)
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	c := start()
	if got := latest(c); !bytes.Equal(got, before) {
		t.Fatalf("after a restart the head is\n%s\nwas\n%s", got, before)
	}
	// The client of A, its cache dropped, its last head kept, now on C.
	remembers := &logOps{t: t, url: c.URL, token: token, vkey: key.Verifier, config: opsA.config, cache: map[string][]byte{}}
	if again, err := lookup(sumdb.NewClient(remembers), "github.com/acme/late", "", sha); err != nil || again != viaA || len(remembers.security) != 0 {
		t.Fatalf("after a restart: %+v %v %q", again, err, remembers.security)
	}
	cc, _ := newLogClient(t, c.URL, token, key.Verifier)
	if again, err := lookup(cc, keys[0].place, keys[0].path, keys[0].sha); err != nil || again != results[0][0] {
		t.Fatalf("after a restart, a new client: %+v %v", again, err)
	}
}

// Appends through two connection pools (as two replicas have) at once:
// every key once, ids dense from 0, and the tree the database keeps is the
// one the records make.
func TestAppendLogRecordSerializes(t *testing.T) {
	t.Parallel()
	dsn := mirrortest.Postgres(t)
	ctx := context.Background()
	db1, err := meta.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db1.Close()
	db2, err := meta.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	const keys = 60
	var wg sync.WaitGroup
	var mu sync.Mutex
	ids := map[string]map[int64]bool{}
	for w := range 12 {
		db := db1
		if w%2 == 1 {
			db = db2
		}
		wg.Go(func() {
			// Half the workers append one record at a time, half in
			// batches of up to 7 (the mirror's logAppender), each with a
			// key twice.
			batch := 1
			if w%4 >= 2 {
				batch = 2 + w%6
			}
			for first := 0; first < keys; first += batch {
				var recs []checksumlog.Record
				var appends []meta.LogAppend
				for j := first; j < min(first+batch, keys); j++ {
					k := (j + w*5) % keys // every worker every key, in a different order
					r := checksumlog.Record{Place: "github.com/acme/tools", Path: fmt.Sprintf("p%d", k), Commit: strings.Repeat("a", 40), Digest: "sha256:" + strings.Repeat("b", 64)}
					recs = append(recs, r)
					appends = append(appends, meta.LogAppend{LogPath: checksumlog.LogPath(r.Place, r.Path), Commit: r.Commit, Text: []byte(r.Line())})
				}
				if batch > 1 {
					recs, appends = append(recs, recs[0]), append(appends, appends[0])
				}
				got, err := db.AppendLogRecords(ctx, appends)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for i, r := range recs {
					if ids[r.Key()] == nil {
						ids[r.Key()] = map[int64]bool{}
					}
					ids[r.Key()][got[i].ID] = true
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	seen := map[int64]bool{}
	for k, set := range ids {
		if len(set) != 1 {
			t.Errorf("%s got ids %v", k, set)
		}
		for id := range set {
			seen[id] = true
		}
	}
	tree, err := db1.LogTree(ctx)
	if err != nil || tree.N != keys || len(seen) != keys {
		t.Fatalf("tree %+v (%v), %d distinct ids, want %d", tree, err, len(seen), keys)
	}
	// Recompute the tree from the records alone.
	texts, err := db1.LogRecords(ctx, 0, keys)
	if err != nil {
		t.Fatal(err)
	}
	var hashes []tlog.Hash
	r := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = hashes[x]
		}
		return out, nil
	})
	for i, text := range texts {
		hs, err := tlog.StoredHashes(int64(i), text, r)
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, hs...)
	}
	if th, _ := tlog.TreeHash(keys, r); th != tree.Hash {
		t.Fatalf("the stored tree hash %v is not the records' %v", tree.Hash, th)
	}
	tile := tlog.Tile{H: 8, L: 0, N: 0, W: keys}
	stored, err := db1.LogTile(ctx, tile)
	if want, _ := tlog.ReadTileData(tile, r); err != nil || !bytes.Equal(stored, want) {
		t.Fatalf("the stored hashes are not the records' (%v)", err)
	}
}

// Without --log-key there is no log.
func TestNoLogWithoutKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mirrortest.Options{})
	for _, path := range []string{"/log/latest", "/log/tile/8/0/000", "/log/lookup/github.com/a/b@" + strings.Repeat("a", 40)} {
		if status, body := logGet(t, f.rep.URL+path, f.token); status != http.StatusNotFound || !strings.Contains(string(body), "no such route") {
			t.Errorf("%s: %d %s", path, status, body)
		}
	}
}

// The log's tables gone (the database failing under it): every log route
// answers 503 naming an incident, never what PostgreSQL said, and the
// failures are audited.
func TestChecksumLogLeaksNoStorageError(t *testing.T) {
	t.Parallel()
	f, key := logFixture(t, mirrortest.Options{})
	sha := f.gh.CreateRepo("acme", "tools").Commit("main", map[string]string{"a.md": "a"})
	c, _ := newLogClient(t, f.rep.URL, f.token, key.Verifier)
	if _, err := lookup(c, "github.com/acme/tools", "", sha); err != nil {
		t.Fatal(err)
	}
	db := f.eng.DB.SQLDB()
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), `DROP TABLE log_records, log_hashes, log_tree`); err != nil {
		t.Fatal(err)
	}
	other := f.gh.CreateRepo("acme", "other").Commit("main", map[string]string{"b.md": "b"})
	for _, path := range []string{
		"/log/latest", "/log/tile/8/0/000.p/1", "/log/tile/8/data/000.p/1",
		"/log/lookup/github.com/acme/tools@" + sha, "/log/lookup/github.com/acme/other@" + other,
	} {
		status, body := logGet(t, f.rep.URL+path, f.token)
		if status != http.StatusServiceUnavailable || !strings.Contains(string(body), "storage failed (incident ") {
			t.Errorf("%s: %d %s", path, status, body)
		}
		if s := f.leak(string(body)); s != "" || strings.Contains(string(body), "log_") {
			t.Errorf("%s: the answer carries %q: %s", path, s, body)
		}
	}
	failed := 0
	for _, row := range f.auditRows(t) {
		if strings.HasPrefix(row.Action, "log.") && row.Outcome == "error" && strings.Contains(row.Detail, "incident") {
			failed++
		}
	}
	if failed != 5 {
		t.Errorf("%d failed log requests audited, want 5", failed)
	}
}

// A record of a tree holding a submodule from a repository outside the
// token's scopes is refused to that token as its snapshot would be; a
// folder without it is logged.
func TestChecksumLogSubmoduleOutOfScope(t *testing.T) {
	t.Parallel()
	f, key := logFixture(t, mirrortest.Options{})
	lib := f.gh.CreateRepo("other", "lib").Commit("main", map[string]string{"lib.md": "lib"})
	sha := f.gh.CreateRepo("acme", "tools").Commit("main", map[string]string{
		".gitmodules": "[submodule \"lib\"]\n\tpath = vendor/lib\n\turl = https://github.com/other/lib\n",
		"vendor/lib":  fakegithub.Gitlink(lib),
		"plugin/p.md": "p",
	})
	scoped := f.eng.Token(t, "scoped", "github.com/acme")
	c, _ := newLogClient(t, f.rep.URL, scoped, key.Verifier)
	if _, err := lookup(c, "github.com/acme/tools", "", sha); err == nil || !strings.Contains(err.Error(), "github.com/other/lib") {
		t.Fatalf("a tree with a submodule outside the scopes: %v", err)
	}
	if rec, err := lookup(c, "github.com/acme/tools", "plugin", sha); err != nil || rec.Digest != digestOf(t, map[string]string{"p.md": "p"}) {
		t.Fatalf("the folder without it: %+v %v", rec, err)
	}
	refused, _ := f.eng.DB.AuditLog(context.Background(), meta.AuditFilter{Action: "log.lookup", Outcome: "out_of_scope"})
	if len(refused) != 1 || logSize(t, f.eng.DB) != 1 {
		t.Fatalf("audit %+v, log size %d", refused, logSize(t, f.eng.DB))
	}
}
