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
	"reasonix.io/plugind/tarball"
)

func (s *Sources) resolveLocal(ctx context.Context, req Request) (*Fetched, error) {
	given := req.Source.Path
	abs, err := filepath.Abs(given)
	if err != nil {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "source %q: %w", given, err)
	}
	info, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, plugind.Errorf(plugind.CodeNotFound, "source %q: no such file or directory%s", given, notFoundHint(given))
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

var (
	ownerRepoRE   = plugind.LazyRegexp(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)
	githubPathRE  = plugind.LazyRegexp(`^(?:www\.)?github\.com/([A-Za-z0-9-]+/[A-Za-z0-9._-]+?)(?:\.git)?/?$`)
	otherRemoteRE = plugind.LazyRegexp(`^([a-z0-9.-]+\.[a-z]{2,})/(.+?)(?:\.git)?/?$`)
)

// notFoundHint suggests the remote form a missing "local path" most likely
// meant — never guessed, only suggested.
func notFoundHint(p string) string {
	switch {
	case githubPathRE.MatchString(p):
		return fmt.Sprintf("; did you mean git:github.com/%s?", githubPathRE.FindStringSubmatch(p)[1])
	case ownerRepoRE.MatchString(p):
		return fmt.Sprintf("; did you mean git:github.com/%s?", strings.TrimSuffix(p, ".git"))
	case otherRemoteRE.MatchString(p):
		m := otherRemoteRE.FindStringSubmatch(p)
		return fmt.Sprintf("; did you mean https://%s/%s.git?", m[1], m[2])
	}
	return " (sources are a local folder, a .zip, git:github.com/OWNER/REPO, https://github.com/OWNER/REPO[/tree/REF/PATH], https://HOST/PATH.git[#REF] or NAME@MARKET)"
}

func (s *Sources) resolveDir(ctx context.Context, req Request, dir string) (*Fetched, error) {
	f := &Fetched{Source: dir, Kind: KindLocal}
	if isMarketplace(dir, req) {
		return s.resolveLocalMarketplace(ctx, req, dir)
	}
	if _, _, err := manifest.Detect(dir); err != nil {
		// A folder without a manifest is a Claude plugin by convention when
		// the user names it (update does, for a marketplace entry that had
		// none); the installer reads it under that name or refuses it.
		if !errors.Is(err, manifest.ErrNoManifest) || req.Name == "" {
			return nil, err
		}
	}
	f.Candidates = []Candidate{{Source: dir, Dir: dir, Link: req.Link}}
	return f, nil
}

// resolveZip extracts an archive (such as one made by export) into the store
// and offers the snapshot. A zip is content, not a place: it cannot be linked.
func (s *Sources) resolveZip(ctx context.Context, req Request, zipPath string) (*Fetched, error) {
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
		Source: zipPath, Kind: KindZip, Snapshots: []string{digest},
		Candidates: []Candidate{{Source: zipPath, Dir: dir}},
	}, nil
}

func singleChildDir(dir string) (string, bool) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 || !ents[0].IsDir() {
		return "", false
	}
	return filepath.Join(dir, ents[0].Name()), true
}
