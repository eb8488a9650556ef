package fakegithub_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// WithGitCache gives a request git answered before (a compare, a clone)
// the same answer, even with the repository's objects gone, and asks git
// again once a ref moves.
func TestGitCache(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t, fakegithub.WithGitCache())
	r := s.CreateRepo("acme", "cached")
	first := r.Commit("main", map[string]string{"a.txt": "1\n"})
	clone := func(want string) {
		t.Helper()
		dir := t.TempDir()
		mustGit(t, dir, "clone", "-q", r.CloneURL(), "c")
		if got := mustGit(t, filepath.Join(dir, "c"), "rev-parse", "HEAD"); got != want {
			t.Fatalf("cloned HEAD %s, want %s", got, want)
		}
	}
	clone(first)
	compare := func() string {
		t.Helper()
		resp, err := http.Get(s.APIURL + "/repos/acme/cached/compare/main..." + first)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"identical"`) {
			t.Fatalf("compare: %s %s", resp.Status, body)
		}
		return string(body)
	}
	compared := compare()
	// The same requests again, with nothing left to pack or walk: only the
	// kept answers can serve them.
	objects := filepath.Join(r.Dir(), "objects")
	if err := os.Rename(objects, objects+".aside"); err != nil {
		t.Fatal(err)
	}
	if again := compare(); again != compared {
		t.Errorf("compare from the cache:\n%s\nwant\n%s", again, compared)
	}
	clone(first)
	if err := os.Rename(objects+".aside", objects); err != nil {
		t.Fatal(err)
	}
	second := r.Commit("main", map[string]string{"a.txt": "2\n"})
	clone(second)
}
