package plugind

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotRegular marks a path that names something other than a regular
// file (a folder, a named pipe, a device, a socket): it is never read.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens name for reading — through root when root is not nil,
// so that it cannot lead out of root — and returns it only when it is a
// regular file, checked on the open file itself. The open never blocks: a
// named pipe swapped in after a check would otherwise wait for a writer
// forever. Every package file is opened here, whatever reads it (a
// manifest, a digest, a copy).
func OpenRegular(root *os.Root, name string) (*os.File, error) {
	open := os.OpenFile
	if root != nil {
		open = root.OpenFile
	}
	f, err := open(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: it is %s", ErrNotRegular, DescribeType(info.Mode()))
	}
	return f, nil
}

// DescribeType names what a file is, for a message: "a folder", "a named
// pipe (FIFO)", "a character device"….
func DescribeType(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file (" + m.Type().String() + ")"
}
