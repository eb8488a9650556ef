package manifest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"reasonix.io/plugind"
)

// TestReadFile: the one reader of package files reads regular files inside
// the folder, and refuses — without opening, blocking or reading past the
// limit — everything else.
func TestReadFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(outside, []byte("secret"), 0o644))
	must(os.MkdirAll(filepath.Join(root, "d"), 0o755))
	must(os.WriteFile(filepath.Join(root, "d", "ok.md"), []byte("fine"), 0o644))
	must(os.WriteFile(filepath.Join(root, "big"), make([]byte, 2048), 0o644))
	must(os.Symlink("d/ok.md", filepath.Join(root, "rel-link")))
	must(os.Symlink(filepath.Join(root, "d", "ok.md"), filepath.Join(root, "abs-link")))
	must(os.Symlink(outside, filepath.Join(root, "out-link")))
	must(os.Symlink("/dev/zero", filepath.Join(root, "zero")))
	must(syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644))
	for _, c := range []struct {
		rel  string
		want string // "" for the file's content "fine"
		is   error
	}{
		{rel: "d/ok.md"},
		{rel: "rel-link"},
		{rel: "abs-link"}, // an absolute link that stays inside is followed, as install does
		{rel: "missing", is: fs.ErrNotExist},
		{rel: "out-link", is: ErrOutside},
		{rel: "zero", is: ErrOutside},
		{rel: "../secret", is: ErrOutside},
		{rel: "pipe", is: plugind.ErrNotRegular},
		{rel: "d", is: plugind.ErrNotRegular},
		{rel: "big", is: ErrTooLarge},
	} {
		start := time.Now()
		data, err := ReadFile(root, c.rel, 1024)
		if time.Since(start) > 5*time.Second {
			t.Errorf("%s took %s", c.rel, time.Since(start))
		}
		switch {
		case c.is == nil && (err != nil || string(data) != "fine"):
			t.Errorf("%s: %q %v", c.rel, data, err)
		case c.is != nil && (!errors.Is(err, c.is) || data != nil):
			t.Errorf("%s: %q %v, want %v", c.rel, data, err, c.is)
		}
	}
}
