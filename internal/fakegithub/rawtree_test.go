package fakegithub_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-github/v62/github"

	"reasonix.io/plugind/internal/fakegithub"
)

// hostileEntries is a root tree no honest git would make: case and Unicode
// twins, a duplicate name, a symlink "a" out of the tree beside a directory
// "a" holding a file, a relative escape, control bytes and a submodule.
func hostileEntries() []fakegithub.RawEntry {
	return []fakegithub.RawEntry{
		{Name: "readme.md", Mode: "100644", Content: "lower\n"},
		{Name: "README.md", Mode: "100644", Content: "upper\n"},
		{Name: "k.md", Mode: "100644", Content: "k\n"},
		{Name: "\u212a.md", Mode: "100644", Content: "kelvin\n"},
		{Name: "dup.txt", Mode: "100644", Content: "one\n"},
		{Name: "dup.txt", Mode: "100755", Content: "two\n"},
		{Name: "a", Mode: "040000", Entries: []fakegithub.RawEntry{{Name: "cron.txt", Mode: "100644", Content: "* * * * * evil\n"}}},
		{Name: "a", Mode: "120000", Content: "/etc"},
		{Name: "up", Mode: "120000", Content: "../../x"},
		{Name: "odd\x01\tname", Mode: "100644", Content: "odd\n"},
		{Name: "sub", Mode: "160000", Content: strings.Repeat("ab", 20)},
	}
}

// hostileListing is `git ls-tree -r` of hostileEntries: git's order, the
// directory "a" after the symlink "a", duplicates in the caller's order.
var hostileListing = []string{
	"100644 blob README.md", "120000 blob a", "100644 blob a/cron.txt", "100644 blob dup.txt", "100755 blob dup.txt",
	"100644 blob k.md", "100644 blob odd\x01\tname", "100644 blob readme.md", "160000 commit sub",
	"120000 blob up", "100644 blob \u212a.md",
}

// lsTree lists a commit's tree recursively as "mode type path", in order.
func lsTree(t *testing.T, gitDir, sha string) []string {
	t.Helper()
	out, err := gitCLI(t, gitDir, "ls-tree", "-r", "-z", sha)
	if err != nil {
		t.Fatalf("ls-tree %s in %s: %v\n%s", sha, gitDir, err, out)
	}
	var got []string
	for _, rec := range strings.Split(strings.TrimSuffix(out, "\x00"), "\x00") {
		meta, path, _ := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		got = append(got, f[0]+" "+f[1]+" "+path)
	}
	return got
}

func TestCommitRawTreeOverGit(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r, _, head := newToolsRepo(t, s)
	sha := r.CommitRawTree("hostile", hostileEntries())
	if got := lsTree(t, r.Dir(), sha); !slices.Equal(got, hostileListing) {
		t.Fatalf("stored tree =\n%q\nwant\n%q", got, hostileListing)
	}
	if parent := mustGit(t, r.Dir(), "rev-parse", sha+"^"); parent != head {
		t.Fatalf("a new branch's raw commit has parent %s, want main's head %s", parent, head)
	}
	if r.Head("hostile") != sha {
		t.Fatal("branch hostile does not point at the raw commit")
	}

	for _, proto := range []string{"0", "2"} {
		dst := t.TempDir()
		mustGit(t, dst, "init", "--quiet", "--bare", ".")
		mustGit(t, dst, "-c", "protocol.version="+proto, "fetch", "--quiet", r.CloneURL(), "hostile:refs/heads/hostile")
		if got := lsTree(t, dst, sha); !slices.Equal(got, hostileListing) {
			t.Fatalf("protocol v%s: fetched tree =\n%q\nwant\n%q", proto, got, hostileListing)
		}
	}

	// go-git, the product's client, sees every entry too.
	repo, err := git.CloneContext(testCtx(t), memory.NewStorage(), nil, &git.CloneOptions{
		URL: r.CloneURL(), ReferenceName: "refs/heads/hostile", SingleBranch: true, Tags: git.NoTags,
	})
	if err != nil {
		t.Fatalf("go-git clone: %v", err)
	}
	c, err := repo.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range tree.Entries {
		names = append(names, e.Mode.String()+" "+e.Name)
	}
	want := []string{"0100644 README.md", "0120000 a", "0040000 a", "0100644 dup.txt", "0100755 dup.txt", "0100644 k.md",
		"0100644 odd\x01\tname", "0100644 readme.md", "0160000 sub", "0120000 up", "0100644 \u212a.md"}
	if !slices.Equal(names, want) {
		t.Fatalf("go-git root entries =\n%q\nwant\n%q", names, want)
	}
}

type tarEntry struct {
	name, link, content string
	typ                 byte
	mode                int64
}

func tarEntries(t *testing.T, data []byte) []tarEntry {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out []tarEntry
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tarEntry{name: hdr.Name, link: hdr.Linkname, content: string(b), typ: hdr.Typeflag, mode: hdr.Mode})
	}
}

// downloadTarball follows the REST tarball redirect for ref.
func downloadTarball(t *testing.T, s *fakegithub.Server, ref string) (int, []byte) {
	t.Helper()
	u, _, err := ghClient(t, s).Repositories.GetArchiveLink(testCtx(t), "acme", "tools", github.Tarball,
		&github.RepositoryContentGetOptions{Ref: ref}, 0)
	if err != nil {
		t.Fatalf("tarball link for %s: %v", ref, err)
	}
	status, _, body := get(t, u.String())
	return status, body
}

func TestCommitRawTreeArchive(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r, _, _ := newToolsRepo(t, s)
	sha := r.CommitRawTree("hostile", hostileEntries())
	status, body := downloadTarball(t, s, sha)
	if status != http.StatusOK {
		t.Fatalf("archive status %d: %s", status, body)
	}
	root := r.ArchivePrefix(sha)
	var got []string
	for _, e := range tarEntries(t, body) {
		switch e.typ {
		case tar.TypeReg:
			got = append(got, "file "+strings.TrimPrefix(e.name, root)+"="+e.content)
		case tar.TypeSymlink:
			got = append(got, "link "+strings.TrimPrefix(e.name, root)+"->"+e.link)
		case tar.TypeDir:
			got = append(got, "dir "+strings.TrimPrefix(e.name, root))
		}
	}
	// git archive keeps every entry: both twins, both duplicates, the link
	// "a" and then the directory "a/" with a file through it; a submodule
	// is an empty directory.
	want := []string{"dir ", "file README.md=upper\n", "link a->/etc", "dir a/", "file a/cron.txt=* * * * * evil\n",
		"file dup.txt=one\n", "file dup.txt=two\n", "file k.md=k\n", "file odd\x01\tname=odd\n", "file readme.md=lower\n",
		"dir sub/", "link up->../../x", "file \u212a.md=kelvin\n"}
	if !slices.Equal(got, want) {
		t.Fatalf("archive entries =\n%q\nwant\n%q", got, want)
	}
}

func TestCommitRawTreeGitArchiveRefuses(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r := s.CreateRepo("acme", "tools")
	escape := []fakegithub.RawEntry{{Name: "x", Mode: "100644", Content: "escaped\n"}}
	tests := []struct {
		name    string
		entries []fakegithub.RawEntry
		listing []string
	}{
		{"dotdot", []fakegithub.RawEntry{{Name: "..", Mode: "040000", Entries: escape}}, []string{"100644 blob ../x"}},
		{"dotgit", []fakegithub.RawEntry{{Name: ".git", Mode: "040000", Entries: []fakegithub.RawEntry{{Name: "config", Mode: "100644", Content: "[core]\n"}}}}, []string{"100644 blob .git/config"}},
		{"dotGIT", []fakegithub.RawEntry{{Name: ".GIT", Mode: "040000", Entries: escape}}, []string{"100644 blob .GIT/x"}},
		{"dot", []fakegithub.RawEntry{{Name: ".", Mode: "040000", Entries: escape}}, []string{"100644 blob ./x"}},
	}
	for _, tt := range tests {
		sha := r.CommitRawTree(tt.name, tt.entries)
		// Served over git as stored...
		dst := t.TempDir()
		mustGit(t, dst, "init", "--quiet", "--bare", ".")
		mustGit(t, dst, "fetch", "--quiet", r.CloneURL(), tt.name+":refs/heads/x")
		if got := lsTree(t, dst, sha); !slices.Equal(got, tt.listing) {
			t.Errorf("%s: fetched tree %q, want %q", tt.name, got, tt.listing)
		}
		// ...but git archive will not render it.
		status, body := downloadTarball(t, s, sha)
		if status != http.StatusInternalServerError || !strings.Contains(string(body), "invalid path") {
			t.Errorf("%s: archive = %d %q, want 500 with git's \"invalid path\"", tt.name, status, body)
		}
	}
}

func TestSetArchive(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r, first, head := newToolsRepo(t, s)
	hostile := craftTarGz(t, []*tar.Header{
		{Name: "wrong-root/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "wrong-root/../escape.txt", Typeflag: tar.TypeReg, Mode: 0o644, Size: 4},
		{Name: "/etc/cron.d/evil", Typeflag: tar.TypeReg, Mode: 0o644, Size: 4},
		{Name: "wrong-root/null", Typeflag: tar.TypeChar, Mode: 0o666, Devmajor: 1, Devminor: 3},
		{Name: "wrong-root/dup", Typeflag: tar.TypeReg, Mode: 0o644, Size: 4},
		{Name: "wrong-root/dup", Typeflag: tar.TypeReg, Mode: 0o644, Size: 4},
		{Name: "wrong-root/passwd", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"},
	})
	r.SetArchive(first, hostile)
	status, got := downloadTarball(t, s, first)
	if status != http.StatusOK || !bytes.Equal(got, hostile) {
		t.Fatalf("crafted archive: status %d, %d bytes, want the %d bytes given", status, len(got), len(hostile))
	}
	if status, _, body := get(t, r.ArchiveURL(first)); status != http.StatusOK || !bytes.Equal(body, hostile) {
		t.Fatalf("ArchiveURL: status %d, not the crafted bytes", status)
	}
	// Other commits keep git archive's rendering.
	if status, body := downloadTarball(t, s, head); status != http.StatusOK || bytes.Equal(body, hostile) {
		t.Fatalf("head's archive: status %d, crafted=%v", status, bytes.Equal(body, hostile))
	}
	// Replaced by a later call, even after the first was served; bytes are
	// served verbatim, a broken gzip stream included.
	r.SetArchive(first, []byte("not gzip"))
	if _, body := downloadTarball(t, s, first); string(body) != "not gzip" {
		t.Fatalf("replaced archive = %q", body)
	}
	// An archive for a SHA the repository lacks: the direct URL serves it,
	// the REST route cannot redirect to it.
	ghost := strings.Repeat("c", 40)
	r.SetArchive(ghost, hostile)
	if status, _, body := get(t, r.ArchiveURL(ghost)); status != http.StatusOK || !bytes.Equal(body, hostile) {
		t.Fatalf("archive of an unknown SHA: %d", status)
	}
	if status, _, _ := get(t, s.APIURL+"/repos/acme/tools/tarball/"+ghost); status != http.StatusNotFound {
		t.Fatalf("tarball redirect for an unknown SHA: %d, want 404", status)
	}
	if c := s.Counts(); c.Archive != 5 || c.APITarball != 4 {
		t.Fatalf("counts = %+v", c)
	}
}

func craftTarGz(t *testing.T, hdrs []*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range hdrs {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write([]byte("evil")[:h.Size]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
