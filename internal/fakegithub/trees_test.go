package fakegithub_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// git/commits/{sha} names the commit's tree and git/trees/{sha} lists one
// tree, with git's modes and ids, as GitHub's do; anything else is a 404.
func TestGitCommitsAndTrees(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r := s.CreateRepo("acme", "tools")
	sha := r.Commit("main", map[string]string{"README.md": "hi\n", "bin/run": fakegithub.Executable("#!/bin/sh\n"), "link": fakegithub.Symlink("README.md")})
	gh := ghClient(t, s)
	ctx := testCtx(t)

	c, _, err := gh.Git.GetCommit(ctx, "acme", "tools", sha)
	if err != nil || c.GetTree().GetSHA() != r.TreeID(sha, "") {
		t.Fatalf("commit: %+v %v, want tree %s", c, err, r.TreeID(sha, ""))
	}
	tree, _, err := gh.Git.GetTree(ctx, "acme", "tools", c.GetTree().GetSHA(), false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range tree.Entries {
		got = append(got, e.GetMode()+" "+e.GetType()+" "+e.GetPath())
	}
	if want := "100644 blob README.md,040000 tree bin,120000 blob link"; strings.Join(got, ",") != want {
		t.Errorf("root tree %q, want %q", got, want)
	}
	if tree.Entries[1].GetSHA() != r.TreeID(sha, "bin") {
		t.Errorf("bin is %s, want %s", tree.Entries[1].GetSHA(), r.TreeID(sha, "bin"))
	}
	for _, bad := range []string{strings.Repeat("0", 40), "main"} {
		if _, resp, err := gh.Git.GetTree(ctx, "acme", "tools", bad, false); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("tree %q: %v", bad, err)
		}
		if _, resp, err := gh.Git.GetCommit(ctx, "acme", "tools", bad); err == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("commit %q: %v", bad, err)
		}
	}
	if c := s.Counts(); c.APIGitCommits != 3 || c.APITrees != 3 || c.API() != 6 {
		t.Errorf("counts %+v", c)
	}
}

// TamperArchive serves git archive's archive of the commit altered as
// asked: a changed file, an added one, a flipped mode.
func TestTamperArchive(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r := s.CreateRepo("acme", "tools")
	sha := r.Commit("main", map[string]string{"README.md": "hi\n", "bin/run": fakegithub.Executable("#!/bin/sh\n")})
	r.TamperArchive(sha, fakegithub.Tamper{Change: map[string]string{"README.md": "evil\n"}, Add: map[string]string{"extra/new.txt": "new"}, Chmod: []string{"bin/run"}})
	status, _, body := get(t, r.ArchiveURL(sha))
	if status != http.StatusOK {
		t.Fatalf("archive: %d", status)
	}
	gz, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		if hdr.Typeflag == tar.TypeReg {
			got[strings.TrimPrefix(hdr.Name, r.ArchivePrefix(sha))] = string(data) + " " + map[bool]string{true: "exec", false: "file"}[hdr.Mode&0o111 != 0]
		}
	}
	want := map[string]string{"README.md": "evil\n file", "bin/run": "#!/bin/sh\n file", "extra/new.txt": "new file"}
	if len(got) != len(want) {
		t.Fatalf("archive holds %q, want %q", got, want)
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: %q, want %q", p, got[p], w)
		}
	}
}
