package plugind

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Budget bounds a snapshot or a copied plugin package (SPEC §8).
type Budget struct {
	MaxBytes int64
	MaxFiles int
}

// DefaultBudget is the 256 MiB / 20,000 file budget of SPEC §8.
var DefaultBudget = Budget{MaxBytes: 256 << 20, MaxFiles: 20000}

// OrDefault fills each limit left unset (zero or negative) from
// DefaultBudget.
func (b Budget) OrDefault() Budget {
	return Budget{MaxBytes: PositiveOr(b.MaxBytes, DefaultBudget.MaxBytes), MaxFiles: PositiveOr(b.MaxFiles, DefaultBudget.MaxFiles)}
}

// PositiveOr is v, or def when v is zero or negative: the one rule for a
// limit, count or duration left unset (cmp.Or is the rule for zero alone).
func PositiveOr[T ~int | ~int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Check reports the first budget that files or bytes exceed, saying by
// how much.
func (b Budget) Check(files int, bytes int64) error {
	if b.MaxFiles > 0 && files > b.MaxFiles {
		return Errorf(CodeBudgetExceeded, "file-count budget exceeded: %d files, limit %d (over by %d)", files, b.MaxFiles, files-b.MaxFiles)
	}
	if b.MaxBytes > 0 && bytes > b.MaxBytes {
		return Errorf(CodeBudgetExceeded, "size budget exceeded: %s of file content, limit %s (over by %s)", HumanBytes(bytes), HumanBytes(b.MaxBytes), HumanBytes(bytes-b.MaxBytes))
	}
	return nil
}

// HumanBytes formats n in binary units with the exact byte count, so a
// budget message is both readable and precise.
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB (%d bytes)", float64(n)/float64(div), "KMGTPE"[exp], n)
}

// FileMode is the permission a tree's file is written with: 0644, or 0755
// when executable. The digest (SPEC §9) records only the executable bit,
// so every writer of a tree uses this one pair.
func FileMode(executable bool) fs.FileMode {
	if executable {
		return 0o755
	}
	return 0o644
}

// File is one regular file of a tree, as the digest and the copier see it.
type File struct {
	Path       string // slash-separated, relative to the tree root
	Source     string // absolute path the bytes are read from (a symlink's target for materialized links)
	Size       int64
	Executable bool
	SHA256     string // hex; filled by Tree.Hash
}

// Tree is the scanned content of a directory: its regular files in path
// order. Directories, .git and empty folders do not count.
type Tree struct {
	Root  string
	Files []File
	Bytes int64
}

// ScanTree lists the regular files under root, refusing anything that could
// escape it. In-tree symlinks are materialized as archives' are (SPEC §8): a
// link to a regular file is listed with its target's bytes, a link to a
// folder as a copy of that folder's files; symlinks that leave root,
// dangling links, cycles of folder links and special files are refused with
// the path named. The budget is checked on sizes before any content is read,
// so an oversized tree costs only a walk.
func ScanTree(root string, budget Budget) (*Tree, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, Errorf(CodeSourceUnreadable, "read %s: %w", root, err)
	}
	realRoot, err = filepath.Abs(realRoot)
	if err != nil {
		return nil, Errorf(CodeSourceUnreadable, "read %s: %w", root, err)
	}
	t := &Tree{Root: realRoot}
	// The same name rules as archives and git trees: a local folder holding
	// README.md beside readme.md is refused as they are, so one tree gets
	// one verdict however it arrives.
	var names PathSet
	if err := t.walk(realRoot, realRoot, "", nil, &names, budget); err != nil {
		return nil, err
	}
	sort.Slice(t.Files, func(i, j int) bool { return t.Files[i].Path < t.Files[j].Path })
	return t, nil
}

func (t *Tree) add(f File) {
	t.Files = append(t.Files, f)
	t.Bytes += f.Size
}

// addLink lists what the symlink at p (slash in the tree) leads to: the
// file, or every file of the folder, links in it followed the same way.
// Every path involved is real (the walk never follows a link), so a folder
// that holds one of the links being followed (chain) is a cycle.
func (t *Tree) addLink(realRoot, p, slash string, chain []string, budget Budget) error {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return Errorf(CodeUnsafeArchive, "refusing symlink %s: its target cannot be read: %w", slash, err)
	}
	if !Within(realRoot, target) {
		return Errorf(CodeUnsafeArchive, "refusing symlink %s: it points outside the package root", slash)
	}
	info, err := os.Stat(target)
	if err != nil {
		return Errorf(CodeSourceUnreadable, "read %s: %w", slash, err)
	}
	switch {
	case info.Mode().IsRegular():
		t.add(File{Path: slash, Source: target, Size: info.Size(), Executable: info.Mode()&0o111 != 0})
		return budget.Check(len(t.Files), t.Bytes)
	case !info.IsDir():
		return Errorf(CodeUnsafeArchive, "refusing symlink %s: it points to %s, not a regular file or folder", slash, DescribeType(info.Mode()))
	}
	chain = append(chain, p)
	if i := slices.IndexFunc(chain, func(c string) bool { return Within(target, c) }); i >= 0 {
		return Errorf(CodeUnsafeArchive, "refusing symlink %s: it leads to a folder that holds %s, a cycle", slash, relName(realRoot, chain[i]))
	}
	return t.walk(realRoot, target, slash, chain, nil, budget)
}

// walk lists the files below dir, a real folder at prefix in the tree (""
// for the root): regular files as they are, symlinks through addLink, .git
// left out, anything else refused. names, for the tree's own entries, holds
// them to the name rules; a linked folder's files are not names of their
// own on disk, so its walk passes nil.
func (t *Tree) walk(realRoot, dir, prefix string, chain []string, names *PathSet, budget Budget) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return Errorf(CodeSourceUnreadable, "read %s: %w", p, err)
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if prefix != "" {
			name = prefix + "/" + name
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a worktree's .git file
		}
		if names != nil {
			kind := EntryFile
			if d.IsDir() {
				kind = EntryDir
			}
			if _, err := CleanEntryName(name, d.IsDir()); err != nil {
				return Errorf(CodeUnsafeArchive, "refusing %q: %v", name, err)
			}
			if _, err := names.Add(name, kind); err != nil {
				return Errorf(CodeUnsafeArchive, "refusing %s: %v", name, err)
			}
		}
		switch typ := d.Type(); {
		case typ.IsDir():
			return nil
		case typ.IsRegular():
			info, err := d.Info()
			if err != nil {
				return Errorf(CodeSourceUnreadable, "read %s: %w", name, err)
			}
			t.add(File{Path: name, Source: p, Size: info.Size(), Executable: info.Mode()&0o111 != 0})
			return budget.Check(len(t.Files), t.Bytes)
		case typ&fs.ModeSymlink != 0:
			return t.addLink(realRoot, p, name, chain, budget)
		default:
			return Errorf(CodeUnsafeArchive, "refusing %s: it is %s, not a regular file or folder", name, DescribeType(typ))
		}
	})
}

// relName is a real path below realRoot as a slash path of the tree.
func relName(realRoot, p string) string {
	rel, err := filepath.Rel(realRoot, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

// Within reports whether target is root or lies below it. Both must be
// absolute and clean (as EvalSymlinks returns them).
func Within(root, target string) bool {
	rel, err := filepath.Rel(root, target)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// Hash fills in every file's SHA256 and returns the tree digest.
func (t *Tree) Hash() (string, error) {
	for i := range t.Files {
		sum, err := hashFile(t.Files[i].Source)
		if err != nil {
			return "", Errorf(CodeSourceUnreadable, "read %s: %w", t.Files[i].Path, err)
		}
		t.Files[i].SHA256 = sum
	}
	return DigestFiles(t.Files), nil
}

func hashFile(p string) (string, error) {
	f, err := OpenRegular(nil, p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// DigestFiles computes the tree digest of SPEC §9 over already-hashed files:
// sha256 over the path-sorted lines "<path>\x00<sha256 hex>\x00<x|->\n".
// Nothing about where the tree lives enters it.
func DigestFiles(files []File) string {
	h := sha256.New()
	for _, f := range slices.SortedFunc(slices.Values(files), func(a, b File) int { return strings.Compare(a.Path, b.Path) }) {
		x := "-"
		if f.Executable {
			x = "x"
		}
		fmt.Fprintf(h, "%s\x00%s\x00%s\n", f.Path, f.SHA256, x)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// DigestBelow is the tree digest of folder p ("" for the root) of a
// hashed file list: its files, with paths relative to p. A folder's digest
// is the same whether it was fetched alone or cut from its whole tree.
func DigestBelow(tree []File, p string) string {
	p = path.Clean(p)
	if p == "" || p == "." {
		return DigestFiles(tree)
	}
	prefix := p + "/"
	var sub []File
	for _, f := range tree {
		if rel, ok := strings.CutPrefix(f.Path, prefix); ok {
			f.Path = rel
			sub = append(sub, f)
		}
	}
	return DigestFiles(sub)
}

// ShortDigest is a digest as people read it, cut like a commit: its
// algorithm and 12 hex digits ("sha256:0123456789ab").
func ShortDigest(d string) string {
	return d[:min(len(d), strings.IndexByte(d, ':')+1+12)]
}

// TreeDigest scans and hashes root within budget.
func TreeDigest(root string, budget Budget) (string, *Tree, error) {
	t, err := ScanTree(root, budget)
	if err != nil {
		return "", nil, err
	}
	d, err := t.Hash()
	if err != nil {
		return "", nil, err
	}
	return d, t, nil
}

// LocalPath checks that a manifest-declared relative path is local: not
// absolute, no drive letter, no backslash, no "..". It returns the cleaned
// slash path.
func LocalPath(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.ContainsRune(p, '\\') {
		return "", fmt.Errorf("path %q contains a backslash", p)
	}
	if path.IsAbs(p) || filepath.IsAbs(p) || (len(p) >= 2 && p[1] == ':') {
		return "", fmt.Errorf("path %q is absolute", p)
	}
	clean := path.Clean(p)
	if slices.Contains(strings.Split(clean, "/"), "..") {
		return "", fmt.Errorf("path %q leaves the package root", p)
	}
	if !fs.ValidPath(clean) {
		return "", fmt.Errorf("path %q is not a local path", p)
	}
	return clean, nil
}
