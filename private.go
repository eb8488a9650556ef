package plugind

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// The home is private to its user (SPEC §4, §12): it holds the daemon's
// token and address, the cache and the registry, and another local user who
// could read or replace any of them could impersonate the daemon to
// `reasonix studio`, read what was planned, or change what is installed.
// Every folder reasonix creates for the home, and every file of its own it
// writes there, gets these modes, whatever the umask.
const (
	PrivateDirMode  fs.FileMode = 0o700
	PrivateFileMode fs.FileMode = 0o600
)

// MkdirPrivate creates dir and any missing parents with PrivateDirMode.
// An existing folder is left as it is (Tighten is for that).
func MkdirPrivate(dir string) error {
	return os.MkdirAll(dir, PrivateDirMode)
}

// Tighten removes group and other permissions from an existing folder
// (dir) or regular file (!dir) of this user. It reports the mode the path
// had when it changed it; a missing path, or one of another kind (a
// symlink, a special file, a file where a folder belongs), is left alone
// for whatever uses it to report. A path owned by another user is an
// error, not changed: whoever owns it controls it, and nothing done from
// here makes that safe.
func Tighten(path string, dir bool) (was fs.FileMode, changed bool, err error) {
	info, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if (dir && !info.IsDir()) || (!dir && !info.Mode().IsRegular()) {
		return 0, false, nil
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return 0, false, fmt.Errorf("%s belongs to another user (uid %d), who can read and change it", path, st.Uid)
	}
	perm := info.Mode().Perm()
	if perm&0o077 == 0 {
		return perm, false, nil
	}
	if err := os.Chmod(path, perm&^0o077); err != nil {
		return perm, false, fmt.Errorf("%s has mode %#o (other users can reach it) and could not be made private: %w", path, perm, err)
	}
	return perm, true, nil
}
