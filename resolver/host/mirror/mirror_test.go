package mirror

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

const sha1 = "0123456789abcdef0123456789abcdef01234567"

// tree is a snapshot a fake mirror serves: its files, archive and digest.
type tree struct {
	files   map[string]string
	archive []byte
	digest  string
}

func makeTree(t *testing.T, files map[string]string) tree {
	t.Helper()
	dir := t.TempDir()
	names := make([]string, 0, len(files))
	for n, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	d, _, err := plugind.TreeDigest(dir, plugind.DefaultBudget)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: int64(len(files[n]))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return tree{files: files, archive: buf.Bytes(), digest: d}
}

// fakeMirror is a replica whose answers the test decides.
type fakeMirror struct {
	*httptest.Server
	hits    atomic.Int32
	handler http.HandlerFunc
}

func newFake(t *testing.T, token string, h http.HandlerFunc) *fakeMirror {
	f := &fakeMirror{handler: h}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "bad token", "errorCode": "install.source_unreadable"})
			return
		}
		f.handler(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func apiErr(w http.ResponseWriter, status int, code plugind.Code, kind, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg, "errorCode": string(code), "kind": kind, "rule": ""})
}

func serveTree(tr tree) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/snapshot":
			w.Header().Set(HeaderDigest, tr.digest)
			w.Header().Set(HeaderVerified, "true")
			_, _ = w.Write(tr.archive)
		case "/v1/resolve":
			w.Header().Set("ETag", `"`+sha1+`"`)
			if r.Header.Get("If-None-Match") == `"`+sha1+`"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]string{"sha": sha1, "ref": "HEAD"})
		case "/v1/refs":
			_ = json.NewEncoder(w).Encode(map[string]any{"head": "main", "commits": map[string]string{"main": sha1, "HEAD": sha1}})
		case "/v1/reachable":
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}
}

var ghSource = func() source.Source {
	s, err := source.Parse("https://github.com/acme/tools")
	if err != nil {
		panic(err)
	}
	return s
}()

func openRepo(t *testing.T, cfg Config) host.Repo {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Open(ghSource)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		ok   bool
		urls []string
		only bool
		err  string
	}{
		{name: "unset", env: nil},
		{name: "one", env: map[string]string{EnvURLs: "https://mirror.example.com/", EnvToken: " tok "}, ok: true, urls: []string{"https://mirror.example.com"}},
		{name: "list", env: map[string]string{EnvURLs: "http://127.0.0.1:1, https://m2.example.com/base ,", EnvOnly: "1"}, ok: true, only: true,
			urls: []string{"http://127.0.0.1:1", "https://m2.example.com/base"}},
		{name: "plain http elsewhere", env: map[string]string{EnvURLs: "http://mirror.example.com"}, err: "in the clear"},
		{name: "userinfo", env: map[string]string{EnvURLs: "https://u:secretpw@mirror.example.com"}, err: "credentials"},
		{name: "scheme", env: map[string]string{EnvURLs: "ftp://mirror.example.com"}, err: "https"},
		{name: "query", env: map[string]string{EnvURLs: "https://mirror.example.com/?x=1"}, err: "query"},
		{name: "only without url", env: map[string]string{EnvOnly: "1"}, err: "needs REASONIX_MIRROR"},
		{name: "only bad", env: map[string]string{EnvURLs: "https://m.example.com", EnvOnly: "yes"}, err: "want 1 or 0"},
		{name: "empty list", env: map[string]string{EnvURLs: " , "}, err: "no URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ok, err := ConfigFromEnv(func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("%v, want error containing %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "secretpw") {
					t.Fatalf("error leaks the password: %v", err)
				}
				if plugind.CodeOf(err) != plugind.CodeInvalidSource {
					t.Fatalf("code %q", plugind.CodeOf(err))
				}
				return
			}
			if err != nil || ok != tc.ok || cfg.Only != tc.only || strings.Join(cfg.URLs, " ") != strings.Join(tc.urls, " ") {
				t.Fatalf("%+v ok=%v err=%v", cfg, ok, err)
			}
			if ok && tc.env[EnvToken] != "" && cfg.Token != "tok" {
				t.Fatalf("token %q", cfg.Token)
			}
		})
	}
}

func TestFetchVerifiesAndHonoursPaths(t *testing.T) {
	t.Parallel()
	tr := makeTree(t, map[string]string{"plugins/a/x.md": "a", "plugins/b/y.md": "b"})
	m := newFake(t, "tok", serveTree(tr))
	r := openRepo(t, Config{URLs: []string{m.URL}, Token: "tok"})
	dest := filepath.Join(t.TempDir(), "out")
	got, err := r.Fetch(context.Background(), sha1, dest, host.FetchOptions{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Transport != "mirror" || !got.Verified || got.Files != 2 || got.Bytes != 2 {
		t.Fatalf("%+v", got)
	}
	// Include is applied again on the client: whatever the mirror sends,
	// only the asked-for folders are written (here the digest then
	// differs from the whole tree's, so it is refused).
	dest2 := filepath.Join(t.TempDir(), "out")
	_, err = r.Fetch(context.Background(), sha1, dest2, host.FetchOptions{Paths: []string{"plugins/a"}})
	if plugind.CodeOf(err) != plugind.CodeDigestMismatch {
		t.Fatalf("a tree that is not what the mirror named: %v", err)
	}
	if _, serr := os.Stat(dest2); !os.IsNotExist(serr) {
		t.Fatal("a refused snapshot must leave nothing behind")
	}
	// A budget applies to what is written.
	dest3 := filepath.Join(t.TempDir(), "out")
	_, err = r.Fetch(context.Background(), sha1, dest3, host.FetchOptions{Budget: plugind.Budget{MaxFiles: 1, MaxBytes: 1 << 20}})
	if plugind.CodeOf(err) != plugind.CodeBudgetExceeded || !host.Fatal(err) {
		t.Fatalf("budget: %v", err)
	}
}

func TestDigestMismatchIsFinal(t *testing.T) {
	t.Parallel()
	good := makeTree(t, map[string]string{"a.md": "good"})
	bad := makeTree(t, map[string]string{"a.md": "evil"})
	// Both replicas send altered content under the good digest (they share
	// one object store); the client refuses at the first and asks no other.
	altered := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderDigest, good.digest)
		_, _ = w.Write(bad.archive)
	}
	m1, m2 := newFake(t, "tok", altered), newFake(t, "tok", altered)
	up := &countingUpstream{}
	r := inFront(t, up, Config{URLs: []string{m1.URL, m2.URL}, Token: "tok"})
	dest := filepath.Join(t.TempDir(), "out")
	_, err := r.Fetch(context.Background(), sha1, dest, host.FetchOptions{})
	if plugind.CodeOf(err) != plugind.CodeDigestMismatch || !strings.Contains(err.Error(), good.digest) {
		t.Fatalf("%v", err)
	}
	if m2.hits.Load() != 0 || up.fetches.Load() != 0 {
		t.Fatalf("a digest mismatch was retried: replica 2 %d, upstream %d", m2.hits.Load(), up.fetches.Load())
	}
	if _, serr := os.Stat(dest); !os.IsNotExist(serr) {
		t.Fatal("nothing may be left of a refused snapshot")
	}
}

// countingUpstream stands for the upstream hosts: it counts what it is
// asked and answers from a fixed tree.
type countingUpstream struct {
	fetches, resolves atomic.Int32
}

func (u *countingUpstream) Open(src source.Source) (host.Repo, error) {
	return &upRepo{u: u, src: src}, nil
}

type upRepo struct {
	u   *countingUpstream
	src source.Source
}

func (r *upRepo) Source() source.Source { return r.src }
func (r *upRepo) Refs(context.Context) (*host.Refs, error) {
	return &host.Refs{Head: "main", Commits: map[string]string{"main": sha1}}, nil
}
func (r *upRepo) Resolve(context.Context, string, *host.Pin) (host.Pin, error) {
	r.u.resolves.Add(1)
	return host.Pin{SHA: sha1}, nil
}
func (r *upRepo) Reachable(context.Context, string, string) error { return nil }
func (r *upRepo) Fetch(_ context.Context, _, dest string, _ host.FetchOptions) (*host.Fetched, error) {
	r.u.fetches.Add(1)
	if err := os.Mkdir(dest, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dest, "up.md"), []byte("upstream"), 0o644); err != nil {
		return nil, err
	}
	return &host.Fetched{Transport: "git", Verified: true, Files: 1, Bytes: 8}, nil
}

func TestFailoverAcrossReplicas(t *testing.T) {
	t.Parallel()
	tr := makeTree(t, map[string]string{"a.md": "a"})
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close() // connection refused
	failing := newFake(t, "tok", func(w http.ResponseWriter, r *http.Request) {
		apiErr(w, http.StatusBadGateway, plugind.CodeSourceUnreadable, "", "upstream failed")
	})
	// A body cut short: the connection drops after half the archive.
	truncating := newFake(t, "tok", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderDigest, tr.digest)
		w.Header().Set("Content-Length", "100000")
		_, _ = w.Write(tr.archive[:len(tr.archive)/2])
	})
	good := newFake(t, "tok", serveTree(tr))
	r := openRepo(t, Config{URLs: []string{downURL, failing.URL, truncating.URL, good.URL}, Token: "tok"})
	dest := filepath.Join(t.TempDir(), "out")
	if _, err := r.Fetch(context.Background(), sha1, dest, host.FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	if failing.hits.Load() != 1 || truncating.hits.Load() != 1 || good.hits.Load() != 1 {
		t.Fatalf("hits: failing %d truncating %d good %d", failing.hits.Load(), truncating.hits.Load(), good.hits.Load())
	}
	// The replica that answered is asked first next time.
	pin, err := r.Resolve(context.Background(), "", nil)
	if err != nil || pin.SHA != sha1 {
		t.Fatalf("%+v %v", pin, err)
	}
	if failing.hits.Load() != 1 || good.hits.Load() != 2 {
		t.Fatalf("the last good replica should be asked first: failing %d good %d", failing.hits.Load(), good.hits.Load())
	}
}

func TestResolveConditional(t *testing.T) {
	t.Parallel()
	m := newFake(t, "tok", serveTree(makeTree(t, map[string]string{"a": "a"})))
	r := openRepo(t, Config{URLs: []string{m.URL}, Token: "tok"})
	pin, err := r.Resolve(context.Background(), "main", nil)
	if err != nil || pin.SHA != sha1 || pin.NotModified || pin.ETag == "" {
		t.Fatalf("%+v %v", pin, err)
	}
	pin, err = r.Resolve(context.Background(), "main", &host.Pin{SHA: sha1, ETag: `W/"upstream-etag"`})
	if err != nil || !pin.NotModified || pin.SHA != sha1 {
		t.Fatalf("conditional: %+v %v", pin, err)
	}
	refs, err := r.Refs(context.Background())
	if err != nil || refs.Head != "main" || refs.Commits["main"] != sha1 {
		t.Fatalf("%+v %v", refs, err)
	}
	if err := r.Reachable(context.Background(), sha1, "main"); err != nil {
		t.Fatal(err)
	}
}

func TestErrorsKeepTheirMeaning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		status   int
		code     plugind.Code
		kind     string
		sentinel error
		fallback bool // the mirror may ask upstream
	}{
		{"repo not found", 404, plugind.CodeNotFound, "repo", host.ErrRepoNotFound, false},
		{"ref not found", 404, plugind.CodeNotFound, "ref", host.ErrRefNotFound, false},
		{"unreachable", 404, plugind.CodeNotFound, "unreachable", host.ErrUnreachable, false},
		{"blocked", 403, plugind.CodeBlocked, "", nil, false},
		{"over budget", 422, plugind.CodeBudgetExceeded, "", nil, false},
		{"bad token", 401, plugind.CodeSourceUnreadable, "", host.ErrRefused, false},
		{"forbidden, not by policy", 403, plugind.CodeSourceUnreadable, "", host.ErrRefused, false},
		{"upstream down", 502, plugind.CodeSourceUnreadable, "", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newFake(t, "tok", func(w http.ResponseWriter, r *http.Request) {
				apiErr(w, tc.status, tc.code, tc.kind, tc.name+` (block rule "github.com/acme")`)
			})
			up := &countingUpstream{}
			r := inFront(t, up, Config{URLs: []string{m.URL}, Token: "tok"})
			pin, err := r.Resolve(context.Background(), "main", nil)
			if tc.fallback {
				if err != nil || pin.SHA != sha1 || up.resolves.Load() != 1 || !strings.Contains(pin.Warning, "the mirror") {
					t.Fatalf("want upstream's answer with a warning: %+v %v (upstream %d)", pin, err, up.resolves.Load())
				}
				return
			}
			if err == nil || up.resolves.Load() != 0 {
				t.Fatalf("want a final error and no upstream request: %v (upstream %d)", err, up.resolves.Load())
			}
			if plugind.CodeOf(err) != tc.code || (tc.sentinel != nil && !errors.Is(err, tc.sentinel)) {
				t.Fatalf("%v: code %q", err, plugind.CodeOf(err))
			}
			if tc.code == plugind.CodeBlocked && !strings.Contains(err.Error(), `"github.com/acme"`) {
				t.Fatalf("blocked must name the rule: %v", err)
			}
		})
	}
}

// A mirror that refuses the token (401, or a 403 that is not a policy
// block) is never "down": whatever REASONIX_MIRROR_ONLY says, no operation
// goes upstream, no other replica is asked (they share the tokens), and the
// error names the mirror and says the token was refused, never quoting it.
func TestRefusedTokenStops(t *testing.T) {
	t.Parallel()
	const token = "rxm_revokedTOKENvalue0123456789"
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		for _, only := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d only=%v", status, only), func(t *testing.T) {
				t.Parallel()
				refusing := func() *fakeMirror {
					return newFake(t, token, func(w http.ResponseWriter, r *http.Request) {
						apiErr(w, status, plugind.CodeSourceUnreadable, "", "the mirror refused REASONIX_MIRROR_TOKEN: unknown or revoked")
					})
				}
				first, second := refusing(), refusing()
				up := &countingUpstream{}
				r := inFront(t, up, Config{URLs: []string{first.URL, second.URL}, Token: token, Only: only})
				ctx := context.Background()
				_, rerr := r.Refs(ctx)
				_, perr := r.Resolve(ctx, "main", nil)
				aerr := r.Reachable(ctx, sha1, "")
				_, ferr := r.Fetch(ctx, sha1, filepath.Join(t.TempDir(), "out"), host.FetchOptions{Verify: true})
				for i, err := range []error{rerr, perr, aerr, ferr} {
					if !errors.Is(err, host.ErrRefused) || !host.Fatal(err) {
						t.Fatalf("operation %d: %v, want a final token refusal", i, err)
					}
					msg := err.Error()
					if !strings.Contains(msg, first.URL) || !strings.Contains(msg, "refused the token in REASONIX_MIRROR_TOKEN") || strings.Contains(msg, token) {
						t.Fatalf("operation %d: %q should name the mirror and the refusal, never the token", i, msg)
					}
				}
				if n := up.resolves.Load() + up.fetches.Load(); n != 0 {
					t.Fatalf("%d operations went upstream after the mirror refused the token", n)
				}
				if first.hits.Load() != 4 || second.hits.Load() != 0 {
					t.Fatalf("a refused token is the same on every replica: first %d, second %d requests", first.hits.Load(), second.hits.Load())
				}
			})
		}
	}
	// No token at all: said so.
	m := newFake(t, token, serveTree(makeTree(t, map[string]string{"a": "a"})))
	r := openRepo(t, Config{URLs: []string{m.URL}})
	if _, err := r.Resolve(context.Background(), "", nil); !errors.Is(err, host.ErrRefused) || !strings.Contains(err.Error(), "REASONIX_MIRROR_TOKEN is not set") {
		t.Fatalf("no token: %v", err)
	}
}

func TestOnlyNeverAsksUpstream(t *testing.T) {
	t.Parallel()
	m := newFake(t, "tok", func(w http.ResponseWriter, r *http.Request) {
		apiErr(w, http.StatusServiceUnavailable, plugind.CodeSourceUnreadable, "", "down")
	})
	up := &countingUpstream{}
	r := inFront(t, up, Config{URLs: []string{m.URL}, Token: "tok", Only: true})
	start := time.Now()
	if _, err := r.Resolve(context.Background(), "", nil); err == nil || up.resolves.Load() != 0 {
		t.Fatalf("%v, upstream %d", err, up.resolves.Load())
	}
	if m.hits.Load() != 2 || time.Since(start) > 5*time.Second {
		t.Fatalf("one replica is asked twice (two rounds), got %d in %s", m.hits.Load(), time.Since(start))
	}
}

func TestNoRedirects(t *testing.T) {
	t.Parallel()
	var leaked atomic.Bool
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Store(true)
		}
	}))
	t.Cleanup(elsewhere.Close)
	m := newFake(t, "tok", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/v1/resolve", http.StatusFound)
	})
	r := openRepo(t, Config{URLs: []string{m.URL}, Token: "tok"})
	if _, err := r.Resolve(context.Background(), "", nil); err == nil {
		t.Fatal("a redirect is not an answer")
	}
	if leaked.Load() {
		t.Fatal("the token followed a redirect")
	}
}

// inFront opens ghSource with the mirror of cfg in front of up, as
// resolver.Hosts stacks them (Client.InFront).
func inFront(t *testing.T, up *countingUpstream, cfg Config) host.Repo {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	direct, upErr := up.Open(ghSource)
	r, err := c.InFront(ghSource, direct, upErr)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
