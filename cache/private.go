package cache

import (
	"fmt"
	"os"

	"reasonix.io/plugind"
)

// makePrivate keeps the cache file and its -wal and -shm private to the
// user (plugind.PrivateFileMode): SQLite would create the database with mode
// 0644, and it gives the -wal and -shm the database's own mode. A missing
// database is created empty (what SQLite would do) with the private mode;
// an existing one, and its -wal and -shm, lose group and other permissions.
// A path that is not a regular file is left for SQLite to refuse.
func makePrivate(abs string) error {
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL, plugind.PrivateFileMode)
	if err == nil {
		if err := f.Close(); err != nil {
			return fmt.Errorf("create %s: %w", abs, err)
		}
	}
	for _, p := range []string{abs, abs + "-wal", abs + "-shm"} {
		if _, _, err := plugind.Tighten(p, false); err != nil {
			return fmt.Errorf("make %s private to its user: %w", p, err)
		}
	}
	return nil
}
