package installer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/dirhandle"
	"reasonix.io/plugind/store"
)

// copyHashed copies t's files below dst (which must not exist yet) and
// returns the tree digest of the bytes it wrote, hashed as they went
// through: the copy is checked against the approved digest with one read of
// the source and none of the copy (issue 13). Files are not synced one by
// one: apply syncs the filesystem once before anything is published (SPEC
// §9's crash guarantee needs them durable before the registry names them,
// not before each is closed). Folders and files are created through open
// handles on their folders (dirhandle), one mkdirat or openat each rather
// than a walk of the whole path. On error the partial copy is removed.
func copyHashed(ctx context.Context, t *plugind.Tree, dst string, buf []byte) (digest string, err error) {
	if err := os.Mkdir(dst, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dst, err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dst)
		}
	}()
	root, err := os.OpenRoot(dst)
	if err != nil {
		return "", fmt.Errorf("create %s: %w", dst, err)
	}
	defer root.Close()
	dirs := dirhandle.New(root)
	defer dirs.Close()
	made := map[string]bool{".": true}
	var mkdirs func(d string) error
	mkdirs = func(d string) error {
		if made[d] {
			return nil
		}
		if err := mkdirs(path.Dir(d)); err != nil {
			return err
		}
		parent, name, err := dirs.In(d)
		if err == nil {
			err = parent.Mkdir(name, 0o755)
		}
		if err != nil {
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
		sum, err := copyFileHashed(dirs, f, buf)
		if err != nil {
			return "", fmt.Errorf("copy %s: %w", f.Path, err)
		}
		files[i] = plugind.File{Path: f.Path, Executable: f.Executable, SHA256: sum}
	}
	return plugind.DigestFiles(files), nil
}

// copyFileHashed copies f to its place below dirs' root as a new regular
// file (plugind.FileMode) and returns the sha256 of what it
// wrote.
func copyFileHashed(dirs *dirhandle.Handles, f plugind.File, buf []byte) (string, error) {
	d, name, err := dirs.In(f.Path)
	if err != nil {
		return "", err
	}
	out, err := d.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, plugind.FileMode(f.Executable))
	if err != nil {
		return "", err
	}
	h := sha256.New()
	err = store.CopyInto(f.Source, out, buf, h)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
