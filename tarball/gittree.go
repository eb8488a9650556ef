package tarball

import (
	"bytes"
	"fmt"
	"io"
	"path"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/gitobj"
)

// Trees as git hashes them (Options.GitTree, SPEC §17). An archive endpoint
// can serve any bytes for a commit; hashing what it served as git hashes a
// tree — every entry, the folders left out as well, blobs with their
// modes, links as blobs of their targets, submodules as gitlinks — gives
// the id the commit names if and only if the archive holds that tree. The
// content is hashed as it streams past (one more hash over the same
// buffer); only names, modes and ids are kept, as the PathSet keeps names.

// gitAttributesFile holds the attributes git archive honours.
const gitAttributesFile = ".gitattributes"

// exportAttributes are the attributes with which an archive holds
// something other than the tree: export-ignore leaves entries out,
// export-subst rewrites content, and an LFS filter lets GitHub put the
// large files themselves where the tree has their pointers (a
// repository's "include Git LFS objects in archives" setting).
var exportAttributes = [][]byte{[]byte("export-ignore"), []byte("export-subst"), []byte("filter=lfs")}

// gitTree is the hashing state of one extraction.
type gitTree struct {
	h    *gitobj.Hasher
	b    *gitobj.Builder
	hard []hardlink // resolved in finish: their target may come later
	// attrs are the .gitattributes files that name an export attribute.
	attrs []string
}

type hardlink struct{ rel, target string }

func newGitTree() *gitTree {
	h := gitobj.NewHasher()
	return &gitTree{h: h, b: gitobj.NewBuilder(h)}
}

// startBlob begins the blob of the file entry rel (declared bytes): it
// returns the writer its content goes through and r, watched for export
// attributes when it is a .gitattributes file.
func (g *gitTree) startBlob(rel, name string, declared int64, r io.Reader) (io.Writer, io.Reader, error) {
	if declared < 0 {
		return nil, nil, plugind.Errorf(plugind.CodeSourceUnreadable, "entry %q: the archive does not give its size before its content, so it cannot be hashed as git does", name)
	}
	if path.Base(rel) == gitAttributesFile {
		r = &attrScan{r: r, found: func() { g.attrs = append(g.attrs, rel) }}
	}
	return g.h.Start(gitobj.TypeBlob, declared), r, nil
}

// endBlob records the blob started last, once written bytes were read.
func (g *gitTree) endBlob(rel, name string, exec bool, declared, written int64) error {
	if written != declared {
		return plugind.Errorf(plugind.CodeSourceUnreadable, "archive truncated or corrupt: entry %q holds %d bytes, its header says %d", name, written, declared)
	}
	mode := gitobj.ModeFile
	if exec {
		mode = gitobj.ModeExec
	}
	return g.b.Add(rel, mode, g.h.Sum())
}

// skipBlob hashes a file the selection leaves out.
func (x *Writer) skipBlob(rel, name string, exec bool, declared int64, r io.Reader) error {
	w, r, err := x.git.startBlob(rel, name, declared, r)
	if err != nil {
		return err
	}
	var n int64
	for {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		k, rerr := r.Read(x.buf)
		if k > 0 {
			_, _ = w.Write(x.buf[:k])
			n += int64(k)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return x.corrupt(rerr, "reading entry %q", name)
		}
	}
	return x.git.endBlob(rel, name, exec, declared, n)
}

func (g *gitTree) symlink(rel, target string) error {
	return g.b.Add(rel, gitobj.ModeLink, g.h.Blob([]byte(target)))
}

func (g *gitTree) gitlink(rel, commit string) error {
	id, err := gitobj.ParseID(commit)
	if err != nil {
		return fmt.Errorf("submodule %q: %w", rel, err)
	}
	return g.b.Add(rel, gitobj.ModeGitlink, id)
}

// finish hashes the trees and lists the ids Result.GitTrees gives: the
// root's and each kept folder's, every folder's when all are kept. A hard link (which git archive never
// writes) is its target's blob; one whose target is no blob hashes as
// nothing git has, so the tree is not the commit's.
func (g *gitTree) finish(sel selection) map[string]string {
	for _, l := range g.hard {
		e, ok := g.b.Lookup(l.target)
		if !ok || e.Mode == gitobj.ModeGitlink {
			e = gitobj.Entry{Mode: gitobj.ModeFile}
		}
		_ = g.b.Add(l.rel, e.Mode, e.ID)
	}
	out := map[string]string{"": g.b.Finish().String()}
	if sel.all() {
		for p, id := range g.b.TreeIDs() {
			out[p] = id.String()
		}
		return out
	}
	for _, p := range sel.paths {
		if id, ok := g.b.TreeID(p); ok {
			out[p] = id.String()
		}
	}
	return out
}

// attrScan reports, once, that the stream it passes names an export
// attribute (a name split between two reads included).
type attrScan struct {
	r     io.Reader
	tail  []byte
	seen  bool
	found func()
}

func (a *attrScan) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 && !a.seen {
		seam := append(a.tail, p[:min(n, 16)]...)
		for _, attr := range exportAttributes {
			if bytes.Contains(p[:n], attr) || bytes.Contains(seam, attr) {
				a.seen = true
				a.found()
				break
			}
		}
		whole := append(a.tail, p[max(0, n-16):n]...)
		a.tail = append([]byte(nil), whole[max(0, len(whole)-16):]...)
	}
	return n, err
}
