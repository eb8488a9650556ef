package main

import (
	"archive/tar"
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mholt/archives"
)

// corpus describes the generated archive.
type corpus struct {
	Files        int   // regular files (symlinks included)
	ContentBytes int64 // bytes of file content once extracted
}

// benchCommit is written in the pax global header and root name, the way
// git archive and GitHub lay an archive out.
const benchCommit = "5eed5eed0123456789abcdef0123456789abcdef"

// generate writes a deterministic tar.gz of about totalBytes of content: a
// plugin monorepo's worth of small text files (about a third of the bytes)
// plus a few large, moderately compressible binaries (about 2:1 under
// gzip), a few executables and in-tree symlinks.
func generate(ctx context.Context, path string, totalBytes int64) (corpus, error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return corpus{}, err
	}
	defer os.Remove(tmp)
	bw := bufio.NewWriterSize(f, 1<<20)
	gz, err := archives.Gz{Multithreaded: true}.OpenWriter(bw)
	if err != nil {
		f.Close()
		return corpus{}, err
	}
	g := &generator{
		tw:   tar.NewWriter(gz),
		rng:  rand.New(rand.NewPCG(1, 2)),
		root: "acme-bench-" + benchCommit[:7] + "/",
	}
	g.words = makeWords(g.rng)
	err = g.run(ctx, totalBytes)
	if err == nil {
		err = g.tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return corpus{}, err
	}
	return g.c, os.Rename(tmp, path)
}

type generator struct {
	tw    *tar.Writer
	rng   *rand.Rand
	root  string
	words []string
	c     corpus
	texts []string // text files written so far, symlink targets
}

var mtime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func (g *generator) run(ctx context.Context, total int64) error {
	if err := g.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": benchCommit}}); err != nil {
		return err
	}
	if err := g.dir(""); err != nil {
		return err
	}
	textBudget := total / 3
	plugin := 0
	for g.c.ContentBytes < textBudget {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := g.plugin(plugin, textBudget); err != nil {
			return err
		}
		plugin++
	}
	for i := 0; g.c.ContentBytes < total; i++ {
		size := min(int64(1<<20+g.rng.IntN(11<<20)), total-g.c.ContentBytes)
		name := fmt.Sprintf("assets/blob-%03d.bin", i)
		if i%5 == 0 {
			name = fmt.Sprintf("bin/tool-%03d", i)
		}
		if err := g.binary(name, size, i%5 == 0); err != nil {
			return err
		}
	}
	return nil
}

// plugin writes one plugin directory of skills, commands, agents and code.
func (g *generator) plugin(n int, budget int64) error {
	base := fmt.Sprintf("plugins/p%03d/", n)
	if err := g.dir(base); err != nil {
		return err
	}
	if err := g.text(base+".claude-plugin/plugin.json", 300, false); err != nil {
		return err
	}
	kinds := []string{"skills/s%02d/SKILL.md", "commands/c%02d.md", "agents/a%02d.md", "src/mod%02d/main.go", "src/mod%02d/util_test.go", "scripts/run%02d.sh", "docs/ref/r%02d.md"}
	for i := 0; i < 40 && g.c.ContentBytes < budget; i++ {
		kind := kinds[g.rng.IntN(len(kinds))]
		name := base + fmt.Sprintf(kind, i)
		// Log-uniform sizes from 200 B to 32 KiB: most files are small.
		size := int(200 * math.Exp2(g.rng.Float64()*7.35))
		if err := g.text(name, size, strings.HasSuffix(name, ".sh")); err != nil {
			return err
		}
	}
	if n%7 == 3 && len(g.texts) > 0 {
		target := g.texts[g.rng.IntN(len(g.texts))]
		if err := g.symlink(base+"LINKED.md", target); err != nil {
			return err
		}
	}
	return nil
}

func (g *generator) dir(name string) error {
	return g.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: g.root + name, Mode: 0o755, ModTime: mtime})
}

func (g *generator) text(name string, size int, exec bool) error {
	var b strings.Builder
	for b.Len() < size {
		for w := 0; w < 12 && b.Len() < size; w++ {
			b.WriteString(g.words[g.rng.IntN(len(g.words))])
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	g.texts = append(g.texts, name)
	return g.file(name, exec, int64(b.Len()), strings.NewReader(b.String()))
}

func (g *generator) binary(name string, size int64, exec bool) error {
	return g.file(name, exec, size, io.LimitReader(&blobReader{rng: g.rng}, size))
}

func (g *generator) symlink(name, target string) error {
	rel, err := filepath.Rel(filepath.Dir(name), target)
	if err != nil {
		return err
	}
	if err := g.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: g.root + name, Linkname: filepath.ToSlash(rel), Mode: 0o777, ModTime: mtime}); err != nil {
		return err
	}
	g.c.Files++
	return nil
}

func (g *generator) file(name string, exec bool, size int64, r io.Reader) error {
	mode := int64(0o644)
	if exec {
		mode = 0o755
	}
	if err := g.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: g.root + name, Mode: mode, Size: size, ModTime: mtime}); err != nil {
		return err
	}
	if _, err := io.Copy(g.tw, r); err != nil {
		return err
	}
	g.c.Files++
	g.c.ContentBytes += size
	return nil
}

func makeWords(rng *rand.Rand) []string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	words := make([]string, 600)
	for i := range words {
		n := 2 + rng.IntN(9)
		b := make([]byte, n)
		for j := range b {
			b[j] = letters[rng.IntN(len(letters))]
		}
		words[i] = string(b)
	}
	return words
}

// blobReader produces binary data that gzip shrinks to about half: runs of
// random bytes alternate with copies of recent output, as in executables
// and media containers.
type blobReader struct {
	rng *rand.Rand
	buf []byte
	pos int
}

func (b *blobReader) Read(p []byte) (int, error) {
	if b.pos == len(b.buf) {
		b.fill()
	}
	n := copy(p, b.buf[b.pos:])
	b.pos += n
	return n, nil
}

// fill makes a fresh 256 KiB chunk; back-references stay within it and
// within gzip's 32 KiB window.
func (b *blobReader) fill() {
	b.buf, b.pos = b.buf[:0], 0
	for len(b.buf) < 256<<10 {
		run := 16 + b.rng.IntN(240)
		if len(b.buf) < 1024 || b.rng.IntN(2) == 0 {
			for range run {
				b.buf = append(b.buf, byte(b.rng.Uint32()))
			}
			continue
		}
		from := len(b.buf) - 1 - b.rng.IntN(min(len(b.buf), 30000))
		for k := range run {
			b.buf = append(b.buf, b.buf[from+k])
		}
	}
}
