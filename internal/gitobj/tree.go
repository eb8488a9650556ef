package gitobj

import (
	"cmp"
	"slices"
	"strconv"
)

// Modes of tree entries, as git writes them.
const (
	ModeTree    uint32 = 0o040000
	ModeFile    uint32 = 0o100644
	ModeExec    uint32 = 0o100755
	ModeLink    uint32 = 0o120000
	ModeGitlink uint32 = 0o160000
)

// ModeName names a mode in messages ("file", "executable"…).
func ModeName(m uint32) string {
	switch m {
	case ModeTree:
		return "folder"
	case ModeFile:
		return "file"
	case ModeExec:
		return "executable file"
	case ModeLink:
		return "symlink"
	case ModeGitlink:
		return "submodule"
	}
	return "mode " + strconv.FormatUint(uint64(m), 8)
}

// Entry is one entry of a tree object.
type Entry struct {
	Name string
	Mode uint32
	ID   ID
}

// Compare orders entries as git sorts a tree: by name bytes, a tree's
// name compared as if it ended in "/" (so "a.txt" sorts before the folder
// "a", which sorts as "a/", and the folder "a" before "a0").
func Compare(a, b Entry) int {
	n := min(len(a.Name), len(b.Name))
	if c := cmp.Compare(a.Name[:n], b.Name[:n]); c != 0 {
		return c
	}
	return cmp.Compare(nextByte(a, n), nextByte(b, n))
}

// nextByte is e's name's byte at n, "/" past the end of a tree's name and
// 0 past the end of anything else's.
func nextByte(e Entry, n int) byte {
	switch {
	case n < len(e.Name):
		return e.Name[n]
	case e.Mode == ModeTree:
		return '/'
	}
	return 0
}

// Tree is the id of the tree object listing entries, which it sorts.
func (x *Hasher) Tree(entries []Entry) ID {
	slices.SortFunc(entries, Compare)
	var size int64
	for _, e := range entries {
		size += int64(len(modeOctal(e.Mode))+1+len(e.Name)+1) + int64(len(e.ID))
	}
	w := x.Start(TypeTree, size)
	var line []byte
	for _, e := range entries {
		line = append(append(append(append(line[:0], modeOctal(e.Mode)...), ' '), e.Name...), 0)
		line = append(line, e.ID[:]...)
		_, _ = w.Write(line)
	}
	return x.Sum()
}

// modeOctal is a mode as a tree object spells it: octal, no leading zero
// ("40000" for a tree).
func modeOctal(m uint32) string { return strconv.FormatUint(uint64(m), 8) }
