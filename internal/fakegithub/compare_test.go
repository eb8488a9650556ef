package fakegithub_test

import (
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-github/v62/github"

	"reasonix.io/plugind/internal/fakegithub"
)

func TestAPICompare(t *testing.T) {
	t.Parallel()
	s := newCompareServer(t)
	gh := ghClient(t, s.Server)
	ctx := testCtx(t)
	tests := []struct {
		base, head     string
		status         string
		ahead, behind  int
		mergeBase      string
		commits        []string
		wantBaseCommit string
	}{
		{"main", s.main2, "identical", 0, 0, s.main2, nil, s.main2},
		{"main", s.first, "behind", 0, 2, s.first, nil, s.main2},
		{"v1", "main", "ahead", 2, 0, s.first, []string{s.second, s.main2}, s.first},
		{s.first[:10], "main", "ahead", 2, 0, s.first, []string{s.second, s.main2}, s.first},
		{"main", "feature", "diverged", 1, 1, s.second, []string{s.feature}, s.main2},
		{"main", s.fork, "diverged", 1, 2, s.first, []string{s.fork}, s.main2},
		{"main", s.fork2, "ahead", 1, 0, s.main2, []string{s.fork2}, s.main2},
		{"release/v2", s.main2, "behind", 0, 1, s.main2, nil, s.release},
		{"refs/heads/feature", "v1", "behind", 0, 2, s.first, nil, s.feature},
	}
	for _, tt := range tests {
		c, _, err := gh.Repositories.CompareCommits(ctx, "acme", "tools", tt.base, tt.head, nil)
		if err != nil {
			t.Errorf("compare %s...%s: %v", tt.base, tt.head, err)
			continue
		}
		var commits []string
		for _, rc := range c.Commits {
			commits = append(commits, rc.GetSHA())
		}
		if c.GetStatus() != tt.status || c.GetAheadBy() != tt.ahead || c.GetBehindBy() != tt.behind ||
			c.GetTotalCommits() != tt.ahead || c.GetMergeBaseCommit().GetSHA() != tt.mergeBase ||
			c.GetBaseCommit().GetSHA() != tt.wantBaseCommit || !slices.Equal(commits, tt.commits) {
			t.Errorf("compare %s...%s = %s ahead %d behind %d total %d merge base %s base %s commits %v;\nwant %s ahead %d behind %d merge base %s base %s commits %v",
				tt.base, tt.head, c.GetStatus(), c.GetAheadBy(), c.GetBehindBy(), c.GetTotalCommits(),
				c.GetMergeBaseCommit().GetSHA(), c.GetBaseCommit().GetSHA(), commits,
				tt.status, tt.ahead, tt.behind, tt.mergeBase, tt.wantBaseCommit, tt.commits)
		}
	}
	if c := s.Counts(); c.APICompare != len(tests) || c.API() != len(tests) || c.Total != len(tests) {
		t.Fatalf("counts = %+v", c)
	}
}

func TestAPICompareNotFound(t *testing.T) {
	t.Parallel()
	s := newCompareServer(t)
	gh := ghClient(t, s.Server)
	ctx := testCtx(t)
	tests := []struct {
		repo, base, head, message string
	}{
		{"tools", "nope", "main", "Not Found"},
		{"tools", "main", "nope", "Not Found"},
		{"tools", "main", "1111111111111111111111111111111111111111", "Not Found"},
		{"missing", "main", "main", "Not Found"},
		{"tools", "main", "orphan", "No common ancestor between main and orphan."},
	}
	for _, tt := range tests {
		_, resp, err := gh.Repositories.CompareCommits(ctx, "acme", tt.repo, tt.base, tt.head, nil)
		var ge *github.ErrorResponse
		if !errors.As(err, &ge) || resp.StatusCode != http.StatusNotFound || ge.Message != tt.message {
			t.Errorf("compare %s %s...%s: err %v, want 404 %q", tt.repo, tt.base, tt.head, err, tt.message)
		}
	}
	for _, path := range []string{"/compare/main", "/compare/...main", "/compare/main..."} {
		if status, _, _ := get(t, s.APIURL+"/repos/acme/tools"+path); status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, status)
		}
	}
	if c := s.Counts(); c.APICompare != len(tests)+3 {
		t.Fatalf("APICompare = %d, want %d", c.APICompare, len(tests)+3)
	}
}

func TestAPIComparePages(t *testing.T) {
	t.Parallel()
	s := newCompareServer(t)
	gh := ghClient(t, s.Server)
	var got []string
	opts := &github.ListOptions{PerPage: 1}
	for {
		c, resp, err := gh.Repositories.CompareCommits(testCtx(t), "acme", "tools", "v1", "main", opts)
		if err != nil {
			t.Fatal(err)
		}
		if c.GetAheadBy() != 2 || len(c.Commits) != 1 {
			t.Fatalf("page %d: ahead %d, %d commits", opts.Page, c.GetAheadBy(), len(c.Commits))
		}
		got = append(got, c.Commits[0].GetSHA())
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if !slices.Equal(got, []string{s.second, s.main2}) {
		t.Fatalf("paged commits = %v", got)
	}
}

type compareServer struct {
	*fakegithub.Server
	first, second, main2, feature, release, fork, fork2 string
}

// newCompareServer builds acme/tools:
//
//	first ─ second ─ main2 (main) ─ release (release/v2)
//	  │        │        └ fork2 (unreachable)
//	  │        └ feature (feature)
//	  ├ v1 (tag)
//	  └ fork (unreachable)
//	orphan: a root commit of its own
func newCompareServer(t *testing.T) compareServer {
	t.Helper()
	s := fakegithub.New(t)
	r, first, second := newToolsRepo(t, s)
	c := compareServer{Server: s, first: first, second: second}
	r.Tag("v1", first)
	c.feature = r.Commit("feature", map[string]string{"f": "1"})
	c.main2 = r.Commit("main", map[string]string{"m": "1"})
	c.release = r.Commit("release/v2", map[string]string{"r": "1"})
	c.fork = r.CommitUnreachable(first, map[string]string{"evil": "1"})
	c.fork2 = r.CommitUnreachable("", map[string]string{"evil": "2"})
	r.SetDefaultBranch("orphan") // a new default branch starts from nothing
	r.Commit("orphan", map[string]string{"o": "1"})
	r.SetDefaultBranch("main")
	return c
}
