package installer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"reasonix.io/plugind"
	"reasonix.io/plugind/store"
)

// copyHashed copies t's files below dst (which must not exist yet) and
// returns the tree digest of the bytes it wrote, hashed as they went
// through: the copy is checked against the approved digest with one read of
// the source and none of the copy (issue 13). Files are not synced one by
// one: apply syncs the filesystem once before anything is published (SPEC
// §9's crash guarantee needs them durable before the registry names them,
// not before each is closed). On error the partial copy is removed.
func copyHashed(ctx context.Context, t *plugind.Tree, dst string, buf []byte) (digest string, err error) {
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
		sum, err := copyFileHashed(f.Source, filepath.Join(dst, filepath.FromSlash(f.Path)), f.Executable, buf)
		if err != nil {
			return "", fmt.Errorf("copy %s: %w", f.Path, err)
		}
		files[i] = plugind.File{Path: f.Path, Executable: f.Executable, SHA256: sum}
	}
	return plugind.DigestFiles(files), nil
}

func copyFileHashed(src, dst string, executable bool, buf []byte) (string, error) {
	h := sha256.New()
	if err := store.CopyFile(src, dst, executable, buf, h, false); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
