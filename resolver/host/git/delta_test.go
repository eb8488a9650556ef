package git

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver/host"
)

// shuffledBinaries returns n files of size bytes that share their 4 KiB
// blocks in different orders, as rebuilt binaries do: git stores them as
// deltas of one another whose copies jump backwards through the base, the
// shape that made a stream-only delta reader re-read its base for every
// copy (carta/plugins' hook binaries took minutes over git).
func shuffledBinaries(n, size int) map[string][]byte {
	const block = 4 << 10
	rng := rand.New(rand.NewPCG(1, 2))
	base := make([]byte, size)
	for i := range base {
		base[i] = byte(rng.UintN(256))
	}
	files := map[string][]byte{}
	for k := range n {
		order := rng.Perm(size / block)
		out := make([]byte, 0, size)
		for _, b := range order {
			out = append(out, base[b*block:(b+1)*block]...)
		}
		out[k] ^= 0xff // no two alike
		files[filepath.Join("bin", string(rune('a'+k))+".exe")] = out
	}
	return files
}

// TestDeltaChainsOfLargeBinaries: a pack of large binaries stored as deltas
// of one another indexes in about the time git takes, every blob reads back
// whole, and the large bases were served from the spill file.
func TestDeltaChainsOfLargeBinaries(t *testing.T) {
	t.Parallel()
	files := shuffledBinaries(12, 1<<20)
	dir := t.TempDir()
	gitRun := func(stdin io.Reader, args ...string) []byte {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Stdin = dir, stdin
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return out
	}
	gitRun(nil, "init", "-q")
	for name, data := range files {
		must(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	gitRun(nil, "add", "-A")
	gitRun(nil, "commit", "-qm", "binaries")
	head := strings.TrimSpace(string(gitRun(nil, "rev-parse", "HEAD")))
	pack := gitRun(strings.NewReader(head+"\n"), "pack-objects", "--stdout", "--revs", "--window=20", "--depth=50")
	packPath := filepath.Join(t.TempDir(), "incoming.pack")
	must(t, os.WriteFile(packPath, pack, 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	px, err := indexPack(ctx, packPath, contentLimits(plugind.DefaultBudget))
	if err != nil {
		t.Fatalf("index: %v", err)
	}
	defer px.Close()
	deltas := 0
	for _, o := range px.objects {
		if o.isDelta() && o.size() > smallObject {
			deltas++
		}
	}
	if deltas == 0 {
		t.Fatal("git stored no large delta: the test does not test what it says")
	}
	for name, data := range files {
		h := plumbing.ComputeHash(plumbing.BlobObject, data)
		i, ok := px.find(h)
		if !ok {
			t.Fatalf("%s: not indexed", name)
		}
		rc, err := px.open(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: read %d bytes (%v), want %d", name, len(got), err, len(data))
		}
	}
	if px.spillUsed == 0 {
		t.Error("no large base was spilled")
	}
	// The spill is bounded: a large object that would pass the bound is
	// refused as over budget rather than written.
	px.spillMax = px.spillUsed
	tried := false
	for i, o := range px.objects {
		if _, spilled := px.spillAt[int32(i)]; o.state == resolved && o.size() > smallObject && !spilled {
			if _, err := px.readerAt(ctx, int32(i)); plugind.CodeOf(err) != plugind.CodeBudgetExceeded {
				t.Errorf("spill past its bound: %v", err)
			}
			tried = true
			break
		}
	}
	if !tried {
		t.Error("no large object left to spill past the bound")
	}
	t.Logf("%d large deltas indexed and read back in %s (%s spilled)", deltas, time.Since(start).Round(time.Millisecond), plugind.HumanBytes(px.spillUsed))
}

// TestFetchOfDeltaChains: the same binaries through the fake GitHub and
// real git come out whole, within a deadline the old reader missed by
// minutes.
func TestFetchOfDeltaChains(t *testing.T) {
	t.Parallel()
	files := shuffledBinaries(12, 1<<20)
	commit := map[string]string{}
	for name, data := range files {
		commit[name] = string(data)
	}
	fake := fakegithub.New(t)
	sha := fake.CreateRepo("acme", "bins").Commit("main", commit)
	repo := newRepo(t, fake, "acme", "bins")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dest := filepath.Join(t.TempDir(), "tree")
	if _, err := repo.Fetch(ctx, sha, dest, host.FetchOptions{}); err != nil {
		t.Fatalf("fetch: %v", err)
	}
	for name, data := range files {
		got, err := os.ReadFile(filepath.Join(dest, name))
		if err != nil || sha256.Sum256(got) != sha256.Sum256(data) {
			t.Fatalf("%s differs (%v)", name, err)
		}
	}
}

// TestDeltaReader: instructions applied as git defines them; a delta that
// reads past its base, overruns or falls short of its target is an error;
// a cancelled context stops it at the next instruction.
func TestDeltaReader(t *testing.T) {
	base := []byte("0123456789abcdefghij")
	copyOp := func(off, size byte) []byte { return []byte{0x80 | 0x01 | 0x10, off, size} }
	insert := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	delta := func(src, target byte, ops ...[]byte) []byte {
		d := []byte{src, target}
		for _, op := range ops {
			d = append(d, op...)
		}
		return d
	}
	for _, c := range []struct {
		name  string
		delta []byte
		want  string // "" with err
		err   string
	}{
		{"copies backwards and inserts", delta(20, 9, copyOp(10, 3), insert("-"), copyOp(0, 5)), "abc-01234", ""},
		{"copy past the base", delta(20, 5, copyOp(18, 5)), "", "from a 20-byte base"},
		{"more than the target", delta(20, 2, insert("abc")), "", "inserts 3 bytes with 2 left"},
		{"less than the target", delta(20, 9, insert("abc")), "", "produced 3 bytes, its header says 9"},
		{"wrong base size", delta(19, 1, insert("a")), "", "expects a 19-byte base"},
		{"reserved instruction", delta(20, 1, []byte{0}), "", "reserved"},
		{"truncated copy", delta(20, 3, []byte{0x80 | 0x01 | 0x10, 1}), "", "unexpected EOF"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dr, err := newDeltaReader(context.Background(), bytes.NewReader(base), int64(len(base)), bytes.NewReader(c.delta))
			var got []byte
			if err == nil {
				got, err = io.ReadAll(dr)
			}
			if c.err == "" && (err != nil || string(got) != c.want) {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
			if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("got %q, %v; want an error with %q", got, err, c.err)
			}
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	dr, err := newDeltaReader(ctx, bytes.NewReader(base), 20, bytes.NewReader(delta(20, 6, copyOp(0, 3), copyOp(3, 3))))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if n, err := dr.Read(buf); n != 3 || err != nil {
		t.Fatalf("first read: %d, %v", n, err)
	}
	cancel()
	if _, err := dr.Read(buf); err != context.Canceled {
		t.Fatalf("after cancel: %v, want context.Canceled", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
