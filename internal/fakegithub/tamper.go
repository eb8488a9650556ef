package fakegithub

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Tamper is how a lying archive endpoint (or a mirror replica in between)
// alters the archive of one commit: the entries keep git archive's names,
// order and pax comment, so only hashing the content as git does tells
// the archive from the commit (SPEC §17). Paths are below the archive's
// root folder.
type Tamper struct {
	Change map[string]string // an existing file's new content
	Add    map[string]string // files the commit does not have, at the end
	Chmod  []string          // files whose executable bit is flipped
}

// TamperArchive makes the archive route serve the archive git archive
// makes of sha, altered as t says (SetArchive, with the real archive as
// its start). Every path of Change and Chmod must be a file of the
// archive.
func (r *Repo) TamperArchive(sha string, t Tamper) {
	r.s.helper()
	if r.s.plain || !isHex40(sha) {
		r.s.fail(fmt.Errorf("%s: TamperArchive(%q): needs a GitHub-mode server and a 40-hex commit id", r.path, sha))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	orig, err := r.s.runGit(ctx, r.gitDir, nil, "archive", "--format=tar", "--prefix="+r.ArchivePrefix(sha), sha)
	if err == nil {
		orig, err = tamper(orig, r.ArchivePrefix(sha), t)
	}
	if err != nil {
		r.s.fail(fmt.Errorf("%s: TamperArchive(%s): %w", r.path, sha, err))
		return
	}
	r.SetArchive(sha, orig)
}

// tamper rewrites the tar stream in (under prefix) as t says, gzipped.
func tamper(in []byte, prefix string, t Tamper) ([]byte, error) {
	var out bytes.Buffer
	gz := gzip.NewWriter(&out)
	tw := tar.NewWriter(gz)
	tr := tar.NewReader(bytes.NewReader(in))
	pending := map[string]bool{}
	for p := range t.Change {
		pending[p] = true
	}
	for _, p := range t.Chmod {
		pending[p] = true
	}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		if rel, ok := strings.CutPrefix(hdr.Name, prefix); ok && hdr.Typeflag == tar.TypeReg {
			if c, ok := t.Change[rel]; ok {
				body, hdr.Size = []byte(c), int64(len(c))
				delete(pending, rel)
			}
			if slices.Contains(t.Chmod, rel) {
				hdr.Mode ^= 0o111
				delete(pending, rel)
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(body); err != nil {
			return nil, err
		}
	}
	if len(pending) > 0 {
		return nil, fmt.Errorf("no such files in the archive: %q", slices.Sorted(maps.Keys(pending)))
	}
	for _, p := range slices.Sorted(maps.Keys(t.Add)) {
		c := t.Add[p]
		if err := tw.WriteHeader(&tar.Header{Name: prefix + p, Mode: 0o644, Size: int64(len(c)), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := io.WriteString(tw, c); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
