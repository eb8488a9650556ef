package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"reasonix.io/plugind"
)

// CopyTree writes t's files below dst (which must not exist yet) through
// buf, keeping the executable bit and materializing symlinked files as
// regular files, and returns the tree digest of the bytes it wrote, hashed
// as they went through: a copy is checked against an approved digest with
// one read of the source and none of the copy (issue 13). With sync every
// file is synced before CopyTree returns, so a later rename publishes
// complete content; without it the caller syncs them all at once
// (SyncTrees) before anything names them. On error the partial copy is
// removed.
func CopyTree(ctx context.Context, t *plugind.Tree, dst string, buf []byte, sync bool) (digest string, err error) {
	if err := os.Mkdir(dst, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dst, err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dst)
		}
	}()
	made := map[string]bool{".": true}
	var mkdirs func(d string) error
	mkdirs = func(d string) error {
		if made[d] {
			return nil
		}
		if err := mkdirs(path.Dir(d)); err != nil {
			return err
		}
		if err := os.Mkdir(filepath.Join(dst, filepath.FromSlash(d)), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
		made[d] = true
		return nil
	}
	files := make([]plugind.File, len(t.Files))
	for i, f := range t.Files {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if err := mkdirs(path.Dir(f.Path)); err != nil {
			return "", err
		}
		h := sha256.New()
		if err := CopyFile(f.Source, filepath.Join(dst, filepath.FromSlash(f.Path)), f.Executable, buf, h, sync); err != nil {
			return "", fmt.Errorf("copy %s: %w", f.Path, err)
		}
		files[i] = plugind.File{Path: f.Path, Executable: f.Executable, SHA256: hex.EncodeToString(h.Sum(nil))}
	}
	return plugind.DigestFiles(files), nil
}

// CopyFile copies src to dst, which must not exist, as a regular file
// (plugind.FileMode) through buf. When also is not nil every byte written
// passes through it too (a hash of the copy); both ends are then wrapped
// so io.CopyBuffer uses buf — not the kernel's copy_file_range, which
// would bypass also, and not os.File.WriteTo, which allocates a buffer per
// file. sync fsyncs dst before it is closed.
func CopyFile(src, dst string, executable bool, buf []byte, also io.Writer, sync bool) error {
	in, err := plugind.OpenRegular(nil, src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, plugind.FileMode(executable))
	if err != nil {
		return err
	}
	var w io.Writer = out
	var r io.Reader = in
	if also != nil {
		w, r = io.MultiWriter(out, also), struct{ io.Reader }{in}
	}
	if _, err := io.CopyBuffer(w, r, buf); err != nil {
		out.Close()
		return err
	}
	if sync {
		if err := out.Sync(); err != nil {
			out.Close()
			return err
		}
	}
	return out.Close()
}

// SyncDir fsyncs a directory so a rename into or out of it is durable.
// Directory syncing is best effort (some filesystems refuse it).
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
