package fakegithub_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v62/github"

	"reasonix.io/plugind/internal/fakegithub"
)

func TestAPIRepo(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r, _, _ := newToolsRepo(t, s)
	gh := ghClient(t, s)
	ctx := testCtx(t)

	repo, _, err := gh.Repositories.Get(ctx, "acme", "tools")
	if err != nil {
		t.Fatal(err)
	}
	if repo.GetFullName() != "acme/tools" || repo.GetName() != "tools" || repo.GetDefaultBranch() != "main" || repo.GetOwner().GetLogin() != "acme" {
		t.Fatalf("repo = %s %s %s %s", repo.GetFullName(), repo.GetName(), repo.GetDefaultBranch(), repo.GetOwner().GetLogin())
	}

	r.SetDefaultBranch("trunk")
	if repo, _, err = gh.Repositories.Get(ctx, "ACME", "Tools"); err != nil || repo.GetDefaultBranch() != "trunk" {
		t.Fatalf("after SetDefaultBranch: %v %q", err, repo.GetDefaultBranch())
	}

	_, resp, err := gh.Repositories.Get(ctx, "acme", "missing")
	var ge *github.ErrorResponse
	if !errors.As(err, &ge) || resp.StatusCode != http.StatusNotFound || ge.Message != "Not Found" {
		t.Fatalf("missing repo: err = %v", err)
	}
	if c := s.Counts(); c.APIRepo != 3 || c.API() != 3 || c.Total != 3 {
		t.Fatalf("counts = %+v", c)
	}
}

func TestAPICommitSHA(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r, first, head := newToolsRepo(t, s)
	release := r.Commit("release/v2", map[string]string{"v2.txt": "2\n"})
	r.AnnotatedTag("v1.0", first, "first release\n")
	r.Tag("light", head)
	gh := ghClient(t, s)
	ctx := testCtx(t)

	tests := []struct {
		ref, want string
	}{
		{"main", head},
		{"HEAD", head},
		{"release/v2", release},
		{"refs/heads/release/v2", release},
		{"v1.0", first},
		{"light", head},
		{first, first},
		{first[:10], first},
	}
	for _, tt := range tests {
		got, _, err := gh.Repositories.GetCommitSHA1(ctx, "acme", "tools", tt.ref, "")
		if err != nil || got != tt.want {
			t.Errorf("GetCommitSHA1(%q) = %q, %v; want %s", tt.ref, got, err, tt.want)
		}
	}

	// An encoded slash is the same ref.
	status, hdr, body := get(t, s.APIURL+"/repos/acme/tools/commits/release%2Fv2", "Accept", "application/vnd.github.sha")
	if status != http.StatusOK || string(body) != release || hdr.Get("ETag") != `"`+release+`"` {
		t.Fatalf("encoded slash: %d %q etag %q", status, body, hdr.Get("ETag"))
	}

	s.ResetCounts()
	_, resp, err := gh.Repositories.GetCommitSHA1(ctx, "acme", "tools", "main", head)
	if resp == nil || resp.StatusCode != http.StatusNotModified {
		t.Fatalf("conditional request: resp %v, err %v; want 304", resp, err)
	}
	if c := s.Counts(); c.APICommits != 1 || c.APICommits304 != 1 || c.Total != 1 {
		t.Fatalf("counts after 304 = %+v", c)
	}
	status, _, body = get(t, s.APIURL+"/repos/acme/tools/commits/main",
		"Accept", "application/vnd.github.v3.sha", "If-None-Match", `W/"`+head+`"`)
	if status != http.StatusNotModified || len(body) != 0 {
		t.Fatalf("weak If-None-Match: %d %q", status, body)
	}

	next := r.Commit("main", map[string]string{"new.txt": "x"})
	got, resp, err := gh.Repositories.GetCommitSHA1(ctx, "acme", "tools", "main", head)
	if err != nil || resp.StatusCode != http.StatusOK || got != next {
		t.Fatalf("after a new commit: %q %v", got, err)
	}

	_, resp, err = gh.Repositories.GetCommitSHA1(ctx, "acme", "tools", "no-such-branch", "")
	if err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("unknown ref: %v", err)
	}
	_, resp, err = gh.Repositories.GetCommitSHA1(ctx, "acme", "tools", strings.Repeat("0", 40), "")
	if err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("unknown sha: %v", err)
	}
	s.CreateRepo("acme", "empty")
	_, resp, err = gh.Repositories.GetCommitSHA1(ctx, "acme", "empty", "main", "")
	if err == nil || resp.StatusCode != http.StatusConflict {
		t.Fatalf("empty repo: %v", err)
	}
}

func TestAPICommitJSON(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	_, first, head := newToolsRepo(t, s)
	c, resp, err := ghClient(t, s).Repositories.GetCommit(testCtx(t), "acme", "tools", "main", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.GetSHA() != head || len(c.Parents) != 1 || c.Parents[0].GetSHA() != first || c.GetCommit().GetTree().GetSHA() == "" {
		t.Fatalf("commit = %s parents %v", c.GetSHA(), c.Parents)
	}
	if etag := resp.Header.Get("ETag"); etag == `"`+head+`"` || !strings.Contains(etag, head) {
		t.Fatalf("JSON ETag %q should be derived from, but differ from, the sha media type's", etag)
	}
}

func TestAPIBranchesAndTags(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r, first, head := newToolsRepo(t, s)
	release := r.Commit("release/v2", map[string]string{"v2.txt": "2\n"})
	r.AnnotatedTag("v1.0", first, "first\n")
	gh := ghClient(t, s)
	ctx := testCtx(t)

	var names []string
	opts := &github.BranchListOptions{ListOptions: github.ListOptions{PerPage: 1}}
	for {
		bs, resp, err := gh.Repositories.ListBranches(ctx, "acme", "tools", opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			names = append(names, b.GetName()+"="+b.GetCommit().GetSHA())
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	want := []string{"main=" + head, "release/v2=" + release}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("branches = %v, want %v", names, want)
	}
	tags, _, err := gh.Repositories.ListTags(ctx, "acme", "tools", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tags) != 1 || tags[0].GetName() != "v1.0" || tags[0].GetCommit().GetSHA() != first {
		t.Fatalf("tags = %v", tags)
	}
	if c := s.Counts(); c.APIRefs != 3 {
		t.Fatalf("APIRefs = %d, want 3", c.APIRefs)
	}
}

func TestAPITarball(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	_, _, head := newToolsRepo(t, s)
	gh := ghClient(t, s)
	ctx := testCtx(t)

	var links []string
	for _, maxRedirects := range []int{0, 1} {
		u, _, err := gh.Repositories.GetArchiveLink(ctx, "acme", "tools", github.Tarball,
			&github.RepositoryContentGetOptions{Ref: head}, maxRedirects)
		if err != nil {
			t.Fatalf("GetArchiveLink(maxRedirects=%d): %v", maxRedirects, err)
		}
		links = append(links, u.String())
	}
	u, _, err := gh.Repositories.GetArchiveLink(ctx, "acme", "tools", github.Tarball, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	links = append(links, u.String())
	if links[0] != links[1] || links[1] != links[2] || !strings.HasPrefix(links[0], s.URL+"/") {
		t.Fatalf("archive links = %v", links)
	}

	root := "acme-tools-" + head[:7] + "/"
	for i := 0; i < 2; i++ { // the second download is served from the cache
		status, _, body := get(t, links[0])
		if status != http.StatusOK {
			t.Fatalf("archive status %d", status)
		}
		files, comment := readTarGz(t, body)
		if comment != head {
			t.Fatalf("pax comment = %q, want %s", comment, head)
		}
		if files[root+"bin/run"] != "#!/bin/sh\necho hi\n" || files[root+"CHANGELOG.md"] != "v2\n" {
			t.Fatalf("archive files = %v", files)
		}
		for name := range files {
			if !strings.HasPrefix(name, root) {
				t.Fatalf("entry %q outside %s", name, root)
			}
		}
	}
	if c := s.Counts(); c.APITarball != 3 || c.Archive != 2 || c.Content() != 2 {
		t.Fatalf("counts = %+v", c)
	}

	_, resp, err := gh.Repositories.GetArchiveLink(ctx, "acme", "tools", github.Tarball,
		&github.RepositoryContentGetOptions{Ref: "nope"}, 0)
	if err == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("tarball of unknown ref: %v", err)
	}
	if status, _, _ := get(t, s.URL+"/_archive/acme/tools/"+strings.Repeat("1", 40)+".tar.gz"); status != http.StatusNotFound {
		t.Fatalf("archive of unknown sha: %d", status)
	}
}

func TestAPIOther(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	newToolsRepo(t, s)
	for _, path := range []string{"/api/v3/user", "/api/v3/repos/acme/tools/pulls", "/favicon.ico"} {
		status, _, body := get(t, s.URL+path)
		if status != http.StatusNotFound || !strings.Contains(string(body), `"message":"Not Found"`) {
			t.Fatalf("%s: %d %s", path, status, body)
		}
	}
	if c := s.Counts(); c.Other != 3 || c.Total != 3 {
		t.Fatalf("counts = %+v", c)
	}
	if c := s.RepoCounts("acme", "tools"); c.Other != 1 {
		t.Fatalf("repo counts = %+v", c)
	}
}

// readTarGz returns regular files by name and the pax global comment (git
// archive records the commit id there, as GitHub's tarballs do).
func readTarGz(t *testing.T, data []byte) (map[string]string, string) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string]string{}
	var comment string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files, comment
		}
		if err != nil {
			t.Fatal(err)
		}
		switch hdr.Typeflag {
		case tar.TypeXGlobalHeader:
			comment = hdr.PAXRecords["comment"]
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[hdr.Name] = string(b)
		}
	}
}
