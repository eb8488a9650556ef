package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// modeOf is path's permission bits.
func modeOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return info.Mode().Perm()
}

// TestHomeIsPrivate: everything reasonix makes in the home is private to
// the user (folders 0700, its files 0600) whatever the umask, through the
// commands and the daemon; an existing home with loose modes is made
// private, saying what changed.
//
// Not parallel: it runs with umask 0, so a mode it finds private was made
// private on purpose, and the umask is the whole process's.
func TestHomeIsPrivate(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })

	home := filepath.Join(t.TempDir(), "fresh", "home")
	market := filepath.Join(t.TempDir(), "market")
	writeFile(t, filepath.Join(market, ".claude-plugin", "marketplace.json"), `{"name":"modes","owner":{"name":"x"},"plugins":[{"name":"private","source":"./private"}]}`)
	writeNamedPlugin(t, market, "private")
	if r := runBinary(t, home, nil, "marketplace", "add", market); r.code != 0 {
		t.Fatalf("marketplace add: %d %s", r.code, r.stderr)
	}
	if r := runBinary(t, home, nil, "plugin", "install", filepath.Join(market, "private"), "--yes"); r.code != 0 {
		t.Fatalf("install: %d %s", r.code, r.stderr)
	}
	d := startDaemon(t, home, nil)
	if r := d.do("GET", "/plugins", nil); r.status != 200 {
		t.Fatalf("daemon: %d %s", r.status, r.body)
	}

	want := map[string]fs.FileMode{
		".":                    0o700,
		"cache":                0o700,
		"store":                0o700,
		"store/snapshots":      0o700,
		"store/staging":        0o700,
		"plugins":              0o700,
		"cache/cache.db":       0o600,
		"cache/cache.db-wal":   0o600,
		"cache/cache.db-shm":   0o600,
		"serve.addr":           0o600,
		"serve.token":          0o600,
		"plugin-packages.json": 0o600,
		"marketplaces.json":    0o600,
		".lock":                0o600,
	}
	for rel, mode := range want {
		if got := modeOf(t, filepath.Join(home, rel)); got != mode {
			t.Errorf("%s has mode %#o, want %#o", rel, got, mode)
		}
	}
	// The folders above the home that reasonix had to create too.
	if got := modeOf(t, filepath.Dir(home)); got != 0o700 {
		t.Errorf("the home's parent, created for it, has mode %#o", got)
	}
	if code := d.stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}

	// A home made before, with loose modes, is made private by the next
	// command, which says what it changed.
	loose := map[string]fs.FileMode{".": 0o755, "cache": 0o755, "plugins": 0o777, "cache/cache.db": 0o644, "plugin-packages.json": 0o644, "marketplaces.json": 0o666}
	for rel, mode := range loose {
		if err := os.Chmod(filepath.Join(home, rel), mode); err != nil {
			t.Fatal(err)
		}
	}
	r := runBinary(t, home, nil, "plugin", "list")
	if r.code != 0 || !strings.Contains(r.stderr, "made private to you") || !strings.Contains(r.stderr, home+" (was 0755)") {
		t.Fatalf("plugin list over a loose home: %d\nstderr: %s", r.code, r.stderr)
	}
	for rel := range loose {
		if got := modeOf(t, filepath.Join(home, rel)); got&0o077 != 0 {
			t.Errorf("%s still has mode %#o", rel, got)
		}
	}
	if again := runBinary(t, home, nil, "plugin", "list"); again.code != 0 || strings.Contains(again.stderr, "private") {
		t.Fatalf("a private home is reported again: %s", again.stderr)
	}
}
