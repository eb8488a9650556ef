package tarball

import (
	stdzip "archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/mholt/archives"

	"reasonix.io/plugind"
)

// ExtractZip extracts the zip archive in r (size bytes long) into dest,
// which must not exist, with the same refusals, budgets and cleanup as
// ExtractTarGz. A zip's archive comment plays the part of the pax
// comment: git archive --format=zip writes the commit id there.
func ExtractZip(ctx context.Context, r io.ReaderAt, size int64, dest string, opts Options) (*Result, error) {
	x, err := NewWriter(ctx, dest, opts)
	if err != nil {
		return nil, err
	}
	res, err := x.extractZip(r, size)
	if err != nil {
		return nil, x.Abort(fmt.Errorf("extract zip: %w", err))
	}
	return res, nil
}

// ExtractZipFile extracts the zip file at zipPath into dest.
func ExtractZipFile(ctx context.Context, zipPath, dest string, opts Options) (*Result, error) {
	f, err := os.Open(zipPath)
	if err != nil {
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "open zip: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "stat zip: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "open zip %s: not a regular file", zipPath)
	}
	return ExtractZip(ctx, f, info.Size(), dest, opts)
}

func (x *Writer) extractZip(r io.ReaderAt, size int64) (*Result, error) {
	// archive/zip only for the archive comment, which archives.Zip does not
	// expose; it also rejects a damaged central directory with a clear error
	// before anything is written.
	zr, err := stdzip.NewReader(r, size)
	if err != nil && !errors.Is(err, stdzip.ErrInsecurePath) {
		return nil, x.corrupt(err, "")
	}
	// The central directory says up front how many entries and how many
	// bytes are coming: an archive over budget is refused before anything is
	// written. (The running counts still guard against lying headers.)
	var files int
	var declared int64
	for _, f := range zr.File {
		if !f.FileInfo().IsDir() {
			files++
			declared += int64(f.UncompressedSize64)
		}
	}
	if err := x.budget.Check(files, declared); err != nil {
		return nil, fmt.Errorf("the zip's central directory declares more than the budget allows, nothing was written: %w", err)
	}
	if zr.Comment != "" {
		if err := x.Comment("zip comment", zr.Comment); err != nil {
			return nil, err
		}
	}

	// The handler's own error is returned as is: Extract would wrap it in
	// "handling file N: name:", which says less than our message does.
	var entryErr error
	err = archives.Zip{}.Extract(x.ctx, io.NewSectionReader(r, 0, size), func(_ context.Context, f archives.FileInfo) error {
		entryErr = x.zipEntry(f)
		return entryErr
	})
	switch {
	case entryErr != nil:
		return nil, entryErr
	case err != nil:
		return nil, x.corrupt(err, "")
	}
	return x.Finish()
}

func (x *Writer) zipEntry(f archives.FileInfo) error {
	name, mode := f.NameInArchive, f.Mode()
	switch {
	case mode.IsDir():
		return x.Dir(name)
	case mode&fs.ModeSymlink != 0:
		return x.Symlink(name, f.LinkTarget)
	case mode.IsRegular():
		rc, err := f.Open()
		if err != nil {
			return x.corrupt(err, "opening entry %q", name)
		}
		defer rc.Close()
		return x.File(name, mode&0o111 != 0, f.Size(), rc)
	default:
		return unsafeEntry(name, "it is %s; only files, folders and links are allowed", plugind.DescribeType(mode))
	}
}
