package dirhandle

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func openRoot(t *testing.T, dir string) *os.Root {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// A folder reached through a symlink, even one that stays inside the
// root, is refused: nothing is ever created through a link.
func TestHandlesNeverFollowASymlink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"out": outside, "in": filepath.Join(root, "real")} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	h := New(openRoot(t, root))
	defer h.Close()
	for _, rel := range []string{"out", "in", "in/deeper"} {
		if _, err := h.Dir(rel); err == nil {
			t.Errorf("Dir(%q) followed a symlink", rel)
		}
		if _, _, err := h.In(rel + "/file"); err == nil {
			t.Errorf("In(%q) followed a symlink", rel+"/file")
		}
	}
	d, name, err := h.In("real/file")
	if err != nil || name != "file" {
		t.Fatalf("In(real/file) = %v, %q, %v", d, name, err)
	}
	f, err := d.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := os.Stat(filepath.Join(root, "real", "file")); err != nil {
		t.Errorf("the file was not created in its folder: %v", err)
	}
}

// More folders than Max are all reachable, each handle on its own
// folder, and at most Max are held open at once.
func TestHandlesStayBounded(t *testing.T) {
	root := t.TempDir()
	h := New(openRoot(t, root))
	defer h.Close()
	for i := range 3 * Max {
		rel := fmt.Sprintf("d%03d", i)
		if err := os.MkdirAll(filepath.Join(root, rel, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		d, name, err := h.In(rel + "/sub/marker")
		if err != nil {
			t.Fatal(err)
		}
		if err := d.WriteFile(name, []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(filepath.Join(root, rel, "sub", "marker")); string(got) != rel {
			t.Fatalf("%s/sub/marker = %q", rel, got)
		}
		if len(h.open) > Max {
			t.Fatalf("%d handles open, at most %d allowed", len(h.open), Max)
		}
	}
}
