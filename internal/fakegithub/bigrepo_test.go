package fakegithub_test

import (
	"archive/tar"
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"

	"reasonix.io/plugind/internal/fakegithub"
)

func TestCommitLargeFile(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r, _, head := newToolsRepo(t, s)
	const size = 3<<20 + 5 // over the 1 MiB streaming threshold, odd-sized
	sha := r.CommitLargeFile("main", "assets/big.bin", size)
	empty := r.CommitLargeFile("main", "empty.bin", 0)
	if got := mustGit(t, r.Dir(), "rev-parse", sha+"^"); got != head {
		t.Fatalf("parent = %s, want %s", got, head)
	}
	if got := mustGit(t, r.Dir(), "cat-file", "-s", empty+":assets/big.bin"); got != strconv.Itoa(size) {
		t.Fatalf("blob size = %s, want %d", got, size)
	}
	if got := mustGit(t, r.Dir(), "cat-file", "-s", empty+":empty.bin"); got != "0" {
		t.Fatalf("empty blob size = %s", got)
	}
	if got := mustGit(t, r.Dir(), "cat-file", "-p", sha+":README.md"); got != "# tools" {
		t.Fatalf("the large file replaced the tree: README = %q", got)
	}
	// Zeros compress to almost nothing: the download is tiny.
	objects := mustGit(t, r.Dir(), "count-objects", "-v")
	for _, line := range strings.Split(objects, "\n") {
		k, v, _ := strings.Cut(line, ": ")
		if n, _ := strconv.Atoi(v); (k == "size" || k == "size-pack") && n > 512 {
			t.Fatalf("repository holds %s KiB of %s for a %d-byte zero file", v, k, size)
		}
	}

	// Served over git...
	repo, err := git.CloneContext(testCtx(t), memory.NewStorage(), nil, &git.CloneOptions{URL: r.CloneURL(), Tags: git.NoTags})
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.CommitObject(plumbing.NewHash(empty))
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.File("assets/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	if f.Size != size {
		t.Fatalf("cloned size = %d", f.Size)
	}
	// ...and as an archive, every byte zero.
	status, body := downloadTarball(t, s, sha)
	if status != http.StatusOK {
		t.Fatalf("archive: %d", status)
	}
	var found bool
	for _, e := range tarEntries(t, body) {
		if e.typ == tar.TypeReg && e.name == r.ArchivePrefix(sha)+"assets/big.bin" {
			found = len(e.content) == size && bytes.Count([]byte(e.content), []byte{0}) == size
		}
	}
	if !found {
		t.Fatal("archive lacks a zero-filled assets/big.bin of the right size")
	}
}

func TestCommitManyFiles(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r, _, _ := newToolsRepo(t, s)
	const n, size = 500, 100
	sha := r.CommitManyFiles("main", "skills/many", n, size)
	out := mustGit(t, r.Dir(), "ls-tree", "-r", sha, "skills/many")
	lines := strings.Split(out, "\n")
	blobs := map[string]bool{}
	for _, l := range lines {
		blobs[strings.Fields(l)[2]] = true
	}
	if len(lines) != n || len(blobs) != n {
		t.Fatalf("%d files, %d distinct blobs; want %d of each", len(lines), len(blobs), n)
	}
	for _, i := range []int{0, 7, n - 1} {
		name := fakegithub.ManyFileName("skills/many", i)
		got := mustGit(t, r.Dir(), "cat-file", "-p", sha+":"+name)
		if want := fakegithub.ManyFileContent(i, size); got != strings.TrimSuffix(want, "\n") || len(want) != size {
			t.Fatalf("%s = %q, want %q", name, got, want)
		}
	}
	if fakegithub.ManyFileName("", 3) != "file-000003.txt" {
		t.Fatalf("root name = %q", fakegithub.ManyFileName("", 3))
	}
	if got := mustGit(t, r.Dir(), "cat-file", "-p", sha+":README.md"); got != "# tools" {
		t.Fatalf("many files replaced the tree: README = %q", got)
	}
	root := r.CommitManyFiles("flat", "", 3, 0)
	if got := mustGit(t, r.Dir(), "ls-tree", "--name-only", root); !strings.Contains(got, "file-000002.txt") {
		t.Fatalf("files at the root: %q", got)
	}
}

// BenchmarkCommitLargeFile measures zero-filled blob commits of the sizes
// the memory-budget tests use.
func BenchmarkCommitLargeFile(b *testing.B) {
	for _, size := range []int64{300 << 20, 1 << 30} {
		b.Run(strconv.FormatInt(size>>20, 10)+"MiB", func(b *testing.B) {
			s := fakegithub.New(b)
			r := s.CreateRepo("acme", "big")
			b.SetBytes(size)
			for i := 0; b.Loop(); i++ {
				r.CommitLargeFile("main", "big"+strconv.Itoa(i)+".bin", size)
			}
		})
	}
}

// BenchmarkCommitManyFiles measures the 25,000-file commit of the budget
// tests: 1 KiB each, distinct contents.
func BenchmarkCommitManyFiles(b *testing.B) {
	s := fakegithub.New(b)
	r := s.CreateRepo("acme", "many")
	for i := 0; b.Loop(); i++ {
		r.CommitManyFiles("main", "d"+strconv.Itoa(i), 25000, 1024)
	}
}
