package fakegithub_test

import (
	"os"
	"path/filepath"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// WithGitCache gives a request git answered before the same answer, even
// with the repository's objects gone, and asks git again once a ref moves.
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
	// The same requests again, with nothing left to pack: only the kept
	// answers can serve them.
	objects := filepath.Join(r.Dir(), "objects")
	if err := os.Rename(objects, objects+".aside"); err != nil {
		t.Fatal(err)
	}
	clone(first)
	if err := os.Rename(objects+".aside", objects); err != nil {
		t.Fatal(err)
	}
	second := r.Commit("main", map[string]string{"a.txt": "2\n"})
	clone(second)
}
