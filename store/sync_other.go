//go:build !linux

package store

import "errors"

// syncFS is unavailable outside Linux: callers fsync each entry instead.
func syncFS(string) error { return errors.ErrUnsupported }
