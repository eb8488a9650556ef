package mirror

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/tarball"
)

// epoch is every entry's modification time: an archive's bytes depend on
// the tree alone, not on when or where it was made.
var epoch = time.Unix(0, 0).UTC()

// writeArchive writes files (hashed, each read from its Source) as a
// deterministic tar.gz: path order, regular files only (directories are
// implied, and the tree digest ignores empty ones), modes 0644/0755, no
// owners, no times. It returns the archive's size and sha256.
func writeArchive(ctx context.Context, w io.Writer, files []plugind.File) (int64, string, error) {
	sorted := slices.SortedFunc(slices.Values(files), func(a, b plugind.File) int { return strings.Compare(a.Path, b.Path) })
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(w, h)}
	gz, err := gzip.NewWriterLevel(cw, gzip.BestSpeed)
	if err != nil {
		return 0, "", err
	}
	tw := tar.NewWriter(gz)
	buf := make([]byte, 256<<10)
	for _, f := range sorted {
		if err := ctx.Err(); err != nil {
			return 0, "", err
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.Path, Mode: int64(plugind.FileMode(f.Executable)), Size: f.Size, ModTime: epoch, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return 0, "", fmt.Errorf("archive %s: %w", f.Path, err)
		}
		if err := copyFile(tw, f, buf); err != nil {
			return 0, "", err
		}
	}
	if err := tw.Close(); err != nil {
		return 0, "", fmt.Errorf("archive: %w", err)
	}
	if err := gz.Close(); err != nil {
		return 0, "", fmt.Errorf("archive: %w", err)
	}
	return cw.n, hex.EncodeToString(h.Sum(nil)), nil
}

// copyFile copies exactly f.Size bytes of f: a file that changed size since
// it was scanned would make the header lie, so it is an error.
func copyFile(w io.Writer, f plugind.File, buf []byte) error {
	in, err := os.Open(f.Source)
	if err != nil {
		return fmt.Errorf("archive %s: %w", f.Path, err)
	}
	defer in.Close()
	n, err := io.CopyBuffer(w, io.LimitReader(in, f.Size), buf)
	if err != nil {
		return fmt.Errorf("archive %s: %w", f.Path, err)
	}
	if n != f.Size {
		return fmt.Errorf("archive %s: the file shrank from %d to %d bytes while being archived", f.Path, f.Size, n)
	}
	return nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// subset keeps the files under the folders in paths (tarball.Keeps's
// rule, the one the hosts apply when they write a tree).
func subset(files []plugind.File, paths []string) []plugind.File {
	keep := tarball.Keeps(paths)
	if keep == nil {
		return files
	}
	return slices.DeleteFunc(slices.Clone(files), func(f plugind.File) bool { return !keep(f.Path) })
}

func totalBytes(files []plugind.File) int64 {
	var n int64
	for _, f := range files {
		n += f.Size
	}
	return n
}
