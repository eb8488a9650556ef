package fakegithub

import (
	"fmt"
	"io"
	"strings"
)

// CommitLargeFile commits one zero-filled file of size bytes at path on
// branch (over its current tree, like Commit) and returns the commit's SHA.
// The zeros are streamed into fast-import, which streams blobs over
// core.bigFileThreshold (1 MiB here) straight into a pack: neither the fake
// nor git ever holds the file, so a 1 GiB blob costs seconds and about 1 MiB
// of disk. Upload-pack sends it compressed; clients inflate the full size.
func (r *Repo) CommitLargeFile(branch, path string, size int64) string {
	r.s.helper()
	if size < 0 {
		r.s.fail(fmt.Errorf("%s: large file %q: negative size %d", r.path, path, size))
		return ""
	}
	if err := checkPath(path); err != nil {
		r.s.fail(fmt.Errorf("%s: large file: %w", r.path, err))
		return ""
	}
	sha, err := r.commit(branch, change{stream: func(w io.Writer) error {
		fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n", quotePath(path), size)
		if err := writeZeros(w, size); err != nil {
			return err
		}
		_, err := io.WriteString(w, "\n")
		return err
	}})
	if err != nil {
		r.s.fail(err)
	}
	return sha
}

func writeZeros(w io.Writer, n int64) error {
	zeros := make([]byte, 64<<10)
	for n > 0 {
		k := min(n, int64(len(zeros)))
		if _, err := w.Write(zeros[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// CommitManyFiles commits n files of size bytes each under dir ("" for the
// repository root) on branch, over its current tree, and returns the
// commit's SHA. They are named ManyFileName(dir, i) for i in [0, n), and
// their contents differ (for size of at least 24 bytes) so each is its own
// blob, as in a real repository. Everything is streamed through one
// fast-import: 25,000 files take seconds and memory independent of n.
func (r *Repo) CommitManyFiles(branch, dir string, n int, size int) string {
	r.s.helper()
	if n < 0 || size < 0 {
		r.s.fail(fmt.Errorf("%s: many files under %q: negative count %d or size %d", r.path, dir, n, size))
		return ""
	}
	if dir != "" {
		if err := checkPath(dir); err != nil {
			r.s.fail(fmt.Errorf("%s: many files: %w", r.path, err))
			return ""
		}
	}
	sha, err := r.commit(branch, change{stream: func(w io.Writer) error {
		content := make([]byte, size)
		for i := range n {
			fillManyFile(content, i)
			fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n", quotePath(ManyFileName(dir, i)), size)
			w.Write(content)
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		return nil
	}})
	if err != nil {
		r.s.fail(err)
	}
	return sha
}

// ManyFileName is the path of file i of CommitManyFiles(…, dir, …).
func ManyFileName(dir string, i int) string {
	name := fmt.Sprintf("file-%06d.txt", i)
	if dir == "" {
		return name
	}
	return strings.TrimSuffix(dir, "/") + "/" + name
}

// ManyFileContent is the content of file i of CommitManyFiles(…, size).
func ManyFileContent(i, size int) string {
	b := make([]byte, size)
	fillManyFile(b, i)
	return string(b)
}

// fillManyFile fills b with file i's content: a line naming it, repeated.
func fillManyFile(b []byte, i int) {
	line := fmt.Sprintf("fakegithub file %06d\n", i)
	for off := 0; off < len(b); off += len(line) {
		copy(b[off:], line)
	}
}
