package git

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/sys/unix"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver/host"
)

// writePack builds objects into a pack file and returns its path.
func writePack(t *testing.T, objects []fakegithub.PackObject) string {
	t.Helper()
	pack, err := fakegithub.BuildPack(objects)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "incoming.pack")
	must(t, os.WriteFile(path, pack, 0o644))
	return path
}

// gitIndexIDs indexes the pack at path with the real git (in a copy, so
// the .idx lands elsewhere) and returns the ids it found.
func gitIndexIDs(t *testing.T, path string) map[plumbing.Hash]bool {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(path)
	must(t, err)
	copyPath := filepath.Join(dir, "p.pack")
	must(t, os.WriteFile(copyPath, data, 0o644))
	if out, err := exec.Command("git", "index-pack", copyPath).CombinedOutput(); err != nil {
		t.Fatalf("git index-pack: %v\n%s", err, out)
	}
	out, err := exec.Command("git", "verify-pack", "-v", filepath.Join(dir, "p.idx")).Output()
	if err != nil {
		t.Fatalf("git verify-pack: %v", err)
	}
	ids := map[plumbing.Hash]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && len(f[0]) == 40 {
			ids[plumbing.NewHash(f[0])] = true
		}
	}
	return ids
}

// resolvedIDs is every id the index resolved.
func resolvedIDs(px *packIndex) map[plumbing.Hash]bool {
	ids := map[plumbing.Hash]bool{}
	for _, i := range px.byHash {
		ids[px.objects[i].hash] = true
	}
	return ids
}

func sameIDs(t *testing.T, got, want map[plumbing.Hash]bool) {
	t.Helper()
	for id := range want {
		if !got[id] {
			t.Errorf("%s: git indexed it, we did not", id)
		}
	}
	for id := range got {
		if !want[id] {
			t.Errorf("%s: we indexed it, git did not", id)
		}
	}
}

// readObject reads a resolved object whole.
func readObject(t *testing.T, ctx context.Context, px *packIndex, h plumbing.Hash) []byte {
	t.Helper()
	i, ok := px.find(h)
	if !ok {
		t.Fatalf("%s: not indexed", h)
	}
	rc, err := px.open(ctx, i)
	must(t, err)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	must(t, err)
	return data
}

func blobID(data []byte) plumbing.Hash { return plumbing.ComputeHash(plumbing.BlobObject, data) }

// TestReversedDeltaChainIndexesLinearly: a chain of REF deltas stored last
// first (issue 21: 40,000 of them took 17-35 s, one delta a pass) indexes
// in one walk, to the ids git finds, with a stack of one frame, in time
// linear in its length: four times the deltas take about four times as
// long, where pass after pass took sixteen. The time is the CPU time of the
// thread that indexes, the best of a few runs, so neither the machine's
// speed nor its load (other tests, other work) counts.
func TestReversedDeltaChainIndexesLinearly(t *testing.T) {
	t.Parallel()
	// No deadline of its own: the ratio below is what catches a quadratic
	// walk, and wall time on a loaded machine (CI runs packages side by
	// side, -race multiplies CPU) says nothing.
	ctx := context.Background()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	threadCPU := func() time.Duration {
		var ts unix.Timespec
		must(t, unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts))
		return time.Duration(ts.Nano())
	}
	index := func(n int) (time.Duration, string) {
		t.Helper()
		path := writePack(t, fakegithub.ReversedDeltaChain(n))
		best := time.Duration(math.MaxInt64)
		for range 2 {
			start := threadCPU()
			px, err := indexPack(ctx, path, contentLimits(plugind.DefaultBudget))
			best = min(best, threadCPU()-start)
			must(t, err)
			if px.peakFrames > 1 {
				t.Errorf("a chain of %d took %d frames, want 1", n, px.peakFrames)
			}
			px.Close()
		}
		return best, path
	}
	// 16,000 deltas: the old pass-after-pass indexer took minutes on a
	// chain this long (it is quadratic); a linear one takes a second or two
	// of CPU under -race.
	const n = 16_000
	short, _ := index(n / 4)
	long, path := index(n)
	if ratio := float64(long) / float64(short); ratio > 8 {
		t.Errorf("%d reversed deltas took %s, %d took %s: %.1f times as long for 4 times the deltas", n/4, short, n, long, ratio)
	}
	t.Logf("reversed deltas indexed in CPU time: %d in %s, %d in %s", n/4, short.Round(time.Millisecond), n, long.Round(time.Millisecond))

	px, err := indexPack(ctx, path, contentLimits(plugind.DefaultBudget))
	must(t, err)
	defer px.Close()
	sameIDs(t, resolvedIDs(px), gitIndexIDs(t, path))
	last := fakegithub.ReversedDeltaChainContent(n)
	if got := readObject(t, ctx, px, blobID(last)); !bytes.Equal(got, last) {
		t.Errorf("the last delta reads %q, want %q", got, last)
	}
}

// TestEvictedBasesRebuiltIteratively: with nothing cached, reading the end
// of a long chain rebuilds it from its root in a loop (no recursion along
// the chain), charging each step to the work bound.
func TestEvictedBasesRebuiltIteratively(t *testing.T) {
	t.Parallel()
	const n = 20_000
	ctx := context.Background()
	px, err := indexPack(ctx, writePack(t, fakegithub.ReversedDeltaChain(n)), contentLimits(plugind.DefaultBudget))
	must(t, err)
	defer px.Close()
	px.smallCache = newContentCache(0) // keeps nothing
	before := px.work.done
	last := fakegithub.ReversedDeltaChainContent(n)
	if got := readObject(t, ctx, px, blobID(last)); !bytes.Equal(got, last) {
		t.Fatalf("the last delta reads %q, want %q", got, last)
	}
	if steps := (px.work.done - before) / 64; steps < n {
		t.Errorf("rebuilding charged %d bytes of work, less than the chain's %d steps", px.work.done-before, n)
	}
	px.work.limit = px.work.done + 64<<10 // not enough for another rebuild
	i, _ := px.find(blobID(last))
	if _, err := px.open(ctx, i); plugind.CodeOf(err) != plugind.CodeBudgetExceeded {
		t.Errorf("a rebuild past the work bound: %v, want %s", err, plugind.CodeBudgetExceeded)
	}
}

// TestPackObjectCount: a pack declaring more objects than the bound is
// refused from its header, naming the count and the bound, before any
// object is inflated (the rest here is not even a pack) and, as it
// arrives, before more than its header is downloaded.
func TestPackObjectCount(t *testing.T) {
	t.Parallel()
	limits := contentLimits(plugind.Budget{MaxBytes: 1 << 20, MaxFiles: 100}) // 1,000 objects
	if limits.objects != 1000 {
		t.Fatalf("objects bound %d, want 1000", limits.objects)
	}
	ctx := context.Background()
	wantErr := func(t *testing.T, err error, count int) {
		t.Helper()
		if plugind.CodeOf(err) != plugind.CodeBudgetExceeded || !strings.Contains(err.Error(), fmt.Sprintf("holds %d objects, more than the 1000", count)) {
			t.Fatalf("got %v, want %s naming %d objects and the bound", err, plugind.CodeBudgetExceeded, count)
		}
	}

	px, err := indexPack(ctx, writePack(t, fakegithub.TinyBlobs(1000)), limits)
	must(t, err)
	if len(px.byHash) != 1000 {
		t.Errorf("%d objects indexed, want 1000", len(px.byHash))
	}
	px.Close()
	_, err = indexPack(ctx, writePack(t, fakegithub.TinyBlobs(1001)), limits)
	wantErr(t, err, 1001)

	header := binary.BigEndian.AppendUint32([]byte("PACK\x00\x00\x00\x02"), 1_000_000)
	junk := filepath.Join(t.TempDir(), "junk.pack")
	must(t, os.WriteFile(junk, append(header, bytes.Repeat([]byte{0xff}, 4096)...), 0o644))
	_, err = indexPack(ctx, junk, limits)
	wantErr(t, err, 1_000_000)

	// Downloading: refused after the header, the rest never read.
	src := &countingReader{r: io.MultiReader(bytes.NewReader(header), endless{})}
	dest := filepath.Join(t.TempDir(), "incoming.pack")
	_, err = receivePack(ctx, src, dest, limits)
	wantErr(t, err, 1_000_000)
	if src.n != packHeaderSize {
		t.Errorf("read %d bytes of the download, want only its %d-byte header", src.n, packHeaderSize)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("a refused pack was written: %v", err)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

type endless struct{}

func (endless) Read(p []byte) (int, error) { return len(p), nil }

// TestPackWorkBound: what inflating and patching may cost is bounded. A
// blob that declares more than the bound is refused before it is
// inflated; one under it but over maxObject is read past; a chain of deltas
// that each copy a large base again is refused once its patching passes
// the bound, and indexes whole under a larger one.
func TestPackWorkBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	limits := packLimits{what: "this test", bytes: 64 << 20, objects: 1000, maxObject: 1 << 20, work: 8 << 20, workWhy: "set by the test"}

	_, err := indexPack(ctx, writePack(t, []fakegithub.PackObject{{Type: "blob", Data: make([]byte, 16<<20)}}), limits)
	if plugind.CodeOf(err) != plugind.CodeBudgetExceeded || !strings.Contains(err.Error(), "more than 8.0 MiB (8388608 bytes) of inflating and delta patching") {
		t.Errorf("a 16 MiB blob under an 8 MiB work bound: %v", err)
	}
	px, err := indexPack(ctx, writePack(t, []fakegithub.PackObject{{Type: "blob", Data: make([]byte, 4<<20)}, {Type: "blob", Data: []byte("small")}}), limits)
	must(t, err)
	if px.TooBig != 1 || len(px.byHash) != 1 {
		t.Errorf("a 4 MiB blob over maxObject: %d too big, %d indexed; want 1 and 1", px.TooBig, len(px.byHash))
	}
	px.Close()

	// 100 blobs of 200 KiB, each a delta copying the one before whole
	// and changing its last byte: 20 MiB of patching from a small pack.
	const size, n = 200 << 10, 100
	content := func(i int) []byte {
		b := bytes.Repeat([]byte{'x'}, size)
		b[size-1] = byte(i)
		return b
	}
	objects := []fakegithub.PackObject{{Type: "blob", Data: content(0)}}
	for i := 1; i < n; i++ {
		d := fakegithub.NewDelta(size, size).Copy(0, size-1).Insert([]byte{byte(i)})
		objects = append(objects, fakegithub.PackObject{Base: blobID(content(i - 1)).String(), Data: d.Bytes()})
	}
	path := writePack(t, objects)
	_, err = indexPack(ctx, path, limits)
	if plugind.CodeOf(err) != plugind.CodeBudgetExceeded {
		t.Errorf("20 MiB of patching under an 8 MiB bound: %v", err)
	}
	limits.work = 64 << 20
	px, err = indexPack(ctx, path, limits)
	must(t, err)
	defer px.Close()
	sameIDs(t, resolvedIDs(px), gitIndexIDs(t, path))
}

// TestPackCyclesAndMissingBases: REF deltas that name each other, or a base
// the pack does not hold, stay unresolved; everything else indexes, and a
// tree that needs them says what is missing.
func TestPackCyclesAndMissingBases(t *testing.T) {
	t.Parallel()
	x, y := []byte("x content"), []byte("y content")
	missing := strings.Repeat("ab", 20)
	path := writePack(t, []fakegithub.PackObject{
		{Base: blobID(y).String(), Data: fakegithub.NewDelta(len(y), len(x)).Insert(x).Bytes()},
		{Base: blobID(x).String(), Data: fakegithub.NewDelta(len(x), len(y)).Insert(y).Bytes()},
		{Base: missing, Data: fakegithub.NewDelta(3, 1).Insert([]byte("z")).Bytes()},
		{Type: "blob", Data: []byte("whole")},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	px, err := indexPack(ctx, path, contentLimits(plugind.DefaultBudget))
	must(t, err)
	defer px.Close()
	if _, ok := px.find(blobID([]byte("whole"))); !ok || len(px.byHash) != 1 {
		t.Errorf("%d objects indexed, want only the whole one", len(px.byHash))
	}
	for i, o := range px.objects[:3] {
		if o.state != unresolved {
			t.Errorf("delta %d: state %d, want unresolved", i, o.state)
		}
	}
}

// TestHonestPacksIndexAsGitDoes: packs git itself writes, with OFS deltas
// and with REF deltas, index to exactly the objects git finds, and every
// object reads back as git reads it.
func TestHonestPacksIndexAsGitDoes(t *testing.T) {
	t.Parallel()
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
	// Ten versions of 30 similar files: plenty of deltas.
	for v := range 10 {
		for f := range 30 {
			var b strings.Builder
			for line := range 200 {
				fmt.Fprintf(&b, "file %d line %d version %d\n", f, line, v*(line%7))
			}
			must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", f)), []byte(b.String()), 0o644))
		}
		gitRun(nil, "add", "-A")
		gitRun(nil, "commit", "-qm", fmt.Sprint(v))
	}
	for _, c := range []struct{ name, flag string }{{"ofs", "--delta-base-offset"}, {"ref", "--no-delta-base-offset"}} {
		t.Run(c.name, func(t *testing.T) {
			pack := gitRun(strings.NewReader("HEAD\n"), "pack-objects", "--stdout", "--revs", "--depth=50", c.flag)
			path := filepath.Join(t.TempDir(), "incoming.pack")
			must(t, os.WriteFile(path, pack, 0o644))
			ctx := context.Background()
			px, err := indexPack(ctx, path, contentLimits(plugind.DefaultBudget))
			must(t, err)
			defer px.Close()
			deltas := 0
			for _, o := range px.objects {
				if o.isDelta() {
					deltas++
				}
			}
			if deltas < 100 {
				t.Fatalf("git stored %d deltas: the test does not test what it says", deltas)
			}
			ids := gitIndexIDs(t, path)
			sameIDs(t, resolvedIDs(px), ids)
			px.smallCache = newContentCache(64 << 10) // reads rebuild chains too
			var blobs []plumbing.Hash
			for id := range ids {
				if i, ok := px.find(id); ok && px.objects[i].typ == plumbing.BlobObject {
					blobs = append(blobs, id)
				}
			}
			var list strings.Builder
			for _, id := range blobs {
				list.WriteString(id.String() + "\n")
			}
			out := gitRun(strings.NewReader(list.String()), "cat-file", "--batch")
			for _, id := range blobs {
				header, rest, _ := bytes.Cut(out, []byte("\n"))
				var size int
				if _, err := fmt.Sscanf(string(header), id.String()+" blob %d", &size); err != nil {
					t.Fatalf("cat-file header %q: %v", header, err)
				}
				if got := readObject(t, ctx, px, id); !bytes.Equal(got, rest[:size]) {
					t.Fatalf("%s reads %d bytes, git reads %d", id, len(got), size)
				}
				out = rest[size+1:]
			}
		})
	}
}

// TestPackObjectRecordSize: what each object of a pack costs the index,
// which the object bound and indexMemory are sized from.
func TestPackObjectRecordSize(t *testing.T) {
	if packObjectSize > 40 || ofsChildSize > 8 || refChildSize > 24 {
		t.Errorf("records of %d, %d and %d bytes; want at most 40, 8 and 24", packObjectSize, ofsChildSize, refChildSize)
	}
	// At either bound, every object a REF delta: its record, its child
	// entry, its place in byHash.
	for _, l := range []packLimits{contentLimits(plugind.DefaultBudget), historyLimits(maxHistoryPack)} {
		if worst := l.objects * int64(packObjectSize+refChildSize+4); worst > indexMemory-minCacheBytes {
			t.Errorf("%s: a pack of %d objects holds %d bytes of records, more than indexMemory leaves beside the cache", l.what, l.objects, worst)
		}
	}
}

// TestBlockReader: reads at any offset and length, across blocks, at the
// end and past it, give the file's bytes, whichever blocks are kept.
func TestBlockReader(t *testing.T) {
	data := make([]byte, 5*blockSize+123)
	for i := range data {
		data[i] = byte(i * 7)
	}
	br := newBlockReader(bytes.NewReader(data), int64(len(data)))
	for _, c := range []struct{ off, n int }{
		{0, 10}, {blockSize - 5, 10}, {3 * blockSize, 2*blockSize + 123}, {100, 4 * blockSize}, {len(data) - 1, 1}, {0, len(data)}, {5, 0},
	} {
		got := make([]byte, c.n)
		n, err := br.ReadAt(got, int64(c.off))
		if n != c.n || err != nil || !bytes.Equal(got, data[c.off:c.off+c.n]) {
			t.Errorf("ReadAt(%d bytes at %d) = %d, %v", c.n, c.off, n, err)
		}
	}
	got := make([]byte, 10)
	if n, err := br.ReadAt(got, int64(len(data)-4)); n != 4 || err != io.EOF || !bytes.Equal(got[:4], data[len(data)-4:]) {
		t.Errorf("read past the end: %d, %v", n, err)
	}
}

// TestTreeWalkWithinTheWorkBound: reading the tree after indexing is
// charged to the same work bound, and going past it is over budget
// whatever is being read (the commit, a tree, a file, a link), not an
// unreadable source.
func TestTreeWalkWithinTheWorkBound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gitRun := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	gitRun("init", "-q")
	must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "sub", "a.txt"), bytes.Repeat([]byte("a"), 4096), 0o644))
	must(t, os.Symlink("sub/a.txt", filepath.Join(dir, "link")))
	gitRun("add", "-A")
	gitRun("commit", "-qm", "c")
	head := plumbing.NewHash(gitRun("rev-parse", "HEAD"))
	cmd := exec.Command("git", "pack-objects", "--stdout", "--revs")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader("HEAD\n")
	pack, err := cmd.Output()
	must(t, err)
	path := filepath.Join(t.TempDir(), "incoming.pack")
	must(t, os.WriteFile(path, pack, 0o644))

	ctx := context.Background()
	for _, left := range []int64{0, 200, 4000} { // runs out at the commit, a tree, the blob
		px, err := indexPack(ctx, path, contentLimits(plugind.DefaultBudget))
		must(t, err)
		px.work.limit = px.work.done + left
		_, err = writeCommitTree(ctx, px, head, filepath.Join(t.TempDir(), "tree"), host.FetchOptions{}, plugind.DefaultBudget)
		px.Close()
		if plugind.CodeOf(err) != plugind.CodeBudgetExceeded || !strings.Contains(err.Error(), "inflating and delta patching") {
			t.Errorf("%d bytes of work left: %v, want %s", left, err, plugind.CodeBudgetExceeded)
		}
	}
}
