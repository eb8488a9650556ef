package tarball

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

const (
	testSHA  = "0123456789abcdef0123456789abcdef01234567"
	testRoot = "acme-tools-0123456"
)

var small = plugind.Budget{MaxBytes: 1 << 20, MaxFiles: 50}

func TestTarGzRefusals(t *testing.T) {
	t.Parallel()
	r := func(name string) string { return testRoot + "/" + name }
	strip := Options{Budget: small, StripRoot: true}
	pinned := Options{Budget: small, StripRoot: true, ExpectCommit: testSHA}
	tests := []struct {
		name    string
		entries []ent
		opts    Options
		want    []string // substrings of the error
	}{
		{"absolute name", []ent{{name: "/etc/passwd", body: "x"}}, Options{}, []string{`"/etc/passwd"`, "absolute"}},
		{"dotdot prefix", []ent{{name: "../evil", body: "x"}}, Options{}, []string{`"../evil"`, `".."`}},
		{"dotdot deep", []ent{{name: "a/b/../../../evil", body: "x"}}, Options{}, []string{`"a/b/../../../evil"`, `".."`}},
		{"dotdot that stays inside", []ent{{name: "a/../b", body: "x"}}, Options{}, []string{`"a/../b"`, `".."`}},
		{"file named dot", []ent{{name: "./", typ: tar.TypeDir}, {name: ".", body: "x"}}, Options{}, []string{`"."`, "not a local path"}},
		{"backslash", []ent{{name: `a\..\..\evil`, body: "x"}}, Options{}, []string{"backslash"}},
		{"drive letter", []ent{{name: "C:/evil", body: "x"}}, Options{}, []string{`"C:/evil"`, "drive letter"}},
		{"symlink escapes", []ent{{name: "a/link", typ: tar.TypeSymlink, link: "../../etc/passwd"}}, Options{}, []string{`"a/link"`, "escapes"}},
		{"symlink absolute", []ent{{name: "link", typ: tar.TypeSymlink, link: "/etc/passwd"}}, Options{}, []string{`"link"`, "absolute"}},
		{"symlink escapes stripped root", []ent{{name: r("x"), body: "x"}, {name: r("link"), typ: tar.TypeSymlink, link: "../" + testRoot + "/x"}}, strip, []string{"escapes"}},
		{"symlink to its own folder", []ent{{name: "d/f", body: "x"}, {name: "d/self", typ: tar.TypeSymlink, link: "."}}, Options{}, []string{`"d/self"`, "cycle", `"d"`}},
		{"symlink to root", []ent{{name: "d/link", typ: tar.TypeSymlink, link: ".."}}, Options{}, []string{`"d/link"`, "cycle", "root of the tree"}},
		{"folder links in a cycle", []ent{{name: "a/f", body: "x"}, {name: "a/to-b", typ: tar.TypeSymlink, link: "../b"}, {name: "b/to-a", typ: tar.TypeSymlink, link: "../a"}}, Options{}, []string{"cycle", "links back"}},
		{"symlink escapes through a folder link", []ent{{name: "x/f", body: "x"}, {name: "d", typ: tar.TypeSymlink, link: "x"}, {name: "a", typ: tar.TypeSymlink, link: "d/../../etc"}}, Options{}, []string{`"a"`, "escapes"}},
		{"symlink dotdot after a folder link", []ent{{name: "deep/er/f", body: "x"}, {name: "d", typ: tar.TypeSymlink, link: "deep/er"}, {name: "a", typ: tar.TypeSymlink, link: "d/../../../x"}}, Options{}, []string{`"a"`, "escapes"}},
		{"symlink through a file", []ent{{name: "f", body: "x"}, {name: "a", typ: tar.TypeSymlink, link: "f/g"}}, Options{}, []string{`"a"`, "is a file, not a folder"}},
		{"hardlink to a folder", []ent{{name: "d/f", body: "x"}, {name: "h", typ: tar.TypeLink, link: "d"}}, Options{}, []string{`"h"`, "directory"}},
		{"link used as a folder", []ent{{name: "d/f", body: "x"}, {name: "l", typ: tar.TypeSymlink, link: "d"}, {name: "l/g", body: "y"}}, Options{}, []string{`"l/g"`, "both a file and a directory"}},
		{"symlink to missing", []ent{{name: "link", typ: tar.TypeSymlink, link: "nowhere"}}, Options{}, []string{`"link"`, "not in the tree"}},
		{"symlink loop", []ent{{name: "a", typ: tar.TypeSymlink, link: "b"}, {name: "b", typ: tar.TypeSymlink, link: "a"}}, Options{}, []string{"cycle", "a -> b -> a"}},
		{"symlink empty", []ent{{name: "a", typ: tar.TypeSymlink, link: ""}}, Options{}, []string{`"a"`, "empty"}},
		{"hardlink escapes", []ent{{name: "h", typ: tar.TypeLink, link: "../etc/passwd"}}, Options{}, []string{`"h"`, `".."`}},
		{"hardlink absolute", []ent{{name: "h", typ: tar.TypeLink, link: "/etc/passwd"}}, Options{}, []string{`"h"`, "absolute"}},
		{"hardlink outside root", []ent{{name: r("h"), typ: tar.TypeLink, link: "other/x"}}, strip, []string{"escapes"}},
		{"hardlink to missing", []ent{{name: "h", typ: tar.TypeLink, link: "gone"}}, Options{}, []string{`"h"`, "not in the tree"}},
		{"char device", []ent{{name: "dev/null", typ: tar.TypeChar}}, Options{}, []string{`"dev/null"`, "character device"}},
		{"block device", []ent{{name: "sda", typ: tar.TypeBlock}}, Options{}, []string{`"sda"`, "block device"}},
		{"fifo", []ent{{name: "pipe", typ: tar.TypeFifo}}, Options{}, []string{`"pipe"`, "fifo"}},
		{"unknown type", []ent{{name: "vol", typ: 'V'}}, Options{}, []string{`"vol"`, "unsupported"}},
		{"duplicate file", []ent{{name: "a", body: "1"}, {name: "a", body: "2"}}, Options{}, []string{`"a"`, "twice"}},
		{"duplicate dir", []ent{{name: "d/", typ: tar.TypeDir}, {name: "d/", typ: tar.TypeDir}}, Options{}, []string{`"d"`, "twice"}},
		{"duplicate after cleaning", []ent{{name: "a/b", body: "1"}, {name: "./a//b", body: "2"}}, Options{}, []string{`"./a//b"`, "twice"}},
		{"symlink duplicates file", []ent{{name: "a", body: "1"}, {name: "a", typ: tar.TypeSymlink, link: "b"}}, Options{}, []string{"twice"}},
		{"case fold files", []ent{{name: "README.md", body: "1"}, {name: "readme.md", body: "2"}}, Options{}, []string{`"readme.md"`, "letter case"}},
		{"case fold dirs", []ent{{name: "Docs/a", body: "1"}, {name: "docs/b", body: "2"}}, Options{}, []string{`"docs/b"`, "letter case"}},
		{"case fold unicode", []ent{{name: "\u212a.txt", body: "1"}, {name: "k.txt", body: "2"}}, Options{}, []string{"letter case"}},
		{"file then dir", []ent{{name: "a", body: "1"}, {name: "a/b", body: "2"}}, Options{}, []string{`"a/b"`, "both a file and a directory"}},
		{"dir then file", []ent{{name: "a/b", body: "1"}, {name: "a", body: "2"}}, Options{}, []string{`"a"`, "both a file and a directory"}},
		{"explicit dir then file", []ent{{name: "a/", typ: tar.TypeDir}, {name: "a", body: "2"}}, Options{}, []string{"both a file and a directory"}},
		{"two roots", []ent{{name: r("a"), body: "1"}, {name: "other/b", body: "2"}}, strip, []string{`"other/b"`, "second top-level directory"}},
		{"top-level file", []ent{{name: r("a"), body: "1"}, {name: "README", body: "2"}}, strip, []string{`"README"`, "top level"}},
		{"top-level file first", []ent{{name: "README", body: "2"}}, strip, []string{`"README"`, "top level"}},
		{"empty with strip", nil, strip, []string{"no top-level directory"}},
		{"wrong root sha", []ent{{name: "acme-tools-fedcba9/a", body: "1"}}, pinned, []string{`"acme-tools-fedcba9/a"`, "does not match commit", "-0123456"}},
		{"pax comment mismatch", []ent{{name: "pax_global_header", typ: tar.TypeXGlobalHeader, pax: map[string]string{"comment": strings.Replace(testSHA, "01234567", "89abcdef", 1)}}, {name: r("a"), body: "1"}}, pinned, []string{"pax_global_header", "expected " + testSHA}},
		{"pax comment mismatch without strip", []ent{{name: "pax_global_header", typ: tar.TypeXGlobalHeader, pax: map[string]string{"comment": "not a commit"}}, {name: "a", body: "1"}}, Options{ExpectCommit: testSHA}, []string{"not a commit"}},
		{"two pax commits", []ent{
			{name: "pax_global_header", typ: tar.TypeXGlobalHeader, pax: map[string]string{"comment": testSHA}},
			{name: "a", body: "1"},
			{name: "pax_global_header", typ: tar.TypeXGlobalHeader, pax: map[string]string{"comment": strings.Repeat("ab", 20)}},
		}, Options{}, []string{"two commits"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := run(t, "tar.gz", tarGz(t, tc.entries...), tc.opts)
			wantErr(t, err, plugind.CodeUnsafeArchive, tc.want...)
		})
	}
}

func TestTarGzHappyPath(t *testing.T) {
	t.Parallel()
	r := func(name string) string { return testRoot + "/" + name }
	data := tarGz(t,
		ent{name: "pax_global_header", typ: tar.TypeXGlobalHeader, pax: map[string]string{"comment": testSHA}},
		ent{name: r(""), typ: tar.TypeDir},
		ent{name: r("docs/link-first.md"), typ: tar.TypeSymlink, link: "../README.md"}, // target comes later
		ent{name: r("chain"), typ: tar.TypeSymlink, link: "docs/link-first.md"},
		ent{name: r("hard"), typ: tar.TypeLink, link: r("bin/run")},
		ent{name: r("README.md"), body: "# acme\n"},
		ent{name: r("bin/"), typ: tar.TypeDir, mode: 0o700},
		ent{name: r("bin/run"), body: "#!/bin/sh\necho hi\n", mode: 0o4755}, // setuid must not survive
		ent{name: r("bin/suid-noexec"), body: "x", mode: 0o6644},
		ent{name: r("empty/"), typ: tar.TypeDir},
		ent{name: r("./skills//x/SKILL.md"), body: "---\nname: x\n---\n"},
	)
	var reports []int64
	opts := Options{Budget: small, StripRoot: true, ExpectCommit: strings.ToUpper(testSHA), Progress: func(n int64) { reports = append(reports, n) }}
	dest, res, err := run(t, "tar.gz", data, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"README.md":          "-rw-r--r--:# acme\n",
		"docs":               "dir",
		"docs/link-first.md": "-rw-r--r--:# acme\n",
		"chain":              "-rw-r--r--:# acme\n",
		"bin":                "dir",
		"bin/run":            "-rwxr-xr-x:#!/bin/sh\necho hi\n",
		"hard":               "-rwxr-xr-x:#!/bin/sh\necho hi\n",
		"bin/suid-noexec":    "-rw-r--r--:x",
		"empty":              "dir",
		"skills":             "dir",
		"skills/x":           "dir",
		"skills/x/SKILL.md":  "-rw-r--r--:---\nname: x\n---\n",
	}
	assertTree(t, dest, want)
	if info, err := os.Stat(filepath.Join(dest, "bin")); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("bin mode = %v, %v; want 0755 whatever the archive says", info.Mode(), err)
	}
	wantBytes := int64(3*len("# acme\n") + 2*len("#!/bin/sh\necho hi\n") + 1 + len("---\nname: x\n---\n"))
	if !reflect.DeepEqual(*res, Result{Root: testRoot, Commit: testSHA, Files: 7, Bytes: wantBytes}) {
		t.Errorf("result = %+v", *res)
	}
	if len(reports) == 0 || reports[len(reports)-1] != wantBytes {
		t.Errorf("progress reports %v, want a last one of %d", reports, wantBytes)
	}
	for i := 1; i < len(reports); i++ {
		if reports[i] < reports[i-1] {
			t.Errorf("progress went backwards: %v", reports)
		}
	}
}

func assertTree(t *testing.T, dest string, want map[string]string) {
	t.Helper()
	got := treeOnDisk(t, dest)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s", k)
		}
	}
}

func TestTarGzWithoutStripRoot(t *testing.T) {
	t.Parallel()
	data := tarGz(t,
		ent{name: "./", typ: tar.TypeDir},
		ent{name: "./a.txt", body: "a"},
		ent{name: "b/c.txt", body: "c", mode: 0o775},
		ent{name: "pax_global_header", typ: tar.TypeXGlobalHeader, pax: map[string]string{"comment": "made by hand"}},
	)
	dest, res, err := run(t, "tar.gz", data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	assertTree(t, dest, map[string]string{"a.txt": "-rw-r--r--:a", "b": "dir", "b/c.txt": "-rwxr-xr-x:c"})
	if !reflect.DeepEqual(*res, Result{Files: 2, Bytes: 2}) {
		t.Errorf("result = %+v (a non-commit comment is not a commit)", *res)
	}
}

func TestTarGzPaxCommit(t *testing.T) {
	t.Parallel()
	other := strings.Repeat("ab", 20)
	tests := []struct {
		name    string
		comment string
		expect  string
		wantErr bool
	}{
		{"matches", testSHA, testSHA, false},
		{"upper-case comment matches", strings.ToUpper(testSHA), testSHA, false},
		{"no expectation records it", other, "", false},
		{"differs", other, testSHA, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := tarGz(t,
				ent{name: "pax_global_header", typ: tar.TypeXGlobalHeader, pax: map[string]string{"comment": tc.comment}},
				ent{name: "f", body: "x"},
			)
			_, res, err := run(t, "tar.gz", data, Options{ExpectCommit: tc.expect})
			if tc.wantErr {
				wantErr(t, err, plugind.CodeUnsafeArchive, tc.comment)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Commit != strings.ToLower(tc.comment) {
				t.Errorf("Commit = %q, want %q", res.Commit, strings.ToLower(tc.comment))
			}
		})
	}
}

func TestTarGzRootWithoutPaxHeader(t *testing.T) {
	t.Parallel()
	data := tarGz(t, ent{name: testRoot + "/f", body: "x"})
	_, res, err := run(t, "tar.gz", data, Options{StripRoot: true, ExpectCommit: testSHA})
	if err != nil {
		t.Fatal(err)
	}
	if res.Root != testRoot || res.Commit != "" {
		t.Errorf("result = %+v", *res)
	}
}

func TestBadOptions(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	_, err := ExtractTarGz(context.Background(), bytes.NewReader(tarGz(t)), filepath.Join(parent, "out"), Options{ExpectCommit: "abc1234"})
	wantErr(t, err, plugind.CodeInvalidSource, "abc1234")
	assertNothingLeft(t, parent)
}

func TestDestMustNotExist(t *testing.T) {
	t.Parallel()
	dest := t.TempDir()
	keep := filepath.Join(dest, "keep")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ExtractTarGz(context.Background(), bytes.NewReader(tarGz(t, ent{name: "a", body: "1"}, ent{name: "a", body: "2"})), dest, Options{})
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("err = %v, want the destination refused", err)
	}
	if readFile(t, keep) != "mine" {
		t.Error("an existing destination was touched")
	}
}

func TestTarGzBudgets(t *testing.T) {
	t.Parallel()
	many := func(n int, size int64) []ent {
		var es []ent
		for i := range n {
			es = append(es, ent{name: "f/" + strconv.Itoa(i), zeros: size})
		}
		return es
	}
	tests := []struct {
		name    string
		entries []ent
		budget  plugind.Budget
		want    []string
	}{
		{"too many files", many(6, 0), plugind.Budget{MaxFiles: 5}, []string{"file-count budget exceeded", "6 files, limit 5 (over by 1)"}},
		{"links count as files", []ent{{name: "a", body: "x"}, {name: "b", typ: tar.TypeSymlink, link: "a"}, {name: "c", typ: tar.TypeLink, link: "a"}}, plugind.Budget{MaxFiles: 2}, []string{`"c"`, "over by 1"}},
		{"too many directories", []ent{{name: "a/b/c/d/e/f", body: "x"}}, plugind.Budget{MaxFiles: 3}, []string{"directory budget exceeded"}},
		{"one oversized file", []ent{{name: "big", zeros: 8 << 20}}, small, []string{`"big"`, "size budget exceeded", "over by 7.0 MiB"}},
		{"links overflow at materialization", []ent{{name: "a", zeros: 600 << 10}, {name: "b", typ: tar.TypeSymlink, link: "a"}}, small, []string{`"b"`, "size budget exceeded"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := run(t, "tar.gz", tarGz(t, tc.entries...), Options{Budget: tc.budget})
			wantErr(t, err, plugind.CodeBudgetExceeded, tc.want...)
		})
	}
}

// A gzip bomb: megabytes of zeros in a few kilobytes. It must be refused
// as soon as the bytes written pass the budget, never writing much more.
func TestTarGzBomb(t *testing.T) {
	t.Parallel()
	const budget = 1 << 20
	var chunks []ent
	for i := range 64 {
		chunks = append(chunks, ent{name: "z/" + strconv.Itoa(i), zeros: 100 << 10})
	}
	tests := []struct {
		name    string
		entries []ent
	}{
		{"one huge entry", []ent{{name: "zeros", zeros: 64 << 20}}},
		{"many entries under the limit each", chunks},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := tarGz(t, tc.entries...)
			if len(data) > 256<<10 {
				t.Fatalf("bomb is %d bytes compressed; expected a few KiB", len(data))
			}
			var dest string
			var peak int64
			opts := Options{Budget: plugind.Budget{MaxBytes: budget, MaxFiles: 1000}, Progress: func(int64) {
				peak = max(peak, diskBytes(dest))
			}}
			parent := t.TempDir()
			dest = filepath.Join(parent, "out")
			_, err := ExtractTarGz(context.Background(), bytes.NewReader(data), dest, opts)
			wantErr(t, err, plugind.CodeBudgetExceeded, "size budget exceeded", "limit 1.0 MiB")
			assertNothingLeft(t, parent)
			if peak > budget+bufSize {
				t.Errorf("%d bytes reached the disk; the budget is %d", peak, budget)
			}
		})
	}
}

func TestTarGzDefaultFileBudget(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	gw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gw)
	for i := range plugind.DefaultBudget.MaxFiles + 1 {
		name := "root/d" + strconv.Itoa(i/500) + "/f" + strconv.Itoa(i)
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	gw.Close()
	_, _, err := run(t, "tar.gz", buf.Bytes(), Options{})
	wantErr(t, err, plugind.CodeBudgetExceeded, "20001 files, limit 20000 (over by 1)")
}

func TestTarGzCorrupt(t *testing.T) {
	t.Parallel()
	good := tarGz(t, ent{name: "a", zeros: 300 << 10}, ent{name: "b", body: strings.Repeat("hello ", 5000)})
	notTar := gzipOf(t, []byte(strings.Repeat("this is not a tar archive\n", 100)))
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty input", nil, "gzip header"},
		{"not gzip", []byte("PK\x03\x04 definitely not gzip"), "gzip header"},
		{"cut in the middle", good[:len(good)/2], "reading entry"},
		{"cut in the gzip trailer", good[:len(good)-4], "after the last entry"},
		{"gzip of something else", notTar, "reading the first entry"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := run(t, "tar.gz", tc.data, Options{})
			wantErr(t, err, plugind.CodeSourceUnreadable, "archive truncated or corrupt", tc.want)
		})
	}
}

func gzipOf(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gw := gzip.NewWriter(&buf)
	gw.Write(b)
	gw.Close()
	return buf.Bytes()
}

func TestTarGzCancel(t *testing.T) {
	t.Parallel()
	data := tarGz(t, ent{name: "a", zeros: 3 << 20}, ent{name: "b", zeros: 600 << 10})
	t.Run("before", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _, err := runCtx(t, ctx, "tar.gz", bytes.NewReader(data), 0, Options{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("during an entry", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// The first report comes 1 MiB into the 3 MiB entry "a".
		var at int64
		opts := Options{Progress: func(n int64) {
			if at == 0 {
				at = n
				cancel()
			}
		}}
		_, _, err := runCtx(t, ctx, "tar.gz", bytes.NewReader(data), 0, opts)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if at >= 3<<20 {
			t.Errorf("first progress report at %d bytes; the test needs one inside the entry", at)
		}
	})
	t.Run("while the source reads", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := &cancelAfter{r: bytes.NewReader(data), n: int64(len(data) / 2), cancel: cancel, ctx: ctx}
		_, _, err := runCtx(t, ctx, "tar.gz", r, 0, Options{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

// cancelAfter cancels ctx once n bytes were read and then fails like a
// request body whose context ended.
type cancelAfter struct {
	r      io.Reader
	n      int64
	cancel context.CancelFunc
	ctx    context.Context
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	if c.n <= 0 {
		c.cancel()
		return 0, c.ctx.Err()
	}
	if int64(len(p)) > c.n {
		p = p[:c.n]
	}
	n, err := c.r.Read(p)
	c.n -= int64(n)
	return n, err
}

// Both format readers refuse an entry longer than its header says, so the
// running count is the second line of defence; it is exercised here with a
// reader that lies the way a buggy or hostile decoder could.
func TestRunningCountIgnoresDeclaredSize(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dest := filepath.Join(parent, "out")
	x, err := NewWriter(context.Background(), dest, Options{Budget: plugind.Budget{MaxBytes: 1 << 20, MaxFiles: 10}})
	if err != nil {
		t.Fatal(err)
	}
	err = x.File("liar", false, 10, io.LimitReader(zeroReader{}, 64<<20))
	wantErr(t, err, plugind.CodeBudgetExceeded, `"liar"`, "size budget exceeded")
	if n := diskBytes(dest); n > 1<<20 {
		t.Errorf("%d bytes written; the budget is 1 MiB", n)
	}
	if err := x.Abort(err); err == nil {
		t.Fatal("abort lost the error")
	}
	assertNothingLeft(t, parent)
}

// With Hash, the Writer reports every file it wrote with the sha256 of the
// bytes written, links materialized, so the tree's digest needs no second
// read; it must equal the digest of the tree read back from disk.
func TestHashedTree(t *testing.T) {
	r := func(name string) string { return testRoot + "/" + name }
	data := tarGz(t,
		ent{name: r(""), typ: tar.TypeDir},
		ent{name: r("docs/link.md"), typ: tar.TypeSymlink, link: "../README.md"},
		ent{name: r("hard"), typ: tar.TypeLink, link: r("bin/run")},
		ent{name: r("README.md"), body: "# acme\n"},
		ent{name: r("bin/run"), body: "#!/bin/sh\necho hi\n", mode: 0o755},
		ent{name: r("empty/"), typ: tar.TypeDir},
		ent{name: r("skip/x.md"), body: "left out"},
	)
	for _, readOnly := range []bool{false, true} {
		opts := Options{Budget: small, StripRoot: true, Hash: true, ReadOnly: readOnly,
			Paths: []string{"README.md", "bin", "docs", "empty", "hard"}}
		dest, res, err := run(t, "tar.gz", data, opts)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := plugind.TreeDigest(dest, small)
		if err != nil {
			t.Fatal(err)
		}
		if got := plugind.DigestFiles(res.Tree); got != want {
			t.Errorf("read-only %v: digest of the reported tree %s, on disk %s", readOnly, got, want)
		}
		var paths []string
		for _, f := range res.Tree {
			paths = append(paths, f.Path)
			if f.Source != filepath.Join(dest, filepath.FromSlash(f.Path)) {
				t.Errorf("source of %s = %s", f.Path, f.Source)
			}
			info, err := os.Stat(f.Source)
			if err != nil {
				t.Fatal(err)
			}
			if info.Size() != f.Size || (info.Mode()&0o111 != 0) != f.Executable {
				t.Errorf("%s: reported size %d exec %v, on disk %v %d", f.Path, f.Size, f.Executable, info.Mode(), info.Size())
			}
			if w := info.Mode()&0o222 != 0; w == readOnly {
				t.Errorf("read-only %v: %s has mode %v", readOnly, f.Path, info.Mode())
			}
		}
		if got := strings.Join(paths, " "); got != "README.md bin/run docs/link.md hard" {
			t.Errorf("tree %s", got)
		}
		if got := strings.Join(res.Dirs, " "); got != "docs bin empty" && got != "bin empty docs" {
			t.Errorf("dirs %q", got)
		}
	}
}
