package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCommitDirInsideStaging(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{})
	st, err := s.Stage()
	if err != nil {
		t.Fatal(err)
	}
	dest := st.Path("tree")
	if dest != st.Dir {
		t.Fatalf("Path(\"tree\") = %s, want Dir %s", dest, st.Dir)
	}
	// An archive that wraps everything in one root folder.
	writeTree(t, filepath.Join(dest, "owner-repo-abc1234"), sample)
	d, err := s.CommitDir(context.Background(), st, filepath.Join(dest, "owner-repo-abc1234"))
	if err != nil {
		t.Fatal(err)
	}
	if want := digestOf(t, sample); d != want {
		t.Fatalf("digest %s, want %s", d, want)
	}
	assertClean(t, s)
}

func TestCommitDirRefusesOutside(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "outside")
	writeTree(t, outside, sample)
	tests := []struct {
		name string
		dir  func(st *Staging) string
	}{
		{"absolute elsewhere", func(*Staging) string { return outside }},
		{"the area itself", func(st *Staging) string { return st.root }},
		{"dot-dot", func(st *Staging) string { return filepath.Join(st.root, "..", "..") }},
		{"empty", func(*Staging) string { return "" }},
		{"invalid Path name", func(st *Staging) string { return st.Path("../x") }},
		{"through a symlinked folder", func(st *Staging) string {
			if err := os.Symlink(filepath.Dir(outside), filepath.Join(st.root, "hop")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(st.root, "hop", "outside")
		}},
		{"symlink as the dir", func(st *Staging) string {
			if err := os.Symlink(outside, st.Dir); err != nil {
				t.Fatal(err)
			}
			return st.Dir
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t, Options{})
			st, err := s.Stage()
			if err != nil {
				t.Fatal(err)
			}
			if d, err := s.CommitDir(context.Background(), st, tc.dir(st)); err == nil {
				t.Fatalf("committed %s", d)
			}
			if n := snapshotNames(t, s); len(n) != 0 {
				t.Fatalf("snapshots %v", n)
			}
			if _, err := os.Stat(filepath.Join(outside, "reasonix-plugin.json")); err != nil {
				t.Fatalf("outside tree damaged: %v", err)
			}
			assertClean(t, s)
		})
	}
	for _, bad := range []string{"", ".", "..", "a/b", `a\b`} {
		if p := (&Staging{root: "/x"}).Path(bad); p != "" {
			t.Errorf("Path(%q) = %q, want \"\"", bad, p)
		}
	}
	if p := (&Staging{root: "/x"}).Path("ok.d"); !strings.HasSuffix(p, "ok.d") {
		t.Errorf("Path(ok.d) = %q", p)
	}
}
