package tarball

import (
	"context"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// gitArchiveOf makes the archive of HEAD in format, in GitHub's layout.
func gitArchiveOf(t *testing.T, repo, sha, format string) string {
	t.Helper()
	archive := filepath.Join(t.TempDir(), "archive."+format)
	git(t, repo, "archive", "--format="+format, "--prefix=acme-tools-"+sha[:7]+"/", "-o", archive, "HEAD")
	return archive
}

func extractFile(t *testing.T, archive, format string, opts Options) (*Result, error) {
	t.Helper()
	dest := filepath.Join(t.TempDir(), "out")
	if format == "zip" {
		return ExtractZipFile(context.Background(), archive, dest, opts)
	}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return ExtractTarGz(context.Background(), f, dest, opts)
}

// What git archive wrote hashes, with Options.GitTree, to the commit's own
// tree id, and each kept folder to its tree's: every entry counts, the ones
// left out included, a submodule (an empty folder in the archive) as the
// gitlink FindGitlinks names.
func TestGitTreeOfGitArchive(t *testing.T) {
	t.Parallel()
	repo, _ := gitRepo(t)
	const subCommit = "0123456789abcdef0123456789abcdef01234567"
	if err := os.WriteFile(filepath.Join(repo, ".gitmodules"), []byte("[submodule \"lib\"]\n\tpath = vendor/lib\n\turl = https://example.com/lib.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "add", ".gitmodules")
	git(t, repo, "update-index", "--add", "--cacheinfo", "160000,"+subCommit+",vendor/lib")
	git(t, repo, "commit", "-q", "-m", "a submodule")
	sha := strings.TrimSpace(git(t, repo, "rev-parse", "HEAD"))
	treeOf := func(p string) string { return strings.TrimSpace(git(t, repo, "rev-parse", "HEAD:"+p)) }
	for _, format := range []string{"tar.gz", "zip"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			archive := gitArchiveOf(t, repo, sha, format)
			var asked []string
			res, err := extractFile(t, archive, format, Options{StripRoot: true, ExpectCommit: sha, GitTree: true,
				Paths: []string{"skills", "docs/very"},
				FindGitlinks: func(_ context.Context, paths []string) (map[string]string, error) {
					asked = append(asked, paths...)
					return map[string]string{"vendor/lib": subCommit}, nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"": treeOf(""), "skills": treeOf("skills"), "docs/very": treeOf("docs/very")}
			for p, id := range want {
				if res.GitTrees[p] != id {
					t.Errorf("GitTrees[%q] = %s, git says %s (all: %v)", p, res.GitTrees[p], id, res.GitTrees)
				}
			}
			if !slices.Equal(asked, []string{"vendor/lib"}) {
				t.Errorf("FindGitlinks asked about %q, want the submodule outside the kept folders too", asked)
			}
			if res.Files != 2 || len(res.GitAttributes) != 0 {
				t.Errorf("files %d, attributes %q: want the 2 kept files, none", res.Files, res.GitAttributes)
			}
			entries, ok := res.GitEntries("vendor")
			if !ok || len(entries) != 1 || entries[0].Name != "lib" || entries[0].ID.String() != subCommit {
				t.Errorf("entries of vendor: %+v", entries)
			}

			// The whole tree names every folder, as git lists them: none
			// of the submodule's, which git's tree holds as a gitlink.
			whole, err := extractFile(t, archive, format, Options{StripRoot: true, ExpectCommit: sha, GitTree: true,
				Submodules: newFakeSubmodules(t, nil).fetch,
				FindGitlinks: func(context.Context, []string) (map[string]string, error) {
					return map[string]string{"vendor/lib": subCommit}, nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			want = map[string]string{"": treeOf("")}
			for _, line := range strings.Split(strings.TrimSpace(git(t, repo, "ls-tree", "-r", "-d", sha)), "\n") {
				meta, p, _ := strings.Cut(line, "\t")
				if f := strings.Fields(meta); f[1] == "tree" {
					want[p] = f[2]
				}
			}
			if !maps.Equal(whole.GitTrees, want) || len(want) < 4 {
				t.Errorf("whole tree: GitTrees = %v, git says %v", whole.GitTrees, want)
			}
		})
	}
}

// A .gitattributes that names an export attribute is reported: git
// archive then writes something other than the tree, as it did here.
func TestGitTreeExportAttributes(t *testing.T) {
	t.Parallel()
	repo, _ := gitRepo(t)
	if err := os.WriteFile(filepath.Join(repo, "docs", ".gitattributes"), []byte("# archives leave the deep docs out\nvery export-ignore\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "attributes")
	sha := strings.TrimSpace(git(t, repo, "rev-parse", "HEAD"))
	res, err := extractFile(t, gitArchiveOf(t, repo, sha, "tar.gz"), "tar.gz", Options{StripRoot: true, GitTree: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.GitAttributes, []string{"docs/.gitattributes"}) {
		t.Errorf("GitAttributes = %q", res.GitAttributes)
	}
	if tree := strings.TrimSpace(git(t, repo, "rev-parse", "HEAD^{tree}")); res.GitTrees[""] == tree {
		t.Errorf("an archive without docs/very hashed as the commit's tree %s", tree)
	}
}

// The scan finds an attribute split between two reads, once.
func TestAttrScan(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"*.md export-subst\n", strings.Repeat("# padding\n", 40) + "x export-ignore", "*.bin filter=lfs diff=lfs merge=lfs -text\n", "*.sh text eol=lf\n"} {
		found := 0
		a := &attrScan{r: iotest.OneByteReader(strings.NewReader(text + text)), found: func() { found++ }}
		if _, err := io.Copy(io.Discard, a); err != nil {
			t.Fatal(err)
		}
		want := 0
		if strings.Contains(text, "export-") || strings.Contains(text, "filter=lfs") {
			want = 1
		}
		if found != want {
			t.Errorf("%q: found %d times, want %d", text, found, want)
		}
	}
}
