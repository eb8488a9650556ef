package tarball

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
)

// fuzzBudget keeps every execution small: a few entries and kilobytes reach
// every refusal and both budget checks, and a decompression bomb in the
// input costs at most this much.
var fuzzBudget = plugind.Budget{MaxBytes: 64 << 10, MaxFiles: 24}

// fuzzCommit is the commit a pinned execution expects.
const fuzzCommit = testSHA

// FuzzExtractTarGz and FuzzExtractZip extract arbitrary bytes with
// StripRoot and ExpectCommit chosen by the fuzzer, each into a fresh
// directory under one base directory per process, removed after each
// execution. Seeds: testdata/fuzz/<name>/ and the archives of archiveSeeds.
// Whatever the input (checkExtraction): no panic; an error is coded and
// leaves nothing behind; nothing is written outside the destination; what
// is written is only plain files and directories whose names pass the
// extractor's own checks, distinct under case folding, within the budget
// and counted exactly in the Result; and every regular file of the archive,
// as an independent reader sees it, is on disk with its content.
func FuzzExtractTarGz(f *testing.F) {
	for _, s := range archiveSeeds() {
		f.Add(tarGz(f, s.entries...), s.strip, s.pinned)
	}
	fuzzExtract(f, "tar.gz")
}

func FuzzExtractZip(f *testing.F) {
	for _, s := range archiveSeeds() {
		if s.zipOK {
			f.Add(zipBytes(f, s.comment, s.entries...), s.strip, s.pinned)
		}
	}
	fuzzExtract(f, "zip")
}

func fuzzExtract(f *testing.F, format string) {
	base := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, strip, pinned bool) {
		opts := Options{Budget: fuzzBudget, StripRoot: strip}
		if pinned {
			opts.ExpectCommit = fuzzCommit
		}
		dir, err := os.MkdirTemp(base, "x")
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}()
		dest := filepath.Join(dir, "out")
		var res *Result
		if format == "zip" {
			res, err = ExtractZip(context.Background(), bytes.NewReader(data), int64(len(data)), dest, opts)
		} else {
			res, err = ExtractTarGz(context.Background(), bytes.NewReader(data), dest, opts)
		}
		if err := checkExtraction(base, dir, dest, res, err, opts); err != nil {
			t.Fatal(err)
		}
		if err != nil {
			return
		}
		if err := checkContent(format, data, dest, opts); err != nil {
			t.Fatal(err)
		}
	})
}

// checkExtraction checks what an extraction left on disk against its
// outcome. base holds only dir, and dir only dest.
func checkExtraction(base, dir, dest string, res *Result, err error, opts Options) error {
	if left, rerr := os.ReadDir(base); rerr != nil || len(left) != 1 || left[0].Name() != filepath.Base(dir) {
		return fmt.Errorf("the base directory holds %v (%v); want only %s", names(left), rerr, filepath.Base(dir))
	}
	left, rerr := os.ReadDir(dir)
	if rerr != nil {
		return rerr
	}
	if err != nil {
		switch code := plugind.CodeOf(err); code {
		case plugind.CodeUnsafeArchive, plugind.CodeBudgetExceeded, plugind.CodeSourceUnreadable:
		default:
			return fmt.Errorf("error without a refusal code (%q): %v", code, err)
		}
		if res != nil || len(left) != 0 {
			return fmt.Errorf("failed (%v) but returned %+v and left %v", err, res, names(left))
		}
		return nil
	}
	if res == nil || len(left) != 1 || left[0].Name() != "out" {
		return fmt.Errorf("succeeded with result %+v, leaving %v", res, names(left))
	}
	if res.Files > opts.Budget.MaxFiles || res.Bytes > opts.Budget.MaxBytes || res.Files < 0 || res.Bytes < 0 {
		return fmt.Errorf("result %+v is over the budget %+v", res, opts.Budget)
	}
	if opts.StripRoot {
		if clean, err := plugind.CleanEntryName(res.Root, true); err != nil || clean != res.Root || clean == "." || strings.Contains(clean, "/") {
			return fmt.Errorf("stripped root %q is not one directory name", res.Root)
		}
	}
	switch {
	case !opts.StripRoot && res.Root != "":
		return fmt.Errorf("root %q without StripRoot", res.Root)
	case opts.ExpectCommit != "" && opts.StripRoot && !strings.HasSuffix(strings.ToLower(res.Root), "-"+opts.ExpectCommit[:7]):
		return fmt.Errorf("root %q does not match commit %s", res.Root, opts.ExpectCommit)
	case res.Commit != "" && !plugind.IsCommitID(res.Commit), res.Commit != strings.ToLower(res.Commit):
		return fmt.Errorf("result commit %q", res.Commit)
	case opts.ExpectCommit != "" && res.Commit != "" && res.Commit != opts.ExpectCommit:
		return fmt.Errorf("result commit %q, expected %s", res.Commit, opts.ExpectCommit)
	}

	files, dirs := 0, 0
	var size int64
	folded := map[string]string{}
	err = filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dest {
			return err
		}
		rel, err := filepath.Rel(dest, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		isDir := info.IsDir()
		switch {
		case isDir:
			dirs++
		case info.Mode().IsRegular():
			files++
			size += info.Size()
			if perm := info.Mode().Perm(); perm&^0o755 != 0 || info.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
				return fmt.Errorf("%s has mode %s", rel, info.Mode())
			}
		default:
			return fmt.Errorf("%s is a %s, not a file or directory", rel, info.Mode().Type())
		}
		if clean, err := plugind.CleanEntryName(rel, isDir); err != nil || clean != rel {
			return fmt.Errorf("extracted name %q fails the name checks (%q, %v)", rel, clean, err)
		}
		if other, dup := folded[plugind.FoldKey(rel)]; dup {
			return fmt.Errorf("extracted %q and %q differ only by case", rel, other)
		}
		folded[plugind.FoldKey(rel)] = rel
		return nil
	})
	switch {
	case err != nil:
		return err
	case files != res.Files || size != res.Bytes:
		return fmt.Errorf("on disk %d files, %d bytes; the result says %+v", files, size, res)
	case dirs > opts.Budget.MaxFiles:
		return fmt.Errorf("%d directories, over the budget %+v", dirs, opts.Budget)
	}
	return nil
}

func names(entries []os.DirEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name()
	}
	return out
}

// checkContent reads an archive that extracted with the standard
// library's readers and checks every regular file in it is on disk under
// its placed name with the same bytes, and every link is a regular file.
func checkContent(format string, data []byte, dest string, opts Options) error {
	type entry struct {
		name string
		kind byte // 'f' file, 'd' directory, 'l' link
		body []byte
	}
	var entries []entry
	switch format {
	case "tar.gz":
		gz, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("extracted, but compress/gzip refuses it: %v", err)
		}
		tr := tar.NewReader(gz)
		for {
			hdr, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
				return fmt.Errorf("extracted, but archive/tar fails after %d entries: %v", len(entries), err)
			}
			switch hdr.Typeflag {
			case tar.TypeReg, tar.TypeGNUSparse:
				body, err := io.ReadAll(tr)
				if err != nil {
					return fmt.Errorf("extracted, but archive/tar cannot read %q: %v", hdr.Name, err)
				}
				entries = append(entries, entry{hdr.Name, 'f', body})
			case tar.TypeDir:
				entries = append(entries, entry{hdr.Name, 'd', nil})
			case tar.TypeSymlink, tar.TypeLink:
				entries = append(entries, entry{hdr.Name, 'l', nil})
			}
		}
	case "zip":
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
			return fmt.Errorf("extracted, but archive/zip refuses it: %v", err)
		}
		for _, zf := range zr.File {
			mode := zf.Mode()
			switch {
			case mode.IsDir():
				entries = append(entries, entry{zf.Name, 'd', nil})
			case mode&fs.ModeSymlink != 0:
				entries = append(entries, entry{zf.Name, 'l', nil})
			default:
				rc, err := zf.Open()
				if err != nil {
					return fmt.Errorf("extracted, but archive/zip cannot open %q: %v", zf.Name, err)
				}
				body, err := io.ReadAll(rc)
				rc.Close()
				if err != nil {
					return fmt.Errorf("extracted, but archive/zip cannot read %q: %v", zf.Name, err)
				}
				entries = append(entries, entry{zf.Name, 'f', body})
			}
		}
	}
	for _, e := range entries {
		rel, err := plugind.CleanEntryName(e.name, e.kind == 'd')
		if err != nil {
			return fmt.Errorf("extracted, yet entry %q fails the name checks: %v", e.name, err)
		}
		if opts.StripRoot {
			_, rel, _ = strings.Cut(rel, "/")
		}
		if rel == "" || rel == "." {
			continue
		}
		p := filepath.Join(dest, filepath.FromSlash(rel))
		info, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("entry %q is not on disk: %v", e.name, err)
		}
		switch e.kind {
		case 'd':
			if !info.IsDir() {
				return fmt.Errorf("directory entry %q is a %s on disk", e.name, info.Mode().Type())
			}
		case 'l':
			// A copy of the file or folder it leads to (checkExtraction
			// saw only files and folders below it).
			if !info.Mode().IsRegular() && !info.IsDir() {
				return fmt.Errorf("link entry %q is a %s on disk, not a materialized file or folder", e.name, info.Mode().Type())
			}
		case 'f':
			got, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, e.body) {
				return fmt.Errorf("entry %q: %d bytes on disk differ from the archive's %d", e.name, len(got), len(e.body))
			}
		}
	}
	return nil
}

// archiveSeed is one seed archive, built by tarGz and zipBytes.
type archiveSeed struct {
	entries       []ent
	comment       string // zip only
	strip, pinned bool
	zipOK         bool // zipBytes can express every entry
}

// archiveSeeds spans what the unit tests exercise one by one: a GitHub
// archive with links and a commit comment, every refusal class, both
// budgets, and the link corner cases.
func archiveSeeds() []archiveSeed {
	r := func(name string) string { return testRoot + "/" + name }
	pax := ent{name: "pax_global_header", typ: tar.TypeXGlobalHeader, pax: map[string]string{"comment": testSHA}}
	github := []ent{
		pax,
		{name: r(""), typ: tar.TypeDir},
		{name: r("README.md"), body: "# tools\n"},
		{name: r("bin/run"), body: "#!/bin/sh\n", mode: 0o755},
		{name: r("skills/a/SKILL.md"), body: "---\nname: a\n---\n"},
		{name: r("link.md"), typ: tar.TypeSymlink, link: "README.md"},
		{name: r("skills/b/SKILL.md"), typ: tar.TypeSymlink, link: "../a/SKILL.md"},
		{name: r("hard"), typ: tar.TypeLink, link: r("bin/run")},
	}
	plain := func(entries ...ent) archiveSeed { return archiveSeed{entries: entries, zipOK: true} }
	seeds := []archiveSeed{
		{entries: github, strip: true, pinned: true},
		{entries: github[1:], strip: true},
		{entries: github[1:7], comment: testSHA, strip: true, pinned: true, zipOK: true},
		plain(ent{name: "a/b/c.txt", body: "c"}, ent{name: "a/", typ: tar.TypeDir}, ent{name: "d.txt", body: "d"}),
		plain(ent{name: "../evil", body: "x"}),
		plain(ent{name: "/etc/passwd", body: "x"}),
		plain(ent{name: `a\..\evil`, body: "x"}),
		plain(ent{name: "C:/evil", body: "x"}),
		plain(ent{name: "link", typ: tar.TypeSymlink, link: "../../etc/passwd"}),
		plain(ent{name: "d/f", body: "x"}, ent{name: "link", typ: tar.TypeSymlink, link: "d"}),
		plain(ent{name: "a", typ: tar.TypeSymlink, link: "b"}, ent{name: "b", typ: tar.TypeSymlink, link: "a"}),
		plain(ent{name: "README.md", body: "1"}, ent{name: "readme.md", body: "2"}),
		plain(ent{name: "k.md", body: "1"}, ent{name: "\u212a.md", body: "2"}),
		plain(ent{name: "a", body: "1"}, ent{name: "a/b", body: "2"}),
		plain(ent{name: "a", body: "1"}, ent{name: "a", body: "2"}),
		plain(ent{name: "fifo", typ: tar.TypeFifo}),
		plain(ent{name: "zeros", zeros: 100 << 10}),
		plain(),
		{entries: []ent{{name: "h", typ: tar.TypeLink, link: "../x"}}},
		plain(ent{name: "dev", typ: tar.TypeChar}),
	}
	many := make([]ent, fuzzBudget.MaxFiles+1)
	for i := range many {
		many[i] = ent{name: fmt.Sprintf("f%02d", i), body: "x"}
	}
	seeds = append(seeds, plain(many...))
	chain := []ent{{name: "target", body: "t"}}
	for i := 0; i < 4; i++ {
		prev := "target"
		if i > 0 {
			prev = fmt.Sprintf("l%d", i-1)
		}
		chain = append(chain, ent{name: fmt.Sprintf("l%d", i), typ: tar.TypeSymlink, link: prev})
	}
	return append(seeds, plain(chain...))
}
