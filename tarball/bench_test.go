package tarball

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"reasonix.io/plugind"
)

// BenchmarkExtractTarGz extracts a generated ~32 MiB (content) archive of
// small text files and a few larger binaries: as is, as the store fetches
// (each file hashed with sha256), and with the git tree hashed as well
// (SPEC §17: archives proven against the commit), whole and keeping one
// folder (the rest is read and hashed, not written). The archive is cached
// under os.TempDir(), so only the first -bench run pays for making it;
// plain go test never builds it. bench/extract.sh is the full-size
// comparison with tar -xzf.
func BenchmarkExtractTarGz(b *testing.B) {
	archive, content := benchArchive(b, 32<<20)
	for _, bc := range []struct {
		name string
		opts Options
		kept bool // every file kept
	}{
		{"plain", Options{StripRoot: true}, true},
		{"store", Options{StripRoot: true, Hash: true, ReadOnly: true}, true},
		{"store+gittree", Options{StripRoot: true, Hash: true, ReadOnly: true, GitTree: true}, true},
		{"folder", Options{StripRoot: true, Hash: true, ReadOnly: true, Paths: []string{"plugins/p1"}}, false},
		{"folder+gittree", Options{StripRoot: true, Hash: true, ReadOnly: true, Paths: []string{"plugins/p1"}, GitTree: true}, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(content)
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				dest := filepath.Join(b.TempDir(), "out")
				f, err := os.Open(archive)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := ExtractTarGz(context.Background(), f, dest, bc.opts)
				b.StopTimer()
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
				if bc.kept && res.Bytes != content {
					b.Fatalf("extracted %d bytes, want %d", res.Bytes, content)
				}
				if bc.opts.GitTree && res.GitTrees[""] == "" {
					b.Fatal("no git tree")
				}
				os.RemoveAll(dest)
				b.StartTimer()
			}
		})
	}
}

// benchArchive returns a cached deterministic archive of about content
// bytes and its exact content size.
func benchArchive(b *testing.B, content int64) (string, int64) {
	b.Helper()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("reasonix-tarball-bench-v1-%d.tar.gz", content))
	if _, err := os.Stat(path); err == nil {
		return path, content
	}
	tmp, err := os.CreateTemp(os.TempDir(), "reasonix-tarball-bench-*")
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(tmp.Name())
	gw := gzip.NewWriter(tmp)
	tw := tar.NewWriter(gw)
	rng := rand.New(rand.NewPCG(7, 7))
	var written int64
	add := func(name string, size int64, body io.Reader) {
		if err := tw.WriteHeader(&tar.Header{Name: "acme-bench-0000000/" + name, Mode: 0o644, Size: size, Typeflag: tar.TypeReg}); err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyN(tw, body, size); err != nil {
			b.Fatal(err)
		}
		written += size
	}
	text := &textReader{rng: rng}
	for i := 0; written < content/3; i++ {
		size := min(int64(200+rng.IntN(8000)), content/3-written)
		add("plugins/p"+strconv.Itoa(i/40)+"/f"+strconv.Itoa(i)+".md", size, text)
	}
	for i := 0; written < content; i++ {
		size := min(int64(1<<20+rng.IntN(3<<20)), content-written)
		add("assets/blob"+strconv.Itoa(i)+".bin", size, &halfRandom{rng: rng})
	}
	if err := tw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := gw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		b.Fatal(err)
	}
	if written > plugind.DefaultBudget.MaxBytes {
		b.Fatal("benchmark archive exceeds the default budget")
	}
	return path, written
}

// textReader yields lowercase words and newlines.
type textReader struct{ rng *rand.Rand }

func (t *textReader) Read(p []byte) (int, error) {
	for i := range p {
		switch r := t.rng.IntN(64); {
		case r < 9:
			p[i] = ' '
		case r == 9:
			p[i] = '\n'
		default:
			p[i] = byte('a' + r%26)
		}
	}
	return len(p), nil
}

// halfRandom alternates random bytes with repeats of them, so gzip halves
// it roughly.
type halfRandom struct{ rng *rand.Rand }

func (h *halfRandom) Read(p []byte) (int, error) {
	for i := 0; i < len(p); i += 64 {
		end := min(i+64, len(p))
		mid := min(i+32, end)
		for j := i; j < mid; j++ {
			p[j] = byte(h.rng.Uint32())
		}
		copy(p[mid:end], p[i:mid])
	}
	return len(p), nil
}

// BenchmarkFolderLinks extracts a tree whose 2,000-file shared folder five
// plugin folders link to, hashed as the store asks: the links become
// 10,000 copies made within the destination (copy_file_range), their sums
// taken from the files they copy rather than read again.
func BenchmarkFolderLinks(b *testing.B) {
	entries := make([]ent, 0, 2005)
	for i := 0; i < 2000; i++ {
		entries = append(entries, ent{name: fmt.Sprintf("shared/s%d/f%d.md", i/50, i), body: string(make([]byte, 4096))})
	}
	for i := 0; i < 5; i++ {
		entries = append(entries, ent{name: fmt.Sprintf("plugins/p%d/shared", i), typ: tar.TypeSymlink, link: "../../shared"})
	}
	data := tarGz(b, entries...)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		dest := filepath.Join(b.TempDir(), "out")
		b.StartTimer()
		res, err := ExtractTarGz(context.Background(), bytes.NewReader(data), dest, Options{Hash: true, ReadOnly: true, Budget: plugind.Budget{MaxFiles: 20000, MaxBytes: 256 << 20}})
		if err != nil {
			b.Fatal(err)
		}
		if res.Files != 12000 {
			b.Fatalf("%d files", res.Files)
		}
	}
}
