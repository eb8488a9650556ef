package cache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// isCorrupt says whether an Open failure means the file's content is bad, so
// that moving it aside and starting empty is the repair. Everything about
// the environment rather than the content (permissions, a full or read-only
// disk, a lock held elsewhere, a directory where the file should be, a
// cancelled context, a schema from a newer reasonix) is not: moving the file
// would not help, or would destroy a good cache.
func isCorrupt(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, errNewerSchema) {
		return false
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff { // the primary result code
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return true // damaged, truncated or overwritten
		case sqlite3.SQLITE_ERROR:
			// Raised while migrating or probing: a table that exists with
			// other columns, or one the version table claims but that is
			// missing. A foreign or half-migrated schema.
			return true
		default:
			// CANTOPEN, READONLY, IOERR, FULL, PERM, BUSY, LOCKED, NOMEM…
			return false
		}
	}
	// goose's own complaints about its history (no zero version, a
	// missing migration) describe the file's schema. Anything else (a
	// migration that cannot be loaded, which is this program's fault) is
	// no reason to throw the user's cache away.
	return errors.Is(err, errForeignSchema) || errors.Is(err, errHistory)
}

// moveAside renames a corrupt database to <path>.corrupt-<UTC time>, with
// its -wal and -shm files under the same new name, so the damaged state stays
// available for a post-mortem and SQLite never pairs an old WAL with a new
// database. It returns the new path of the database file. Called under
// lockSchema, so no other Open races it.
func moveAside(abs string, now time.Time) (string, error) {
	stamp := now.UTC().Format("20060102T150405Z")
	base := abs + ".corrupt-" + stamp
	for i := 2; exists(base); i++ {
		base = fmt.Sprintf("%s.corrupt-%s-%d", abs, stamp, i)
	}
	// The WAL first: SQLite would replay a stale -wal left beside a new
	// database into it. Should it fail to move, nothing has moved and the
	// cache stays unavailable rather than half-repaired. The -shm is only an
	// index SQLite rebuilds, moved along so the set stays together. The
	// database itself goes last.
	for _, suffix := range []string{"-wal", "-shm", ""} {
		if err := os.Rename(abs+suffix, base+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	return base, nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
