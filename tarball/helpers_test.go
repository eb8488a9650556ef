package tarball

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

// ent describes one archive entry for the builders below.
type ent struct {
	name  string
	typ   byte // tar type flag; 0 means a regular file
	body  string
	zeros int64 // a body of this many zero bytes instead of body
	mode  int64 // 0 means 0644 (0755 for directories)
	link  string
	pax   map[string]string // records of a pax global header (typ 'g')
}

func (e ent) typeflag() byte {
	if e.typ == 0 {
		return tar.TypeReg
	}
	return e.typ
}

func (e ent) size() int64 {
	if e.zeros > 0 {
		return e.zeros
	}
	return int64(len(e.body))
}

func (e ent) reader() io.Reader {
	if e.zeros > 0 {
		return io.LimitReader(zeroReader{}, e.zeros)
	}
	return strings.NewReader(e.body)
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// tarGz builds a tar.gz archive of entries in memory.
func tarGz(t testing.TB, entries ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	gw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gw)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typeflag(), Mode: e.mode, Linkname: e.link, Format: tar.FormatPAX}
		switch hdr.Typeflag {
		case tar.TypeReg:
			hdr.Size = e.size()
			if hdr.Mode == 0 {
				hdr.Mode = 0o644
			}
		case tar.TypeDir:
			if hdr.Mode == 0 {
				hdr.Mode = 0o755
			}
		case tar.TypeXGlobalHeader:
			hdr.PAXRecords = e.pax
		default:
			if hdr.Mode == 0 {
				hdr.Mode = 0o644
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatalf("tar header %q: %v", e.name, err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := io.Copy(tw, e.reader()); err != nil {
				t.Fatalf("tar body %q: %v", e.name, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zipBytes builds a zip archive; tar type flags map to zip modes.
func zipBytes(t testing.TB, comment string, entries ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		fh := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		perm := fs.FileMode(e.mode) & fs.ModePerm
		if perm == 0 {
			perm = 0o644
		}
		body := e.reader()
		switch e.typeflag() {
		case tar.TypeReg:
			fh.SetMode(perm)
		case tar.TypeDir:
			fh.SetMode(fs.ModeDir | 0o755)
			body = strings.NewReader("")
		case tar.TypeSymlink:
			fh.SetMode(fs.ModeSymlink | 0o777)
			body = strings.NewReader(e.link)
		case tar.TypeChar:
			fh.SetMode(fs.ModeDevice | fs.ModeCharDevice | 0o644)
		case tar.TypeBlock:
			fh.SetMode(fs.ModeDevice | 0o644)
		case tar.TypeFifo:
			fh.SetMode(fs.ModeNamedPipe | 0o644)
		case 's': // not a tar type; a socket
			fh.SetMode(fs.ModeSocket | 0o644)
		default:
			t.Fatalf("zipBytes: no zip form for type %q", e.typeflag())
		}
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatalf("zip entry %q: %v", e.name, err)
		}
		if _, err := io.Copy(w, body); err != nil {
			t.Fatal(err)
		}
	}
	if comment != "" {
		if err := zw.SetComment(comment); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// run extracts data (tar.gz or zip) into a fresh directory and, when it
// fails, checks that nothing was left behind.
func run(t *testing.T, format string, data []byte, opts Options) (string, *Result, error) {
	t.Helper()
	return runCtx(t, context.Background(), format, bytes.NewReader(data), int64(len(data)), opts)
}

func runCtx(t *testing.T, ctx context.Context, format string, r io.Reader, size int64, opts Options) (string, *Result, error) {
	t.Helper()
	parent := t.TempDir()
	dest := filepath.Join(parent, "out")
	var res *Result
	var err error
	switch format {
	case "tar.gz":
		res, err = ExtractTarGz(ctx, r, dest, opts)
	case "zip":
		res, err = ExtractZip(ctx, r.(io.ReaderAt), size, dest, opts)
	default:
		t.Fatalf("unknown format %q", format)
	}
	if err != nil {
		if res != nil {
			t.Errorf("failed extraction returned a result: %+v", res)
		}
		assertNothingLeft(t, parent)
	}
	return dest, res, err
}

func assertNothingLeft(t *testing.T, parent string) {
	t.Helper()
	left, rerr := os.ReadDir(parent)
	if rerr != nil {
		t.Fatal(rerr)
	}
	for _, e := range left {
		t.Errorf("left behind after a failed extraction: %s", e.Name())
	}
}

// wantErr checks a failed extraction's code and message.
func wantErr(t *testing.T, err error, code plugind.Code, substrs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("extraction succeeded, want %s", code)
	}
	if got := plugind.CodeOf(err); got != code {
		t.Errorf("code = %q, want %q (error: %v)", got, code, err)
	}
	for _, s := range substrs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// treeOnDisk lists dest as path -> "mode:content" (directories as "dir"),
// failing on anything that is neither a regular file nor a directory.
func treeOnDisk(t *testing.T, dest string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dest {
			return err
		}
		rel, _ := filepath.Rel(dest, p)
		rel = filepath.ToSlash(rel)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.IsDir():
			got[rel] = "dir"
		case info.Mode().IsRegular():
			got[rel] = info.Mode().Perm().String() + ":" + readFile(t, p)
		default:
			return errors.New(rel + " is " + info.Mode().String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// diskBytes sums the sizes of the regular files under dest as they are now.
func diskBytes(dest string) int64 {
	var n int64
	_ = filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
