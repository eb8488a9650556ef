package git

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/internal/gitobj"
	"reasonix.io/plugind/resolver/host"
)

// A fetch names the git trees of what it wrote (the root's and each kept
// folder's; every folder's for the whole tree) and reports them proven: every object's id was checked as the
// pack was indexed.
func TestFetchGitTrees(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(t)
	r := fake.CreateRepo("acme", "tools")
	sha := r.Commit("main", map[string]string{"README.md": "hi", "plugins/x/a.md": "x", "plugins/y/b.md": "y"})
	repo := newRepo(t, fake, "acme", "tools")
	for _, paths := range [][]string{nil, {"plugins/x", "plugins/y"}} {
		got, err := repo.Fetch(context.Background(), sha, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{Paths: paths})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"": r.TreeID(sha, "")}
		folders := paths
		if paths == nil {
			folders = []string{"plugins", "plugins/x", "plugins/y"}
		}
		for _, p := range folders {
			want[p] = r.TreeID(sha, p)
		}
		if got.Proof != host.ProofGitTree || len(got.GitTrees) != len(want) {
			t.Errorf("paths %q: proof %q, trees %v, want %v", paths, got.Proof, got.GitTrees, want)
		}
		for p, id := range want {
			if got.GitTrees[p] != id {
				t.Errorf("paths %q: GitTrees[%q] = %q, want %q", paths, p, got.GitTrees[p], id)
			}
		}
	}
}

// CommitTree reads the commit and its root tree alone (filter tree:1):
// one upload-pack, no blob; a server that cannot filter or serve the
// commit by id says it cannot (errors.ErrUnsupported).
func TestCommitTree(t *testing.T) {
	t.Parallel()
	fake := fakegithub.New(t)
	r := fake.CreateRepo("acme", "tools")
	old := r.Commit("main", map[string]string{"README.md": "hi", "plugins/x/a.md": "x", "run": fakegithub.Executable("#!/bin/sh\n")})
	r.Commit("main", map[string]string{"README.md": "changed"})
	repo := newRepo(t, fake, "acme", "tools")
	fake.ResetCounts()
	ct, err := repo.CommitTree(context.Background(), old)
	if err != nil {
		t.Fatal(err)
	}
	if ct.ID != r.TreeID(old, "") {
		t.Errorf("tree %s, want %s", ct.ID, r.TreeID(old, ""))
	}
	names := make([]string, 0, len(ct.Entries))
	for _, e := range ct.Entries {
		names = append(names, e.Name)
		if e.Name == "plugins" && (e.Mode != gitobj.ModeTree || e.ID.String() != r.TreeID(old, "plugins")) {
			t.Errorf("plugins: %+v", e)
		}
		if e.Name == "run" && e.Mode != gitobj.ModeExec {
			t.Errorf("run: mode %o", e.Mode)
		}
	}
	if !slices.Equal(names, []string{"README.md", "plugins", "run"}) {
		t.Errorf("root entries %q", names)
	}
	if c := fake.Counts(); c.InfoRefs != 1 || c.CommitReads != 1 || c.UploadPack != 0 {
		t.Errorf("%+v: want one advertisement and one commit read", c)
	}

	fake.RefuseSHAWants(true)
	refusing := newRepo(t, fake, "acme", "tools")
	if _, err := refusing.CommitTree(context.Background(), old); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("a server refusing commits by id: %v, want unsupported", err)
	}
}
