package tarball

import (
	"context"
	"errors"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/gitobj"
)

// ErrNeedsFull is returned (wrapped in a *NeedsPathsError) when
// Options.Paths left out what a kept link needs: extract again keeping the
// error's Paths too.
var ErrNeedsFull = errors.New("a kept link needs content outside the selected paths")

// Options controls one extraction.
type Options struct {
	// Budget bounds the extracted content. A zero field takes its value from
	// plugind.DefaultBudget, so a caller can never switch a limit off by
	// leaving it out.
	Budget plugind.Budget
	// StripRoot is for GitHub archives: every entry must sit under exactly
	// one top-level directory, which is stripped.
	StripRoot bool
	// ExpectCommit, a 40-hex commit id, pins the archive to a commit: with
	// StripRoot the root directory must end in "-"+ExpectCommit[:7], and a
	// commit comment (the pax global header git archive writes, or a zip's
	// archive comment), when present, must equal it.
	ExpectCommit string
	// Paths, when not empty, are the folders (slash paths relative to the
	// tree root, after StripRoot; "" or "." for all) that are written: every
	// entry is still name-checked, but content outside them is read past and
	// counts against no budget, and a link outside them is never
	// materialized, so it refuses nothing. A kept link whose target is left
	// out fails with a *NeedsPathsError (ErrNeedsFull).
	Paths []string
	// Submodules fetches a gitlink's commit into a folder of the tree
	// (SPEC §8); nil refuses a tree whose kept folders hold a submodule
	// rather than leave it an empty folder, which would give another digest
	// than a transport that follows it.
	Submodules SubmoduleFunc
	// FindGitlinks, for archives (which show a submodule as an empty
	// folder), says which of the given folders are gitlinks at this commit
	// and of which commit: only .gitmodules paths the tree holds as empty
	// folders are asked about. nil: the tree's gitlinks are the ones
	// Gitlink recorded.
	FindGitlinks func(ctx context.Context, paths []string) (map[string]string, error)
	// Progress, when set, is called with the number of content bytes
	// written so far: after each file and at least every progressStep
	// bytes within a large one.
	Progress func(n int64)
	// Hash asks for Result.Files and Result.Dirs: every written file with
	// the sha256 of the bytes as they were written, so a caller that owns
	// the destination (the store's private staging area) can name the tree
	// without reading it back (issue 13: a tree is hashed once).
	Hash bool
	// SingleThreaded decompresses on the calling goroutine. The default
	// decompresses ahead on another core, as tar -xzf does with its gzip
	// child, at the price of a few MiB of read-ahead buffers: right for one
	// big archive, wasteful when many archives are extracted side by side,
	// which keeps the cores busy anyway (issue 13: bulk installs within
	// 64 MiB).
	SingleThreaded bool
	// ReadOnly creates files without write permission (0444, 0555 when
	// executable), as the store keeps them, sparing a chmod per file.
	ReadOnly bool
	// GitTree hashes the tree as git does (SPEC §17) for Result.GitTrees:
	// every entry, the ones Paths leaves out too (read rather than
	// skipped), files with their modes, links as blobs of their targets,
	// and the submodules FindGitlinks names (asked about all of them, not
	// only the kept ones). Entries must give their size up front (tar and
	// zip do).
	GitTree bool
}

// Result describes a finished extraction.
type Result struct {
	Root   string // the stripped top-level directory; empty without StripRoot
	Commit string // the commit id found in the archive's comment, if any
	Files  int    // regular files written, materialized links included
	Bytes  int64  // content bytes written
	// Tree lists, with Options.Hash, every regular file written (links
	// materialized) in path order: Path, Size, Executable, SHA256 and
	// Source (its path below the destination).
	Tree []plugind.File
	// Dirs lists, with Options.Hash, the directories created below the
	// destination (slash paths, parents first), empty ones included.
	Dirs []string
	// Submodules lists the submodules written into the tree, nested ones
	// included, by path.
	Submodules []plugind.Submodule
	// GitTrees, with Options.GitTree, are the git tree ids of what the
	// archive held: "" the root's, and each kept folder's (Options.Paths)
	// that is a folder of the tree; without Paths, every folder's (a
	// mirror that stores a whole tree answers for its folders later).
	GitTrees map[string]string
	// GitAttributes, with Options.GitTree, lists the .gitattributes files
	// of the archive that name export-ignore, export-subst or filter=lfs:
	// with them an archive may hold something other than the tree, so the
	// ids may differ.
	GitAttributes []string
	// GitEntries, with Options.GitTree, lists a folder of the archive as
	// git's tree of it would ("" the root): where a mismatch lies.
	GitEntries func(dir string) ([]gitobj.Entry, bool) `json:"-"`
}

const (
	// bufSize is the one copy buffer of an extraction.
	bufSize = 256 << 10
	// progressStep throttles Progress within a large file.
	progressStep = 1 << 20
	// maxTrailing bounds how much decompressed data after the tar end
	// marker is read to reach (and verify) the gzip trailer; beyond that it
	// is left unread rather than decompressed for nothing.
	maxTrailing = 1 << 20
	// maxLinkHops bounds link chains; anything longer is a loop.
	maxLinkHops = 64
)

// expectedCommit validates ExpectCommit and returns it in lower case.
func (o Options) expectedCommit() (string, error) {
	if o.ExpectCommit == "" {
		return "", nil
	}
	c := strings.ToLower(o.ExpectCommit)
	if !plugind.IsCommitID(c) {
		return "", plugind.Errorf(plugind.CodeInvalidSource, "expected commit %q is not a 40-hex commit id", o.ExpectCommit)
	}
	return c, nil
}

// selection is Options.Paths as the Writer asks it.
type selection struct{ paths []string }

func newSelection(paths []string) selection {
	if slices.ContainsFunc(paths, func(p string) bool { return p == "" || p == "." }) {
		return selection{}
	}
	return selection{paths: paths}
}

// all reports a selection that keeps everything.
func (s selection) all() bool { return len(s.paths) == 0 }

// keeps reports whether rel is written: it is a kept folder or lies in one.
func (s selection) keeps(rel string) bool {
	if s.all() {
		return true
	}
	return slices.ContainsFunc(s.paths, func(p string) bool { return rel == p || strings.HasPrefix(rel, p+"/") })
}

// leadsTo reports whether a kept folder lies strictly below rel: a link or
// gitlink at rel must then be followed to reach it.
func (s selection) leadsTo(rel string) bool {
	return slices.ContainsFunc(s.paths, func(p string) bool { return strings.HasPrefix(p, rel+"/") })
}

// wants reports whether anything at or below rel is written.
func (s selection) wants(rel string) bool { return s.keeps(rel) || s.leadsTo(rel) }

// under is the selection inside folder rel, with paths relative to it:
// everything when rel is kept.
func (s selection) under(rel string) []string {
	if s.keeps(rel) {
		return nil
	}
	var out []string
	for _, p := range s.paths {
		if rest, ok := strings.CutPrefix(p, rel+"/"); ok {
			out = append(out, rest)
		}
	}
	return out
}

// Keeps is the test Options.Paths applies: rel is one of paths or lies in
// one (nil when paths keep everything).
func Keeps(paths []string) func(rel string) bool {
	s := newSelection(paths)
	if s.all() {
		return nil
	}
	return s.keeps
}
