//go:build !linux

package peakrss

import "syscall"

func dieWithParent() *syscall.SysProcAttr { return nil }
