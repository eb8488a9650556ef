package fakegithub_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
)

// gitIndexPack indexes pack with the real git and returns the ids it found.
func gitIndexPack(t *testing.T, pack []byte) map[string]bool {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "crafted.pack")
	if err := os.WriteFile(path, pack, 0o644); err != nil {
		t.Fatal(err)
	}
	mustGit(t, dir, "index-pack", path)
	out := mustGit(t, dir, "verify-pack", "-v", strings.TrimSuffix(path, ".pack")+".idx")
	ids := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && len(f[0]) == 40 {
			ids[f[0]] = true
		}
	}
	return ids
}

// TestBuildPackIndexedByGit: the packs the builder crafts — deltas before
// their bases, copies at every offset and size width — are packs real git
// indexes to exactly the objects the builder says.
func TestBuildPackIndexedByGit(t *testing.T) {
	t.Parallel()
	base := bytes.Repeat([]byte("0123456789abcdef"), 0x2000) // 128 KiB
	// Copies whose offsets and sizes need 0 to 4 and 0 to 3 bytes, and the
	// 0x10000 size written as none.
	target := append([]byte{}, base[0x10000:0x20000]...)
	target = append(target, base[0x123:0x123+0x10203]...)
	target = append(target, []byte("inserted")...)
	target = append(target, base[0:1]...)
	delta := fakegithub.NewDelta(len(base), len(target)).
		Copy(0x10000, 0x10000).Copy(0x123, 0x10203).Insert([]byte("inserted")).Copy(0, 1)
	objects := []fakegithub.PackObject{
		{Base: fakegithub.ObjectID("blob", base), Data: delta.Bytes()}, // before its base
		{Type: "blob", Data: base},
	}
	objects = append(objects, fakegithub.ReversedDeltaChain(100)...)
	objects = append(objects, fakegithub.TinyBlobs(50)...)
	pack, err := fakegithub.BuildPack(objects)
	if err != nil {
		t.Fatal(err)
	}
	got := gitIndexPack(t, pack)
	want := []string{fakegithub.ObjectID("blob", base), fakegithub.ObjectID("blob", target)}
	for i := 0; i <= 100; i++ {
		want = append(want, fakegithub.ObjectID("blob", fakegithub.ReversedDeltaChainContent(i)))
	}
	for _, o := range fakegithub.TinyBlobs(50) {
		want = append(want, fakegithub.ObjectID("blob", o.Data))
	}
	for _, id := range want {
		if !got[id] {
			t.Errorf("git did not find %s", id)
		}
	}
	if len(got) != len(want) {
		t.Errorf("git found %d objects, want %d", len(got), len(want))
	}
	if n := len(fakegithub.ReversedDeltaChain(1000)); n != 1001 {
		t.Errorf("a chain of 1000 deltas has %d objects", n)
	}
}

func TestBuildPackRefusesBadObjects(t *testing.T) {
	t.Parallel()
	for _, o := range []fakegithub.PackObject{
		{Type: "bolb", Data: []byte("x")},
		{Base: "not hex", Data: []byte("x")},
		{Type: "blob", Base: strings.Repeat("0", 40)},
	} {
		if _, err := fakegithub.BuildPack([]fakegithub.PackObject{o}); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// TestServeCraftedPack: real git fetches the crafted pack at depth 1 over
// protocol v0 (side-band), and checks out the commit whose objects it
// carries, junk and all; ServePack(nil) restores git's own answer.
func TestServeCraftedPack(t *testing.T) {
	t.Parallel()
	s := fakegithub.New(t)
	r := s.CreateRepo("evil", "chain")
	sha := r.Commit("main", map[string]string{"README.md": "crafted\n", "sub/a.txt": "a\n"})
	r.ServeCraftedPack(sha, append(fakegithub.ReversedDeltaChain(300), fakegithub.TinyBlobs(200)...))

	clone := func(name string) string {
		dir := filepath.Join(t.TempDir(), name)
		mustGit(t, filepath.Dir(dir), "-c", "protocol.version=0", "clone", "-q", "--depth", "1", r.CloneURL(), dir)
		return dir
	}
	dir := clone("crafted")
	if got := mustGit(t, dir, "rev-parse", "HEAD"); got != sha {
		t.Fatalf("HEAD = %s, want %s", got, sha)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "sub", "a.txt")); err != nil || string(data) != "a\n" {
		t.Fatalf("sub/a.txt = %q, %v", data, err)
	}
	last := fakegithub.ObjectID("blob", fakegithub.ReversedDeltaChainContent(300))
	if got := mustGit(t, dir, "cat-file", "-p", last); got != strings.TrimSpace(string(fakegithub.ReversedDeltaChainContent(300))) {
		t.Fatalf("the chain's last object reads %q", got)
	}
	if n := mustGit(t, dir, "count-objects", "-v"); !strings.Contains(n, "in-pack: 506\n") { // commit, 2 trees, 2 blobs; 301; 200
		t.Fatalf("count-objects: %s", n)
	}

	r.ServePack(nil)
	dir = clone("honest")
	if _, err := gitCLI(t, dir, "cat-file", "-e", last); err == nil {
		t.Fatal("after ServePack(nil), the clone still holds the crafted chain")
	}
	if got := mustGit(t, dir, "rev-parse", "HEAD"); got != sha {
		t.Fatalf("after ServePack(nil), HEAD = %s, want %s", got, sha)
	}
}
