package plugind

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// CopyTree writes t's files below dst (which must not exist yet), keeping
// the executable bit and materializing symlinked files as regular files.
// Every file is synced before CopyTree returns, so a later rename publishes
// complete content. On error the partial copy is removed.
func CopyTree(ctx context.Context, t *Tree, dst string) (err error) {
	if err := os.Mkdir(dst, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dst)
		}
	}()
	buf := make([]byte, 256<<10)
	for _, f := range t.Files {
		if err := ctx.Err(); err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(target), err)
		}
		if err := copyFile(f.Source, target, f.Executable, buf); err != nil {
			return fmt.Errorf("copy %s: %w", f.Path, err)
		}
	}
	return nil
}

func copyFile(src, dst string, executable bool, buf []byte) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	mode := os.FileMode(0o644)
	if executable {
		mode = 0o755
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.CopyBuffer(out, in, buf); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
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
