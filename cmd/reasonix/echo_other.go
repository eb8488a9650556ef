//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import "errors"

// hideEcho has no portable form here; readAnswer falls back to
// term.ReadPassword, which turns echo off as it starts reading.
func hideEcho(int) (func(), error) { return nil, errors.ErrUnsupported }
