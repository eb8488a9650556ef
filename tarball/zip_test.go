package tarball

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

func TestZipRefusals(t *testing.T) {
	t.Parallel()
	r := func(name string) string { return testRoot + "/" + name }
	strip := Options{Budget: small, StripRoot: true}
	tests := []struct {
		name    string
		comment string
		entries []ent
		opts    Options
		want    []string
	}{
		{"dotdot", "", []ent{{name: "../x", body: "x"}}, Options{}, []string{`"../x"`, `".."`}},
		{"dotdot deep", "", []ent{{name: "a/../../x", body: "x"}}, Options{}, []string{`".."`}},
		{"absolute", "", []ent{{name: "/etc/cron.d/x", body: "x"}}, Options{}, []string{`"/etc/cron.d/x"`, "absolute"}},
		{"backslash", "", []ent{{name: `..\..\x`, body: "x"}}, Options{}, []string{"backslash"}},
		{"drive letter", "", []ent{{name: "C:/x", body: "x"}}, Options{}, []string{"drive letter"}},
		{"NUL in name", "", []ent{{name: "a\x00.txt", body: "x"}}, Options{}, []string{"NUL"}},
		{"symlink escapes", "", []ent{{name: "link", typ: tar.TypeSymlink, link: "../../../etc/passwd"}}, Options{}, []string{`"link"`, "escapes"}},
		{"symlink absolute", "", []ent{{name: "link", typ: tar.TypeSymlink, link: "/etc/passwd"}}, Options{}, []string{`"link"`, "absolute"}},
		{"symlink to its folder", "", []ent{{name: "d/f", body: "x"}, {name: "d/link", typ: tar.TypeSymlink, link: "./"}}, Options{}, []string{"cycle"}},
		{"symlink missing", "", []ent{{name: "link", typ: tar.TypeSymlink, link: "gone"}}, Options{}, []string{"not in the tree"}},
		{"char device", "", []ent{{name: "tty", typ: tar.TypeChar}}, Options{}, []string{`"tty"`, "character device"}},
		{"block device", "", []ent{{name: "sda", typ: tar.TypeBlock}}, Options{}, []string{`"sda"`, "device"}},
		{"fifo", "", []ent{{name: "p", typ: tar.TypeFifo}}, Options{}, []string{`"p"`, "named pipe (FIFO)"}},
		{"socket", "", []ent{{name: "s", typ: 's'}}, Options{}, []string{`"s"`, "socket"}},
		{"duplicate", "", []ent{{name: "a", body: "1"}, {name: "a", body: "2"}}, Options{}, []string{"twice"}},
		{"case fold", "", []ent{{name: "Skill.md", body: "1"}, {name: "skill.MD", body: "2"}}, Options{}, []string{"letter case"}},
		{"file vs dir", "", []ent{{name: "a", body: "1"}, {name: "a/", typ: tar.TypeDir}}, Options{}, []string{"both a file and a directory"}},
		{"two roots", "", []ent{{name: r("a"), body: "1"}, {name: "b/c", body: "2"}}, strip, []string{"second top-level directory"}},
		{"top-level file", "", []ent{{name: r("a"), body: "1"}, {name: "c", body: "2"}}, strip, []string{"top level"}},
		{"wrong root sha", "", []ent{{name: "x-1111111/a", body: "1"}}, Options{StripRoot: true, ExpectCommit: testSHA}, []string{"does not match commit"}},
		{"comment mismatch", strings.Repeat("ab", 20), []ent{{name: r("a"), body: "1"}}, Options{StripRoot: true, ExpectCommit: testSHA}, []string{"zip comment", "expected " + testSHA}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := run(t, "zip", zipBytes(t, tc.comment, tc.entries...), tc.opts)
			wantErr(t, err, plugind.CodeUnsafeArchive, tc.want...)
		})
	}
}

func TestZipHappyPath(t *testing.T) {
	t.Parallel()
	r := func(name string) string { return testRoot + "/" + name }
	data := zipBytes(t, testSHA,
		ent{name: r(""), typ: tar.TypeDir},
		ent{name: r("alias.md"), typ: tar.TypeSymlink, link: "docs/guide.md"}, // before its target
		ent{name: r("docs/guide.md"), body: "guide"},
		ent{name: r("bin/tool"), body: "#!/bin/sh\n", mode: 0o755},
		ent{name: r("bin/alias"), typ: tar.TypeSymlink, link: "tool"},
	)
	dest, res, err := run(t, "zip", data, Options{StripRoot: true, ExpectCommit: testSHA})
	if err != nil {
		t.Fatal(err)
	}
	assertTree(t, dest, map[string]string{
		"alias.md":      "-rw-r--r--:guide",
		"docs":          "dir",
		"docs/guide.md": "-rw-r--r--:guide",
		"bin":           "dir",
		"bin/tool":      "-rwxr-xr-x:#!/bin/sh\n",
		"bin/alias":     "-rwxr-xr-x:#!/bin/sh\n",
	})
	if !reflect.DeepEqual(*res, Result{Root: testRoot, Commit: testSHA, Files: 4, Bytes: 2*5 + 2*10}) {
		t.Errorf("result = %+v", *res)
	}
}

func TestExtractZipFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	zipPath := filepath.Join(dir, "export.zip")
	if err := os.WriteFile(zipPath, zipBytes(t, "exported by reasonix", ent{name: "reasonix-plugin.json", body: "{}"}), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ExtractZipFile(context.Background(), zipPath, filepath.Join(dir, "out"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*res, Result{Files: 1, Bytes: 2}) {
		t.Errorf("result = %+v", *res)
	}
	if got := readFile(t, filepath.Join(dir, "out", "reasonix-plugin.json")); got != "{}" {
		t.Errorf("content = %q", got)
	}

	_, err = ExtractZipFile(context.Background(), filepath.Join(dir, "missing.zip"), filepath.Join(dir, "out2"), Options{})
	wantErr(t, err, plugind.CodeSourceUnreadable, "missing.zip")
	if _, err := os.Stat(filepath.Join(dir, "out2")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("destination created for a missing zip: %v", err)
	}
}

func TestZipCorrupt(t *testing.T) {
	t.Parallel()
	good := zipBytes(t, "", ent{name: "a", body: strings.Repeat("abc", 1000)}, ent{name: "b", body: "b"})
	flipped := bytes.Clone(good)
	// Corrupt the first entry's compressed data (after its 30+1-byte local
	// header): the central directory still parses, the entry does not.
	for i := 40; i < 60; i++ {
		flipped[i] ^= 0xff
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"truncated", good[:len(good)/2]},
		{"not a zip", []byte("just some text, long enough to not be anything in particular")},
		{"damaged entry", flipped},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := run(t, "zip", tc.data, Options{})
			wantErr(t, err, plugind.CodeSourceUnreadable, "archive truncated or corrupt")
		})
	}
}

func TestZipBudgets(t *testing.T) {
	t.Parallel()
	t.Run("deflate bomb", func(t *testing.T) {
		t.Parallel()
		data := zipBytes(t, "", ent{name: "zeros", zeros: 64 << 20})
		var dest string
		var peak int64
		parent := t.TempDir()
		dest = filepath.Join(parent, "out")
		_, err := ExtractZip(context.Background(), bytes.NewReader(data), int64(len(data)), dest, Options{
			Budget:   plugind.Budget{MaxBytes: 1 << 20, MaxFiles: 10},
			Progress: func(int64) { peak = max(peak, diskBytes(dest)) },
		})
		wantErr(t, err, plugind.CodeBudgetExceeded, "central directory", "size budget exceeded")
		assertNothingLeft(t, parent)
		if peak > 1<<20+bufSize {
			t.Errorf("%d bytes reached the disk", peak)
		}
	})
	t.Run("too many files", func(t *testing.T) {
		t.Parallel()
		data := zipBytes(t, "", ent{name: "a"}, ent{name: "b"}, ent{name: "c"})
		_, _, err := run(t, "zip", data, Options{Budget: plugind.Budget{MaxFiles: 2}})
		wantErr(t, err, plugind.CodeBudgetExceeded, "central directory", "over by 1")
	})
	t.Run("header understates the size", func(t *testing.T) {
		t.Parallel()
		// The central directory claims 10 bytes; the data inflates to 8 MiB.
		data := lyingZip(t, "liar", 8<<20, 10)
		var dest string
		var peak int64
		parent := t.TempDir()
		dest = filepath.Join(parent, "out")
		_, err := ExtractZip(context.Background(), bytes.NewReader(data), int64(len(data)), dest, Options{
			Budget:   plugind.Budget{MaxBytes: 1 << 20, MaxFiles: 10},
			Progress: func(int64) { peak = max(peak, diskBytes(dest)) },
		})
		if err == nil {
			t.Fatal("a zip whose entry inflates past its declared size was accepted")
		}
		if c := plugind.CodeOf(err); c != plugind.CodeSourceUnreadable && c != plugind.CodeBudgetExceeded {
			t.Errorf("code = %q (%v)", c, err)
		}
		assertNothingLeft(t, parent)
		if peak > 1<<20+bufSize {
			t.Errorf("%d bytes reached the disk", peak)
		}
	})
}

// lyingZip writes one deflated entry of n zero bytes whose headers claim
// it is claimed bytes long.
func lyingZip(t *testing.T, name string, n, claimed int64) []byte {
	t.Helper()
	var raw bytes.Buffer
	fw, _ := flate.NewWriter(&raw, flate.BestCompression)
	io.Copy(fw, io.LimitReader(zeroReader{}, n))
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{
		Name:               name,
		Method:             zip.Deflate,
		CRC32:              crc32.ChecksumIEEE(make([]byte, claimed)),
		CompressedSize64:   uint64(raw.Len()),
		UncompressedSize64: uint64(claimed),
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(raw.Bytes())
	zw.Close()
	return buf.Bytes()
}

func TestZipCancel(t *testing.T) {
	t.Parallel()
	data := zipBytes(t, "", ent{name: "a", zeros: 3 << 20}, ent{name: "b", body: "b"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := runCtx(t, ctx, "zip", bytes.NewReader(data), int64(len(data)), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	_, _, err = runCtx(t, ctx, "zip", bytes.NewReader(data), int64(len(data)), Options{Progress: func(int64) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestDestParentMissing(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dest := filepath.Join(parent, "no", "such", "dir")
	data := zipBytes(t, "", ent{name: "a", body: "a"})
	if _, err := ExtractZip(context.Background(), bytes.NewReader(data), int64(len(data)), dest, Options{}); err == nil {
		t.Fatal("extraction into a missing parent succeeded")
	}
	assertNothingLeft(t, parent)
}
