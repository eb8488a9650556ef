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
// An existing folder is left as it is (TightenDir is for that).
func MkdirPrivate(dir string) error {
	return os.MkdirAll(dir, PrivateDirMode)
}

// TightenDir makes an existing folder of this user private: group and
// other permissions are removed. It returns what it did in one sentence
// ("" when the folder was already private or does not exist). A folder
// owned by another user is not changed: the error says so, since such a
// folder cannot be made safe from here.
func TightenDir(dir, what string) (string, error) {
	info, err := os.Stat(dir)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("check %s %s: %w", what, dir, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%s %s is not a folder", what, dir)
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return "", fmt.Errorf("%s %s belongs to another user (uid %d): whoever owns it can read the daemon's token and change what is installed; use a home of your own (REASONIX_HOME)", what, dir, st.Uid)
	}
	perm := info.Mode().Perm()
	if perm&0o077 == 0 {
		return "", nil
	}
	tight := perm &^ 0o077
	if err := os.Chmod(dir, tight); err != nil {
		return "", fmt.Errorf("%s %s has mode %#o (other users can reach it) and could not be made private: %w", what, dir, perm, err)
	}
	return fmt.Sprintf("%s %s had mode %#o, which let other users reach it; made it %#o", what, dir, perm, tight), nil
}

// TightenFile removes group and other permissions from an existing file
// (nothing when it does not exist or is already private).
func TightenFile(path string) error {
	info, err := os.Lstat(path)
	if os.IsNotExist(err) || (err == nil && (!info.Mode().IsRegular() || info.Mode().Perm()&0o077 == 0)) {
		return nil
	}
	if err != nil {
		return err
	}
	return os.Chmod(path, info.Mode().Perm()&^0o077)
}
