package tarball

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mholt/archives"
)

// ExtractTarGz extracts the gzip-compressed tar stream r into dest, which
// must not exist. On any error dest is removed and the error names the
// offending entry; refusals carry plugind.CodeUnsafeArchive, budget
// overruns plugind.CodeBudgetExceeded, and damaged input
// plugind.CodeSourceUnreadable.
func ExtractTarGz(ctx context.Context, r io.Reader, dest string, opts Options) (*Result, error) {
	x, err := NewWriter(ctx, dest, opts)
	if err != nil {
		return nil, err
	}
	res, err := x.extractTarGz(r)
	if err != nil {
		return nil, x.Abort(fmt.Errorf("extract tar.gz: %w", err))
	}
	return res, nil
}

func (x *Writer) extractTarGz(r io.Reader) (*Result, error) {
	// The multithreaded reader decompresses ahead of us on another core
	// while this goroutine writes files, as tar -xzf does with its gzip child.
	gz, err := archives.Gz{Multithreaded: !x.opts.SingleThreaded}.OpenReader(r)
	if err != nil {
		return nil, x.corrupt(err, "gzip header")
	}
	defer gz.Close()

	// archive/tar directly rather than archives.Tar.Extract: the latter
	// drops pax global headers before the handler sees them, and the commit
	// id git archive writes there is what ExpectCommit has to be checked
	// against. The loop below is otherwise the same as Extract's.
	tr := tar.NewReader(gz)
	last := ""
	for {
		if err := x.ctx.Err(); err != nil {
			return nil, err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, tar.ErrInsecurePath) {
			// Only with GODEBUG=tarinsecurepath=0; the entry is checked
			// below and refused with a precise reason.
			err = nil
		}
		if err != nil {
			if last == "" {
				return nil, x.corrupt(err, "reading the first entry")
			}
			return nil, x.corrupt(err, "reading the entry after %q", last)
		}
		last = hdr.Name
		if err := x.tarEntry(hdr, tr); err != nil {
			return nil, err
		}
	}
	if err := x.drain(gz); err != nil {
		return nil, err
	}
	return x.Finish()
}

func (x *Writer) tarEntry(hdr *tar.Header, tr *tar.Reader) error {
	switch hdr.Typeflag {
	case tar.TypeXGlobalHeader:
		if c, ok := hdr.PAXRecords["comment"]; ok {
			return x.Comment(hdr.Name, c)
		}
		return nil
	case tar.TypeDir:
		return x.Dir(hdr.Name)
	case tar.TypeReg, tar.TypeGNUSparse:
		return x.File(hdr.Name, hdr.Mode&0o111 != 0, hdr.Size, tr)
	case tar.TypeSymlink:
		return x.Symlink(hdr.Name, hdr.Linkname)
	case tar.TypeLink:
		return x.Hardlink(hdr.Name, hdr.Linkname)
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return unsafeEntry(hdr.Name, "%s entries are not allowed", deviceNames[hdr.Typeflag])
	default:
		return unsafeEntry(hdr.Name, "unsupported tar entry type %q", hdr.Typeflag)
	}
}

// deviceNames names the tar entry types refused as devices.
var deviceNames = map[byte]string{tar.TypeChar: "character device", tar.TypeBlock: "block device", tar.TypeFifo: "fifo"}

// drain reads what follows the tar end marker so the gzip trailer (CRC and
// length) is verified and a download cut off there is still caught.
func (x *Writer) drain(gz io.Reader) error {
	_, err := io.CopyBuffer(io.Discard, io.LimitReader(gz, maxTrailing), x.buf)
	if err != nil {
		return x.corrupt(err, "after the last entry")
	}
	return nil
}
