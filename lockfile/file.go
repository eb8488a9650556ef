package lockfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/google/renameio/v2"

	"reasonix.io/plugind"
)

// ReadFile reads and parses the lock at path, refusing one over MaxBytes
// before reading it whole.
// A missing lock is install.not_found, wrapping fs.ErrNotExist.
func ReadFile(path string) (*Lock, error) {
	data, err := readBounded(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &plugind.Error{Code: plugind.CodeNotFound, Msg: fmt.Sprintf("no lock at %s (reasonix lock writes one from a home)", path), Err: fs.ErrNotExist}
	}
	if err != nil {
		return nil, err
	}
	l, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// readBounded reads a document of this package at path, at most MaxBytes
// and one more (so that Parse can say it is too long) before reading it
// whole. A missing file is the os error itself, wrapping fs.ErrNotExist.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "read %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "read %s: %w", path, err)
	}
	return data, nil
}

// WriteFile writes l to path whole or not at all (a synced temporary file
// renamed over the old one), readable by all: a lock is meant to be
// committed and shared, and holds no secret.
func (l *Lock) WriteFile(path string) error {
	data, err := l.Marshal()
	if err != nil {
		return err
	}
	if err := renameio.WriteFile(path, data, 0o644); err != nil {
		return plugind.Errorf(plugind.CodePublicationFailed, "write the lock %s: %w", path, err)
	}
	return nil
}
