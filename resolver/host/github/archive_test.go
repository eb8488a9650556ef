package github_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/resolver/host/github"
)

// serveArchive scripts the tarball route of sha to redirect to location,
// location's path to serve tgz, and the commit's git object to name the
// tree tgz holds (serveCommit).
func serveArchive(s *apiServer, sha, location string, tgz []byte) {
	serveCommit(s, sha, treeOfArchive(tgz))
	s.on("GET /repos/acme/tools/tarball/"+sha, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, location, http.StatusFound)
	})
	path := location
	if i := strings.Index(location, "://"); i >= 0 {
		path = location[i+3:]
		path = path[strings.Index(path, "/"):]
	}
	if i := strings.Index(path, "?"); i >= 0 {
		path = path[:i]
	}
	s.on("GET "+path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-gzip")
		_, _ = w.Write(tgz)
	})
}

// TestArchiveFetch: the tarball route's redirect is followed and the
// archive written as it streams in — all of it, or the folders asked for —
// its root folder checked against the commit; with Verify the commit is
// checked first, by the API.
func TestArchiveFetch(t *testing.T) {
	t.Parallel()
	files := map[string]string{"README.md": "hi", "plugins/a/x.txt": "aaa", "plugins/b/y.txt": "bbbb"}
	for _, tc := range []struct {
		name      string
		opts      host.FetchOptions
		wantFiles []string
		wantAPI   []string // requests before the download
	}{{
		name: "the whole tree", wantFiles: []string{"README.md", "plugins/a/x.txt", "plugins/b/y.txt"},
	}, {
		name: "some folders", opts: host.FetchOptions{Paths: []string{"plugins/a"}}, wantFiles: []string{"plugins/a/x.txt"},
	}, {
		name: "verified first", opts: host.FetchOptions{Verify: true}, wantFiles: []string{"README.md", "plugins/a/x.txt", "plugins/b/y.txt"},
		wantAPI: []string{"GET /repos/acme/tools/compare/HEAD..." + shaA},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newAPIServer(t)
			serveArchive(s, shaA, s.URL+"/codeload/acme/tools/tar.gz/"+shaA, tarGz(t, shaA, files))
			s.on("GET /repos/acme/tools/compare/HEAD..."+shaA, func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, http.StatusOK, map[string]string{"status": "behind"})
			})
			dest := filepath.Join(t.TempDir(), "tree")
			got, err := openREST(t, s, token).Fetch(context.Background(), shaA, dest, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got.Transport != "archive" || got.Verified != tc.opts.Verify || got.Files != len(tc.wantFiles) {
				t.Fatalf("fetched %+v", got)
			}
			if on := filesUnder(t, dest); strings.Join(on, " ") != strings.Join(tc.wantFiles, " ") {
				t.Fatalf("wrote %q, want %q", on, tc.wantFiles)
			}
			// The commit's tree is read while the archive downloads.
			want := append(append([]string(nil), tc.wantAPI...), "GET /repos/acme/tools/tarball/"+shaA, "GET /codeload/acme/tools/tar.gz/"+shaA)
			if got := s.requests(); strings.Join(withoutCommit(got), " ") != strings.Join(want, " ") || len(got) != len(want)+1 {
				t.Errorf("requests %q, want %q and the commit", got, want)
			}
			if got.Proof != host.ProofGitTree || got.GitTrees[""] != treeOfArchive(tarGz(t, shaA, files)) {
				t.Errorf("proof %q, git trees %v", got.Proof, got.GitTrees)
			}
			for _, r := range s.received() {
				if r.Header.Get("Authorization") != "Bearer "+token {
					t.Errorf("%s on the same host sent Authorization %q", r.URL.Path, r.Header.Get("Authorization"))
				}
			}
		})
	}
}

// TestArchiveRefused: an archive of another commit, or one the API says
// is not on a branch or tag, is written nowhere.
func TestArchiveRefused(t *testing.T) {
	t.Parallel()
	t.Run("another commit's archive", func(t *testing.T) {
		t.Parallel()
		s := newAPIServer(t)
		serveArchive(s, shaA, s.URL+"/codeload/x", tarGz(t, shaB, map[string]string{"a": "b"}))
		dest := filepath.Join(t.TempDir(), "tree")
		_, err := openREST(t, s, "").Fetch(context.Background(), shaA, dest, host.FetchOptions{})
		if err == nil || !host.Fatal(err) {
			t.Fatalf("%v, want a refusal no other transport may overrule", err)
		}
		if _, serr := os.Stat(dest); !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("dest left behind: %v", serr)
		}
	})
	t.Run("an unreachable commit", func(t *testing.T) {
		t.Parallel()
		s := newAPIServer(t)
		s.repoExists()
		serveArchive(s, shaA, s.URL+"/codeload/x", tarGz(t, shaA, map[string]string{"a": "b"}))
		s.on("GET /repos/acme/tools/compare/HEAD..."+shaA, func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, map[string]string{"status": "diverged"})
		})
		s.on("GET /repos/acme/tools/branches", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, []map[string]any{{"name": "main", "commit": map[string]string{"sha": shaB}}})
		})
		s.on("GET /repos/acme/tools/tags", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, []any{}) })
		_, err := openREST(t, s, "").Fetch(context.Background(), shaA, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{Verify: true})
		if !errors.Is(err, host.ErrUnreachable) {
			t.Fatalf("%v, want unreachable", err)
		}
		if s.asked("GET /repos/acme/tools/tarball/"+shaA) != 0 {
			t.Error("the archive was downloaded before the commit was checked")
		}
	})
}

// TestArchiveRedirects: the archive link's redirect is followed to another
// https host with a real name (codeload.github.com) without the token,
// never to plain http or an address; and a credential the redirect carries
// in its URL (a private repository's download token) is in no error.
func TestArchiveRedirects(t *testing.T) {
	t.Parallel()
	const secret = "CodeloadSecret123"
	tgz := tarGz(t, shaA, map[string]string{"README.md": "hi"})
	// Every host name dials the test server, whose certificate is good
	// for example.com: "another host" without leaving this machine.
	tlsTransport := func(s *apiServer) http.RoundTripper {
		tr := s.Client().Transport.(*http.Transport).Clone()
		addr := s.Listener.Addr().String()
		tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
		return tr
	}
	open := func(t *testing.T, s *apiServer) host.Repo {
		return openWith(t, github.Config{APIURL: s.URL, Token: token, REST: restClient(tlsTransport(s))}, "")
	}
	port := func(s *apiServer) string { _, p, _ := net.SplitHostPort(s.Listener.Addr().String()); return p }

	t.Run("to another https host, without the token", func(t *testing.T) {
		t.Parallel()
		s := newTLSAPIServer(t)
		serveArchive(s, shaA, "https://example.com:"+port(s)+"/codeload/acme/tools?token="+secret, tgz)
		if _, err := open(t, s).Fetch(context.Background(), shaA, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{}); err != nil {
			t.Fatal(err)
		}
		reqs := slices.DeleteFunc(s.received(), func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/git/commits/") })
		if len(reqs) != 2 {
			t.Fatalf("requests %q", s.requests())
		}
		if reqs[0].Header.Get("Authorization") != "Bearer "+token {
			t.Errorf("the API was asked without the token")
		}
		if reqs[1].Host != "example.com:"+port(s) || reqs[1].Header.Get("Authorization") != "" {
			t.Errorf("the download host %s got Authorization %q", reqs[1].Host, reqs[1].Header.Get("Authorization"))
		}
	})
	t.Run("not to plain http", func(t *testing.T) {
		t.Parallel()
		s := newTLSAPIServer(t)
		serveArchive(s, shaA, "http://example.com:"+port(s)+"/codeload/acme/tools", tgz)
		_, err := open(t, s).Fetch(context.Background(), shaA, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{})
		if err == nil || !strings.Contains(err.Error(), "refusing redirect") || !strings.Contains(err.Error(), "http://") {
			t.Fatalf("%v, want the redirect refused", err)
		}
		if len(withoutCommit(s.requests())) != 1 {
			t.Errorf("requests %q", s.requests())
		}
	})
	t.Run("not to an address", func(t *testing.T) {
		t.Parallel()
		s := newTLSAPIServer(t)
		serveArchive(s, shaA, "https://10.1.2.3:"+port(s)+"/codeload/acme/tools", tgz)
		_, err := open(t, s).Fetch(context.Background(), shaA, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{})
		if err == nil || !strings.Contains(err.Error(), "10.1.2.3 is an IP address") {
			t.Fatalf("%v, want the redirect refused", err)
		}
	})
	t.Run("a credential in the download URL is in no error", func(t *testing.T) {
		t.Parallel()
		s := newTLSAPIServer(t)
		serveArchive(s, shaA, "https://example.com:"+port(s)+"/codeload/acme/tools?token="+secret, tgz)
		// The download host takes the request and hangs up.
		s.on("GET /codeload/acme/tools", func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		})
		rec := &retries{}
		ctx := host.WithWatcher(context.Background(), rec)
		_, err := open(t, s).Fetch(ctx, shaA, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{})
		if err == nil || plugind.CodeOf(err) != plugind.CodeSourceUnreadable {
			t.Fatalf("%v, want the download failure", err)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the download token is in the error: %v", err)
		}
		if !strings.Contains(err.Error(), "example.com") {
			t.Errorf("%v does not name the host", err)
		}
		noToken(t, err)
		for _, why := range rec.all() {
			if strings.Contains(why, secret) {
				t.Errorf("the download token was shown as why a retry came: %s", why)
			}
		}
	})
}

// filesUnder lists the files below dir, slash paths in order.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withoutCommit leaves out the request for the commit's tree, which runs
// beside the download (and may be cancelled before it is sent).
func withoutCommit(reqs []string) []string {
	return slices.DeleteFunc(slices.Clone(reqs), func(r string) bool { return strings.Contains(r, "/git/commits/") })
}
