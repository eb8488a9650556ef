package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/tarball"
)

// writeHashed stages files through a hashing, read-only tarball.Writer, as
// the resolver's transports do, and returns the staging area and what the
// Writer reported. empty names an empty directory to create as well.
func writeHashed(t *testing.T, s *Store, files map[string]file, empty string) (*Staging, *tarball.Result) {
	t.Helper()
	st, err := s.Stage()
	if err != nil {
		t.Fatal(err)
	}
	w, err := tarball.NewWriter(context.Background(), st.Dir, tarball.Options{Hash: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range files {
		if err := w.File(name, f.exec, int64(len(f.body)), strings.NewReader(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if empty != "" {
		if err := w.Dir(empty + "/"); err != nil {
			t.Fatal(err)
		}
	}
	res, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return st, res
}

// A tree hashed as it was written commits to the same digest as the same
// tree scanned from disk, with the same read-only, normalized layout, and
// the list is trusted only when it describes the staged tree.
func TestCommitHashed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]file
		empty string
	}{
		{"plain", sample, ""},
		{"empty folder dropped", sample, "docs/empty"},
		{"a .git file falls back to a scan", map[string]file{"a.md": {body: "a"}, "sub/.git/config": {body: "x"}}, ""},
		{"nothing", map[string]file{}, "only/empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openStore(t, Options{})
			st, res := writeHashed(t, s, tt.files, tt.empty)
			got, err := s.CommitHashed(context.Background(), st, res.Tree, res.Dirs)
			if err != nil {
				t.Fatal(err)
			}
			// The same Writer output, committed by scanning it from disk.
			ref := openStore(t, Options{})
			refSt, _ := writeHashed(t, ref, tt.files, tt.empty)
			want, err := ref.Commit(context.Background(), refSt)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("hashed commit %s, scanned commit %s", got, want)
			}
			root, err := s.Path(got)
			if err != nil {
				t.Fatal(err)
			}
			err = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
				if err != nil {
					return err
				}
				if info.Mode().Perm()&0o222 != 0 {
					t.Errorf("%s is writable: %v", p, info.Mode())
				}
				if info.IsDir() && p != root {
					if entries, _ := os.ReadDir(p); len(entries) == 0 {
						t.Errorf("empty folder %s kept", p)
					}
				}
				if filepath.Base(p) == ".git" {
					t.Errorf("%s kept", p)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.CheckSnapshot(got); err != nil {
				t.Errorf("verify: %v", err)
			}
			assertClean(t, s)
		})
	}
}

// An over-budget list is refused before anything is published.
func TestCommitHashedBudget(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{Budget: plugind.Budget{MaxBytes: 1 << 20, MaxFiles: 2}})
	st, res := writeHashed(t, s, sample, "")
	_, err := s.CommitHashed(context.Background(), st, res.Tree, res.Dirs)
	if plugind.CodeOf(err) != plugind.CodeBudgetExceeded {
		t.Fatalf("err %v, want a budget refusal", err)
	}
	if names := snapshotNames(t, s); len(names) != 0 {
		t.Errorf("snapshots %v", names)
	}
	assertClean(t, s)
}
