package github_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix.io/plugind/internal/gitobj"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/resolver/host/git"
	"reasonix.io/plugind/resolver/host/github"
	"reasonix.io/plugind/source"
)

// Commit ids the tests pin.
const (
	shaA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	shaC = "cccccccccccccccccccccccccccccccccccccccc"
)

// token is the GITHUB_TOKEN of the tests that send one: no error may
// show it.
const token = "ghp_T0kenThatMustNeverShow"

// apiServer is a GitHub REST API each test scripts route by route
// ("GET /repos/acme/tools/commits/main"); every request is recorded. A
// route nobody scripted answers GitHub's 404, as for a repository that does
// not exist; repoExists scripts the repository itself.
type apiServer struct {
	*httptest.Server
	mu     sync.Mutex
	routes map[string]http.HandlerFunc
	seen   []*http.Request
}

func newAPIServer(t *testing.T) *apiServer {
	s := &apiServer{routes: map[string]http.HandlerFunc{}}
	s.Server = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

// newTLSAPIServer is the same over https, its certificate good for
// 127.0.0.1 and example.com.
func newTLSAPIServer(t *testing.T) *apiServer {
	s := &apiServer{routes: map[string]http.HandlerFunc{}}
	s.Server = httptest.NewTLSServer(s)
	t.Cleanup(s.Close)
	return s
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, r.Clone(r.Context()))
	h := s.routes[r.Method+" "+r.URL.Path]
	s.mu.Unlock()
	if h == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	h(w, r)
}

// on scripts a route.
func (s *apiServer) on(route string, h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes[route] = h
}

// repoExists scripts GET /repos/acme/tools: the repository, its default
// branch main.
func (s *apiServer) repoExists() {
	s.on("GET /repos/acme/tools", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"name": "tools", "full_name": "acme/tools", "default_branch": "main"})
	})
}

// requests returns "METHOD PATH" of what was asked, in order.
func (s *apiServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.seen {
		out = append(out, r.Method+" "+r.URL.Path)
	}
	return out
}

// asked counts the requests for one route.
func (s *apiServer) asked(route string) int {
	n := 0
	for _, r := range s.requests() {
		if r == route {
			n++
		}
	}
	return n
}

// received returns the recorded requests.
func (s *apiServer) received() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.seen...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// status answers a GitHub error.
func status(code int, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		writeJSON(w, code, map[string]string{"message": http.StatusText(code), "documentation_url": "https://docs.github.com/rest"})
	}
}

// rateLimited answers as GitHub does when the hourly budget is spent.
func rateLimited() http.HandlerFunc {
	reset := time.Now().Add(time.Hour).Unix()
	return status(http.StatusForbidden,
		"X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(reset, 10))
}

// restClient retries once, quickly: the tests are about answers, not
// patience.
func restClient(rt http.RoundTripper) *host.RESTClient {
	c := host.NewRetryingClient(rt, host.NetConfig{Retries: 1, MaxRetryAfter: 50 * time.Millisecond, Timeout: 10 * time.Second})
	c.RetryWaitMin, c.RetryWaitMax = time.Millisecond, 2*time.Millisecond
	return c
}

// openREST opens acme/tools through the REST API alone (REASONIX_GIT=off)
// on s, with tok as GITHUB_TOKEN.
func openREST(t *testing.T, s *apiServer, tok string) host.Repo {
	t.Helper()
	return openWith(t, github.Config{APIURL: s.URL, Token: tok, REST: restClient(http.DefaultTransport)}, "")
}

// openWith opens acme/tools on the GitHub host of cfg, its git side at
// gitURL ("": git off).
func openWith(t *testing.T, cfg github.Config, gitURL string) host.Repo {
	t.Helper()
	h, err := github.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.Parse("https://github.com/acme/tools")
	if err != nil {
		t.Fatal(err)
	}
	var viaGit host.Repo
	if gitURL != "" {
		viaGit = git.New(src, git.Config{URL: gitURL + "/acme/tools.git", Client: host.NewHTTPClient(http.DefaultTransport), Token: cfg.Token})
	}
	r, err := h.Open(src, viaGit)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tarGz is a GitHub archive of files at sha: one root folder
// "acme-tools-<sha7>/" and git archive's pax comment naming the commit.
func tarGz(t *testing.T, sha string, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	root := "acme-tools-" + sha[:7] + "/"
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": sha}, Format: tar.FormatPAX}))
	must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: root, Mode: 0o755}))
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	dirs := map[string]bool{}
	for _, n := range names {
		for d := n; strings.Contains(d, "/"); {
			d = d[:strings.LastIndex(d, "/")]
			if !dirs[d] {
				dirs[d] = true
				must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: root + d + "/", Mode: 0o755}))
			}
		}
		must(tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: root + n, Mode: 0o644, Size: int64(len(files[n]))}))
		_, err := tw.Write([]byte(files[n]))
		must(err)
	}
	must(tw.Close())
	must(gz.Close())
	return buf.Bytes()
}

// noToken fails t when err shows the token.
func noToken(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), token) {
		t.Errorf("the token is in the error: %v", err)
	}
}

// retries is a host.Watcher that keeps why each retry came, as a terminal
// would show it.
type retries struct {
	mu  sync.Mutex
	why []string
}

func (r *retries) Requesting(string) func()                    { return func() {} }
func (r *retries) Silent(string, time.Duration, time.Duration) {}
func (r *retries) Received(string, int64)                      {}
func (r *retries) Wrote(string, int64)                         {}
func (r *retries) Retrying(what string, attempt, max int, wait time.Duration, why error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.why = append(r.why, what+": "+why.Error())
}

func (r *retries) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.why...)
}

// serveCommit scripts git/commits/{sha} to name tree as the commit's.
func serveCommit(s *apiServer, sha, tree string) {
	s.on("GET /repos/acme/tools/git/commits/"+sha, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"sha": sha, "tree": map[string]string{"sha": tree}})
	})
}

// treeOfArchive is the git tree id of what a GitHub archive (one root
// folder) holds: its files, folders and links as git hashes them.
func treeOfArchive(tgz []byte) string {
	gz, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return ""
	}
	h := gitobj.NewHasher()
	b := gitobj.NewBuilder(h)
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		_, rel, _ := strings.Cut(strings.TrimSuffix(hdr.Name, "/"), "/")
		data, _ := io.ReadAll(tr)
		switch {
		case rel == "" || hdr.Typeflag == tar.TypeXGlobalHeader:
		case hdr.Typeflag == tar.TypeDir:
			b.Dir(rel)
		case hdr.Typeflag == tar.TypeSymlink:
			_ = b.Add(rel, gitobj.ModeLink, h.Blob([]byte(hdr.Linkname)))
		case hdr.Mode&0o111 != 0:
			_ = b.Add(rel, gitobj.ModeExec, h.Blob(data))
		default:
			_ = b.Add(rel, gitobj.ModeFile, h.Blob(data))
		}
	}
	return b.Finish().String()
}
