package mirror

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/mirror/meta"
	"reasonix.io/plugind/tarball"
)

func TestArchiveIsDeterministicAndKeepsTheDigest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"plugins/a/run.sh":                     "#!/bin/sh\n",
		"plugins/a/.claude-plugin/plugin.json": `{"name":"a"}`,
		"plugins/b/x.md":                       "b",
		"a/" + string(bytes.Repeat([]byte("long-directory-name/"), 8)) + "f": "deep",
		"README.md": "r",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if filepath.Ext(name) == ".sh" {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	digest, tree, err := plugind.TreeDigest(dir, plugind.DefaultBudget)
	if err != nil {
		t.Fatal(err)
	}
	var one, two bytes.Buffer
	n1, sum1, err := writeArchive(context.Background(), &one, tree.Files)
	if err != nil {
		t.Fatal(err)
	}
	// Another order of the same files makes the same bytes.
	rev := append([]plugind.File(nil), tree.Files...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	n2, sum2, err := writeArchive(context.Background(), &two, rev)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one.Bytes(), two.Bytes()) || sum1 != sum2 || n1 != n2 || n1 != int64(one.Len()) {
		t.Fatal("the archive of one tree is not deterministic")
	}
	out := filepath.Join(t.TempDir(), "x")
	if _, err := tarball.ExtractTarGz(context.Background(), &one, out, tarball.Options{}); err != nil {
		t.Fatal(err)
	}
	got, _, err := plugind.TreeDigest(out, plugind.DefaultBudget)
	if err != nil || got != digest {
		t.Fatalf("extracted digest %s, want %s (%v)", got, digest, err)
	}
	if info, err := os.Stat(filepath.Join(out, "plugins/a/run.sh")); err != nil || info.Mode()&0o111 == 0 {
		t.Fatalf("executable bit lost: %v", err)
	}

	sub := subset(tree.Files, []string{"plugins/a"})
	if len(sub) != 2 || totalBytes(sub) != int64(len("#!/bin/sh\n")+len(`{"name":"a"}`)) {
		t.Fatalf("subset %+v", sub)
	}
	if len(subset(tree.Files, nil)) != len(tree.Files) {
		t.Fatal("no paths is the whole tree")
	}
}

func TestPathsKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"b", "a", "b"}, "a\nb"},
		{[]string{"a", ""}, ""},
		{[]string{"."}, ""},
	} {
		if got := meta.PathsKey(tc.in); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
		if tc.want != "" && len(meta.SplitPaths(tc.want)) == 0 {
			t.Errorf("split %q", tc.want)
		}
	}
	if _, err := checkPaths([]string{"ok/x", "../x"}); err == nil {
		t.Fatal("a path leaving the tree was accepted")
	}
	if _, err := checkPaths([]string{"a//b"}); err == nil {
		t.Fatal("an unclean path was accepted")
	}
	if got, err := checkPaths([]string{".", "a/b"}); err != nil || got[0] != "" || got[1] != "a/b" {
		t.Fatalf("%q %v", got, err)
	}
}
