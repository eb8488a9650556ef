package resolver

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"reasonix.io/plugind/resolver/host"

	"reasonix.io/plugind"
)

// Budgets count the plugin, not the monorepo (SPEC §8, issue 13): a
// marketplace whose own repository holds a file far over the budget, with
// a relative entry, a git-subdir entry and a github entry with a path into
// another such repository, installs every plugin whose folder fits, over
// git and over archives, with the digests of the same plugins in
// repositories without the big file; the rest of those repositories is
// never stored. A re-plan, warm or offline, does not try the whole tree
// again.
func TestMarketplaceOfHugeRepositories(t *testing.T) {
	t.Parallel()
	budget := plugind.Budget{MaxBytes: 256 << 10, MaxFiles: 1000}
	for _, gitOff := range []bool{false, true} {
		e := newEnv(t, envOpts{gitOff: gitOff, budget: budget})
		big := e.gh.CreateRepo("acme", "big")
		big.Commit("main", prefixed("plugins/sub", pluginTree("sub")))
		bigSHA := big.CommitLargeFile("main", "assets/huge.bin", 2<<20)
		small := e.gh.CreateRepo("acme", "small")
		small.Commit("main", prefixed("plugins/sub", pluginTree("sub")))
		small.Commit("main", prefixed("plugins/rel", pluginTree("rel")))

		doc, err := json.Marshal(map[string]any{
			"name": "mono", "owner": map[string]string{"name": "acme"},
			"plugins": []map[string]any{
				{"name": "rel", "source": "./plugins/rel"},
				{"name": "sub", "source": map[string]any{"source": "git-subdir", "url": "https://github.com/acme/big.git", "path": "plugins/sub", "sha": bigSHA}},
				{"name": "gh", "source": map[string]any{"source": "github", "repo": "acme/big", "path": "plugins/sub", "sha": bigSHA}},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		mono := e.gh.CreateRepo("acme", "mono")
		files := prefixed("plugins/rel", pluginTree("rel"))
		files[".claude-plugin/marketplace.json"] = string(doc)
		mono.Commit("main", files)
		mono.CommitLargeFile("main", "assets/huge.bin", 2<<20)

		want := map[string]string{}
		for _, p := range []string{"plugins/sub", "plugins/rel"} {
			f, err := e.resolve("https://github.com/acme/small/tree/main/" + p)
			if err != nil {
				t.Fatalf("git off %v: reference %s: %v", gitOff, p, err)
			}
			want[p] = f.Candidates[0].Digest
		}
		wantDigest := map[string]string{"rel": want["plugins/rel"], "sub": want["plugins/sub"], "gh": want["plugins/sub"]}

		for _, pass := range []string{"cold", "warm", "offline"} {
			e.reset()
			var mods []func(*Request)
			if pass == "offline" {
				mods = append(mods, offline)
			}
			f, err := e.resolve("git:github.com/acme/mono", mods...)
			if err != nil {
				t.Fatalf("git off %v, %s: %v", gitOff, pass, err)
			}
			if len(f.Candidates) != 3 {
				t.Fatalf("git off %v, %s: %d candidates", gitOff, pass, len(f.Candidates))
			}
			for _, c := range f.Candidates {
				if c.Err != nil {
					t.Errorf("git off %v, %s: %s: %v", gitOff, pass, c.Name, c.Err)
					continue
				}
				if c.Digest != wantDigest[c.Name] {
					t.Errorf("git off %v, %s: %s digest %s, want %s (the same plugin without the big file)", gitOff, pass, c.Name, c.Digest, wantDigest[c.Name])
				}
			}
			if pass != "cold" && e.content() != 0 {
				t.Errorf("git off %v, %s: %d content requests", gitOff, pass, e.content())
			}
			if pass == "offline" && e.requests() != 0 {
				t.Errorf("git off %v, offline: %d requests", gitOff, e.requests())
			}
		}
		// Nothing stored holds the big file.
		list, err := e.st.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, sn := range list {
			if sn.Bytes > budget.MaxBytes {
				t.Errorf("git off %v: snapshot %s holds %d bytes", gitOff, sn.Digest, sn.Bytes)
			}
		}
	}
}

// On GitHub, a fetch of some folders (a git-subdir entry, a tree URL's
// path) streams the archive and keeps only them: no upload-pack, the same
// digest as git gives for the whole tree, reachability of a pin still
// proven (an unreachable pin is refused before any content), and the
// candidate says which transport brought it.
func TestGitHubFoldersComeFromTheArchive(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	r := e.gh.CreateRepo("acme", "tools")
	old := r.Commit("main", prefixed("plugins/x", pluginTree("x")))
	r.Commit("main", map[string]string{"README.md": "tools\n"})

	whole, err := e.resolve("https://github.com/acme/tools/tree/" + old)
	if err != nil {
		t.Fatal(err)
	}
	ref, _, err := plugind.TreeDigest(filepath.Join(whole.Candidates[0].Dir, "plugins", "x"), plugind.DefaultBudget)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Transport != "git" {
		t.Errorf("whole tree came by %q, want git (SPEC §6: git first)", whole.Transport)
	}

	e2 := newEnv(t, envOpts{})
	r2 := e2.gh.CreateRepo("acme", "tools")
	old2 := r2.Commit("main", prefixed("plugins/x", pluginTree("x")))
	r2.Commit("main", map[string]string{"README.md": "tools\n"})
	orphan2 := r2.CommitUnreachable(old2, prefixed("plugins/x", pluginTree("y")))
	tests := []struct {
		name, src string
		wantErr   error
	}{
		{"pinned, not a tip", "https://github.com/acme/tools/tree/" + old2 + "/plugins/x", nil},
		{"branch", "https://github.com/acme/tools/tree/main/plugins/x", nil},
		{"unreachable pin", "https://github.com/acme/tools/tree/" + orphan2 + "/plugins/x", host.ErrUnreachable},
	}
	for _, tt := range tests {
		e2.reset()
		f, err := e2.resolve(tt.src)
		c := e2.gh.Counts()
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("%s: err %v, want %v", tt.name, err, tt.wantErr)
			}
			if c.Content() != 0 {
				t.Errorf("%s: %d content requests before the refusal", tt.name, c.Content())
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if c.UploadPack != 0 || c.Archive != 1 {
			t.Errorf("%s: %d upload-packs, %d archives; want the archive alone", tt.name, c.UploadPack, c.Archive)
		}
		cand := f.Candidates[0]
		if f.Transport != "archive" || cand.Transport != "archive" {
			t.Errorf("%s: transport %q / %q, want archive", tt.name, f.Transport, cand.Transport)
		}
		if cand.Digest != ref {
			t.Errorf("%s: digest %s, git gave %s", tt.name, cand.Digest, ref)
		}
	}
}
