package fakegithub

import (
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
)

// File is one entry of a commit made with CommitTree.
type File struct {
	Path    string      // slash-separated, relative to the repository root
	Content string      // file bytes (ignored for symlinks)
	Mode    fs.FileMode // 0644 (also when zero) or 0755; any execute bit makes it executable
	Symlink string      // when set, the entry is a symlink to this target
	Gitlink string      // when set, the entry is a submodule pinned at this commit
}

// markers let a plain map[string]string of Commit carry modes and deletions.
// A NUL byte followed by this tag never starts real test content.
const marker = "\x00fakegithub:"

// Deleted, as a content value in Commit, removes that path from the tree.
const Deleted = marker + "delete\x00"

// Executable, as a content value in Commit, writes content with mode 0755.
func Executable(content string) string { return marker + "exec\x00" + content }

// Symlink, as a content value in Commit, makes the path a symlink to target.
func Symlink(target string) string { return marker + "link\x00" + target }

// Gitlink, as a content value in Commit, makes the path a submodule pinned
// at commit (a 40-hex id, which need not exist here): what `git submodule
// add` records in the tree. The .gitmodules that names its URL is a file
// like any other.
func Gitlink(commit string) string { return marker + "gitlink\x00" + commit }

// filesFromMap turns Commit's map into sorted files plus deletions.
func filesFromMap(m map[string]string) (files []File, deletes []string) {
	for p, c := range m {
		switch {
		case c == Deleted:
			deletes = append(deletes, p)
		case strings.HasPrefix(c, marker+"exec\x00"):
			files = append(files, File{Path: p, Content: strings.TrimPrefix(c, marker+"exec\x00"), Mode: 0o755})
		case strings.HasPrefix(c, marker+"link\x00"):
			files = append(files, File{Path: p, Symlink: strings.TrimPrefix(c, marker+"link\x00")})
		case strings.HasPrefix(c, marker+"gitlink\x00"):
			files = append(files, File{Path: p, Gitlink: strings.TrimPrefix(c, marker+"gitlink\x00")})
		default:
			files = append(files, File{Path: p, Content: c, Mode: 0o644})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	sort.Strings(deletes)
	return files, deletes
}

func (f File) gitMode() (mode, data string) {
	switch {
	case f.Symlink != "":
		return "120000", f.Symlink
	case f.Mode&0o111 != 0:
		return "100755", f.Content
	default:
		return "100644", f.Content
	}
}

func checkPath(p string) error {
	if p == "" || strings.ContainsRune(p, 0) || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return fmt.Errorf("file path %q is not a relative file path", p)
	}
	return nil
}

// writeData appends a fast-import data block with an exact byte count, so
// content is never parsed as commands.
func writeData(w io.Writer, data string) {
	fmt.Fprintf(w, "data %d\n%s\n", len(data), data)
}

// quotePath writes a path for fast-import: verbatim unless it would be
// misparsed, then C-style quoted as git's unquote_c_style expects.
func quotePath(p string) string {
	needs := strings.HasPrefix(p, `"`)
	for i := 0; i < len(p) && !needs; i++ {
		needs = p[i] < 0x20 || p[i] == 0x7f
	}
	if !needs {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// checkRefName applies git's check-ref-format rules to a short branch or tag
// name. It runs before the name is written into a fast-import stream, so a
// name can never smuggle in a command.
func checkRefName(name string) error {
	bad := func(why string) error { return fmt.Errorf("ref name %q: %s", name, why) }
	switch {
	case name == "" || name == "@":
		return bad("empty or \"@\"")
	case strings.HasPrefix(name, "-"):
		return bad("starts with '-'")
	case strings.HasSuffix(name, ".") || strings.HasSuffix(name, "/"):
		return bad("ends with '.' or '/'")
	case strings.Contains(name, "..") || strings.Contains(name, "@{") || strings.Contains(name, "//"):
		return bad(`contains "..", "@{" or "//"`)
	case strings.HasPrefix(name, "/"):
		return bad("starts with '/'")
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return bad("contains a space, control or special character")
		}
	}
	for _, seg := range strings.Split(name, "/") {
		if strings.HasPrefix(seg, ".") || strings.HasSuffix(seg, ".lock") {
			return bad("a component starts with '.' or ends with \".lock\"")
		}
	}
	return nil
}

func isHex40(s string) bool {
	if len(s) != 40 {
		return false
	}
	return isHex(s)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != ""
}
