package tarball

import (
	"errors"
	"strings"

	"reasonix.io/plugind"
)

// ErrNeedsFull is returned (wrapped) when Options.Include left out a file
// that a kept link needs: extract again without Include.
var ErrNeedsFull = errors.New("a kept link needs a file outside the selected paths")

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
	// Include, when set, selects the paths (relative to the tree root, after
	// StripRoot) that are written: every entry is still name-checked, so a
	// commit gets one verdict whatever is kept, but content outside the
	// selection is read past and counts against no budget. A kept link whose
	// target is left out fails with ErrNeedsFull.
	Include func(rel string) bool
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

func (o Options) budget() plugind.Budget { return o.Budget.OrDefault() }

// expectedCommit validates ExpectCommit and returns it in lower case.
func (o Options) expectedCommit() (string, error) {
	if o.ExpectCommit == "" {
		return "", nil
	}
	c := strings.ToLower(o.ExpectCommit)
	if !isCommitID(c) {
		return "", plugind.Errorf(plugind.CodeInvalidSource, "expected commit %q is not a 40-hex commit id", o.ExpectCommit)
	}
	return c, nil
}

// isCommitID reports whether s is a full lower- or upper-case hex SHA-1.
func isCommitID(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
