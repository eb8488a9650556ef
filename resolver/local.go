package resolver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/tarball"
)

func (s *resolve) resolveLocal(ctx context.Context, req Request) (*Fetched, error) {
	given := req.Source.Path
	abs, err := filepath.Abs(given)
	if err != nil {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "source %q: %w", given, err)
	}
	info, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, plugind.Errorf(plugind.CodeNotFound, "source %q: no such file or directory%s", given, notFoundHint(given, abs))
	}
	if err != nil {
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "source %q: %w", given, err)
	}
	switch {
	case info.IsDir():
		return s.resolveDir(ctx, req, abs)
	case info.Mode().IsRegular() && strings.EqualFold(filepath.Ext(abs), ".zip"):
		return s.resolveZip(ctx, req, abs)
	default:
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "source %q is neither a folder nor a .zip archive", given)
	}
}

// notFoundHint says what a missing "local path" most likely meant: when
// the path's folder exists here, it is a local path with a typo in its
// last part, and that is what is said (examples/nonexistent is not
// github.com/examples); otherwise the remote form it looks like
// (source.SuggestHint) — never guessed, only suggested.
func notFoundHint(p, abs string) string {
	parent := filepath.Dir(abs)
	if info, err := os.Stat(parent); err == nil && info.IsDir() && strings.ContainsAny(p, `/\`) {
		dir := filepath.Dir(filepath.Clean(p))
		if dir == "." {
			return fmt.Sprintf(": this folder holds no %q", filepath.Base(abs))
		}
		return fmt.Sprintf(": the folder %s exists, but holds no %q", dir, filepath.Base(abs))
	}
	return source.SuggestHint(p)
}

func (s *resolve) resolveDir(ctx context.Context, req Request, dir string) (*Fetched, error) {
	f := &Fetched{Source: source.Local(dir), Kind: KindLocal}
	if isMarketplace(dir, req) {
		return s.resolveMarketplace(ctx, req, &Fetched{Source: f.Source, Kind: KindMarketplace}, site{dir: dir})
	}
	if _, _, err := manifest.Detect(dir); err != nil {
		// A folder without a manifest is a Claude plugin by convention when
		// the user names it (update does, for a marketplace entry that had
		// none); the installer reads it under that name or refuses it.
		if !errors.Is(err, manifest.ErrNoManifest) || req.Name == "" {
			return nil, err
		}
	}
	f.Candidates = []Candidate{{Source: f.Source, Dir: dir, Link: req.Link}}
	return f, nil
}

// resolveZip extracts an archive (such as one made by export) into the store
// and offers the snapshot. A zip is content, not a place: it cannot be linked.
func (s *resolve) resolveZip(ctx context.Context, req Request, zipPath string) (*Fetched, error) {
	if req.Link {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s is a zip archive: --link needs a folder", zipPath)
	}
	st, err := s.cfg.Store.Stage()
	if err != nil {
		return nil, err
	}
	dest := st.Path("tree")
	if _, err := tarball.ExtractZipFile(ctx, zipPath, dest, tarball.Options{Budget: s.cfg.Budget}); err != nil {
		_ = st.Discard()
		return nil, fmt.Errorf("extract %s: %w", zipPath, err)
	}
	digest, err := s.cfg.Store.CommitDir(ctx, st, dest)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", zipPath, err)
	}
	root, err := s.cfg.Store.Path(digest)
	if err != nil {
		return nil, err
	}
	// Export writes the package at the archive root; accept one wrapping
	// folder too, as zips made by hand often have.
	dir := root
	if _, _, err := manifest.Detect(root); err != nil {
		if only, ok := singleChildDir(root); ok {
			if _, _, err2 := manifest.Detect(only); err2 == nil {
				dir = only
			}
		}
	}
	if _, _, err := manifest.Detect(dir); err != nil {
		return nil, fmt.Errorf("zip %s: %w", zipPath, err)
	}
	return &Fetched{
		Source: source.Local(zipPath), Kind: KindZip, Snapshots: []string{digest},
		Candidates: []Candidate{{Source: source.Local(zipPath), Dir: dir}},
	}, nil
}

func singleChildDir(dir string) (string, bool) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 || !ents[0].IsDir() {
		return "", false
	}
	return filepath.Join(dir, ents[0].Name()), true
}
