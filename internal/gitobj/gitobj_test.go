package gitobj_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/gitobj"
)

// git runs git in dir and returns its trimmed output.
func git(t *testing.T, dir string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

type entry struct {
	path, content string
	mode          uint32
}

// TestBuilderMatchesGit hashes trees with the Builder, entries given in a
// scrambled order, and with git's own index (update-index, write-tree).
func TestBuilderMatchesGit(t *testing.T) {
	t.Parallel()
	const sub = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name    string
		entries []entry
		dirs    []string // empty folders an archive would show (submodules)
	}{
		{"one file", []entry{{"README.md", "hello\n", gitobj.ModeFile}}, nil},
		{"git's name order", []entry{
			{"a.txt", "1", gitobj.ModeFile}, {"a/b", "2", gitobj.ModeFile}, {"a0", "3", gitobj.ModeFile},
			{"a-b/c", "4", gitobj.ModeExec}, {"ab", "", gitobj.ModeFile}, {"A", "upper", gitobj.ModeFile},
		}, nil},
		{"modes", []entry{
			{"bin/run", "#!/bin/sh\n", gitobj.ModeExec}, {"link", "bin/run", gitobj.ModeLink},
			{"deep/er/still/file", strings.Repeat("x", 70000), gitobj.ModeFile},
		}, nil},
		{"a submodule", []entry{{".gitmodules", "[submodule \"m\"]\n\tpath = m\n\turl = ../m\n", gitobj.ModeFile}, {"m", sub, gitobj.ModeGitlink}}, []string{"m"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			git(t, dir, "", "init", "-q")
			h := gitobj.NewHasher()
			b := gitobj.NewBuilder(h)
			for _, d := range tc.dirs {
				b.Dir(d)
			}
			var index bytes.Buffer
			for i := len(tc.entries) - 1; i >= 0; i-- {
				e := tc.entries[i]
				id := gitobj.ID{}
				if e.mode == gitobj.ModeGitlink {
					id, _ = gitobj.ParseID(e.content)
				} else {
					id = h.Blob([]byte(e.content))
					f := filepath.Join(dir, "blob")
					if err := os.WriteFile(f, []byte(e.content), 0o644); err != nil {
						t.Fatal(err)
					}
					if got := git(t, dir, "", "hash-object", "-w", f); got != id.String() {
						t.Fatalf("blob %q: %s, git says %s", e.path, id, got)
					}
				}
				if err := b.Add(e.path, e.mode, id); err != nil {
					t.Fatal(err)
				}
				index.WriteString(strings.Join([]string{modeString(e.mode), id.String(), e.path}, ",") + "\n")
			}
			for _, line := range strings.Split(strings.TrimSpace(index.String()), "\n") {
				f := strings.SplitN(line, ",", 3)
				git(t, dir, "", "update-index", "--add", "--cacheinfo", f[0]+","+f[1]+","+f[2])
			}
			want := git(t, dir, "", "write-tree")
			if got := b.Finish(); got.String() != want {
				t.Fatalf("root tree %s, git says %s", got, want)
			}
			for _, e := range tc.entries {
				if i := strings.LastIndexByte(e.path, '/'); i > 0 {
					id, ok := b.TreeID(e.path[:i])
					want := git(t, dir, "", "rev-parse", want+":"+e.path[:i])
					if !ok || id.String() != want {
						t.Errorf("tree %q: %s, git says %s", e.path[:i], id, want)
					}
				}
			}
		})
	}
}

// modeString is m as git's update-index takes it.
func modeString(m uint32) string {
	const digits = "01234567"
	var out []byte
	for ; m > 0; m /= 8 {
		out = append([]byte{digits[m%8]}, out...)
	}
	return string(out)
}

func TestEmptyTree(t *testing.T) {
	t.Parallel()
	// git's well-known id of the empty tree.
	if got := gitobj.NewBuilder(gitobj.NewHasher()).Finish().String(); got != "4b825dc642cb6eb9a060e54bf8d69288fbee4904" {
		t.Fatalf("empty tree %s", got)
	}
}

func TestFirstDifference(t *testing.T) {
	t.Parallel()
	id := func(s string) gitobj.ID { return gitobj.NewHasher().Blob([]byte(s)) }
	base := []gitobj.Entry{{Name: "a", Mode: gitobj.ModeFile, ID: id("a")}, {Name: "b", Mode: gitobj.ModeTree, ID: id("b")}, {Name: "c", Mode: gitobj.ModeFile, ID: id("c")}}
	with := func(f func([]gitobj.Entry) []gitobj.Entry) []gitobj.Entry {
		return f(append([]gitobj.Entry(nil), base...))
	}
	cases := []struct {
		name               string
		ours               []gitobj.Entry
		want               string
		hasOurs, hasTheirs bool
	}{
		{"same", base, "", false, false},
		{"changed", with(func(e []gitobj.Entry) []gitobj.Entry { e[2].ID = id("x"); return e }), "c", true, true},
		{"mode", with(func(e []gitobj.Entry) []gitobj.Entry { e[0].Mode = gitobj.ModeExec; return e }), "a", true, true},
		{"added", with(func(e []gitobj.Entry) []gitobj.Entry {
			return append(e, gitobj.Entry{Name: "a0", Mode: gitobj.ModeFile})
		}), "a0", true, false},
		{"missing", base[1:], "a", false, true},
	}
	for _, tc := range cases {
		d, ok := gitobj.FirstDifference(tc.ours, base)
		if ok != (tc.want != "") || d.Name != tc.want || (d.Ours != nil) != tc.hasOurs || (d.Theirs != nil) != tc.hasTheirs {
			t.Errorf("%s: %+v %v, want %q", tc.name, d, ok, tc.want)
		}
	}
}
