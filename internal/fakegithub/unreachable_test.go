package fakegithub_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/storage/memory"

	"reasonix.io/plugind/internal/fakegithub"
)

func TestCommitUnreachable(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r, first, head := newToolsRepo(t, s)
	refsBefore := mustGit(t, r.Dir(), "for-each-ref")
	fork := r.CommitUnreachable("", map[string]string{"evil.md": "from a fork\n", "README.md": fakegithub.Deleted})
	onFirst := r.CommitUnreachable(first, map[string]string{"x": "1"})

	if got := mustGit(t, r.Dir(), "for-each-ref"); got != refsBefore {
		t.Fatalf("refs changed:\n%s\nwant\n%s", got, refsBefore)
	}
	if got := mustGit(t, r.Dir(), "rev-parse", fork+"^", onFirst+"^"); got != head+"\n"+first {
		t.Fatalf("parents = %q, want the default head then first", got)
	}
	if got := treeOf(t, r, fork); !strings.Contains(got, "evil.md=from a fork") || strings.Contains(" "+got, " README.md=") {
		t.Fatalf("unreachable tree = %q", got)
	}

	// REST serves it by SHA, as GitHub serves fork-network commits.
	gh := ghClient(t, s)
	got, _, err := gh.Repositories.GetCommitSHA1(testCtx(t), "acme", "tools", fork, "")
	if err != nil || got != fork {
		t.Fatalf("commits/%s = %q, %v", fork, got, err)
	}
	// So does the archive route.
	status, body := downloadTarball(t, s, fork)
	if status != http.StatusOK {
		t.Fatalf("archive of the unreachable commit: %d", status)
	}
	if files, _ := readTarGz(t, body); files[r.ArchivePrefix(fork)+"evil.md"] != "from a fork\n" {
		t.Fatalf("archive files = %v", files)
	}

	// git refuses it, in both protocols, while a reachable non-tip is fine.
	for _, proto := range []string{"0", "2"} {
		dir := t.TempDir()
		mustGit(t, dir, "init", "--quiet", ".")
		cfg := "protocol.version=" + proto
		out, err := gitCLI(t, dir, "-c", cfg, "fetch", "--depth=1", r.CloneURL(), fork)
		if err == nil || !(strings.Contains(out, "not our ref") || strings.Contains(out, "unadvertised object")) {
			t.Fatalf("protocol v%s: fetch of the unreachable commit: err %v, output %q; want a refusal", proto, err, out)
		}
		mustGit(t, dir, "-c", cfg, "fetch", "--quiet", "--depth=1", r.CloneURL(), first)
	}
	repo, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{r.CloneURL()}})
	if err != nil {
		t.Fatal(err)
	}
	err = remote.FetchContext(testCtx(t), &git.FetchOptions{
		RefSpecs: []config.RefSpec{config.RefSpec("+" + onFirst + ":refs/heads/x")}, Depth: 1, Tags: git.NoTags,
	})
	if err == nil {
		t.Fatal("go-git fetched the unreachable commit")
	}

	// Once a branch points at it, it is an ordinary commit.
	r.ResetBranch("published", fork)
	dir := t.TempDir()
	mustGit(t, dir, "init", "--quiet", ".")
	mustGit(t, dir, "fetch", "--quiet", "--depth=1", r.CloneURL(), fork)
}

// A force push orphans the old head: the same rules apply to it.
func TestForcePushedCommitIsUnreachable(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r, first, head := newToolsRepo(t, s)
	r.ResetBranch("main", first)
	dir := t.TempDir()
	mustGit(t, dir, "init", "--quiet", ".")
	if out, err := gitCLI(t, dir, "fetch", "--depth=1", r.CloneURL(), head); err == nil {
		t.Fatalf("fetched the force-pushed-away head: %s", out)
	}
	if status, _, body := get(t, s.APIURL+"/repos/acme/tools/commits/"+head, "Accept", "application/vnd.github.sha"); status != http.StatusOK || string(body) != head {
		t.Fatalf("REST lost the orphaned head: %d %q", status, body)
	}
}

func TestServeUnreachableWants(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r, _, _ := newToolsRepo(t, s)
	fork := r.CommitUnreachable("", map[string]string{"evil.md": "x"})
	s.ServeUnreachableWants(true)
	for _, proto := range []string{"0", "2"} {
		dir := t.TempDir()
		mustGit(t, dir, "init", "--quiet", ".")
		mustGit(t, dir, "-c", "protocol.version="+proto, "fetch", "--quiet", "--depth=1", r.CloneURL(), fork)
	}
	repo, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{r.CloneURL()}})
	if err != nil {
		t.Fatal(err)
	}
	err = remote.FetchContext(testCtx(t), &git.FetchOptions{
		RefSpecs: []config.RefSpec{config.RefSpec("+" + fork + ":refs/heads/x")}, Depth: 1, Tags: git.NoTags,
	})
	if err != nil {
		t.Fatalf("go-git fetch with unreachable wants served: %v", err)
	}
	// RefuseSHAWants is stricter and wins.
	s.RefuseSHAWants(true)
	dir := t.TempDir()
	mustGit(t, dir, "init", "--quiet", ".")
	if out, err := gitCLI(t, dir, "fetch", "--depth=1", r.CloneURL(), fork); err == nil {
		t.Fatalf("fetched with RefuseSHAWants on: %s", out)
	}
}

// Protocol v2 upload-pack checks no want itself; the fake refuses what v0
// would, whatever protocol the request speaks.
func TestUploadPackRefusesNonCommitAndUnreachableWants(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r, first, _ := newToolsRepo(t, s)
	fork := r.CommitUnreachable("", map[string]string{"evil.md": "x"})
	blob := mustGit(t, r.Dir(), "rev-parse", first+":README.md")
	pkt := func(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }
	v2 := func(want string) string {
		return pkt("command=fetch\n") + "0001" + pkt("want "+want+"\n") + pkt("done\n") + "0000"
	}
	tests := []struct {
		name, want string
		refused    bool
	}{
		{"reachable non-tip commit", first, false},
		{"unreachable commit", fork, true},
		{"blob", blob, true},
		{"missing object", strings.Repeat("1", 40), true},
	}
	for _, tt := range tests {
		req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, r.CloneURL()+"/git-upload-pack", strings.NewReader(v2(tt.want)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-git-upload-pack-request")
		req.Header.Set("Git-Protocol", "version=2")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		refused := strings.Contains(string(body), "ERR upload-pack: not our ref "+tt.want)
		if resp.StatusCode != http.StatusOK || refused != tt.refused {
			t.Errorf("%s: status %d, refused %v, want refused %v; body %.80q", tt.name, resp.StatusCode, refused, tt.refused, body)
		}
	}
}
