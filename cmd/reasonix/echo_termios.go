//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import "golang.org/x/sys/unix"

// hideEcho turns the terminal's echo off, keeping line editing and
// signals, and returns what gives the terminal back. It is called before a
// sensitive value's prompt is printed: term.ReadPassword turns echo off
// only once it starts reading, so a value typed the moment the prompt
// appeared could be shown on screen.
func hideEcho(fd int) (restore func(), err error) {
	old, err := unix.IoctlGetTermios(fd, getTermios)
	if err != nil {
		return nil, err
	}
	hidden := *old
	hidden.Lflag &^= unix.ECHO
	hidden.Lflag |= unix.ICANON | unix.ISIG
	hidden.Iflag |= unix.ICRNL
	if err := unix.IoctlSetTermios(fd, setTermios, &hidden); err != nil {
		return nil, err
	}
	return func() { _ = unix.IoctlSetTermios(fd, setTermios, old) }, nil
}
