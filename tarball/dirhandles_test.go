package tarball

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"reasonix.io/plugind/internal/dirhandle"
)

// A tree of more folders than the Writer keeps handles on, its entries in
// an order that leaves a folder and comes back to it, is written whole
// and exactly: the handles are closed and reopened as needed, and none is
// left open afterwards.
func TestManyFoldersOutnumberingTheHandles(t *testing.T) {
	const folders = 3 * dirhandle.Max
	var entries []ent
	want := map[string]string{}
	for pass := range 2 { // the second pass revisits every folder
		for i := range folders {
			dir := fmt.Sprintf("a/d%03d/e", i)
			name := fmt.Sprintf("%s/f%d.txt", dir, pass)
			entries = append(entries, ent{name: name, body: name})
			want[name] = "-rw-r--r--:" + name
			want[filepath.ToSlash(filepath.Dir(dir))] = "dir"
			want[dir] = "dir"
		}
	}
	want["a"] = "dir"
	fdsBefore := openFDs(t)
	dest, res, err := run(t, "tar.gz", tarGz(t, entries...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != len(entries) {
		t.Errorf("%d files written, want %d", res.Files, len(entries))
	}
	got := treeOnDisk(t, dest)
	if len(got) != len(want) {
		t.Errorf("%d entries on disk, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if after := openFDs(t); fdsBefore >= 0 && after > fdsBefore {
		t.Errorf("%d descriptors open after the extraction, %d before", after, fdsBefore)
	}
}

// openFDs counts this process's open descriptors, or -1 where there is
// no /proc to tell.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}
