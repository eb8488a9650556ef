package resolver

import (
	"context"
	"path/filepath"

	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/resolver/source"
)

// resolveRemote pins a repository source to a commit, makes sure the
// folder it names is in the store, and offers the plugin there — or, when
// the folder is a marketplace, every plugin it lists.
func (s *Sources) resolveRemote(ctx context.Context, req Request) (*Fetched, error) {
	src := req.Source
	if req.Link {
		return nil, plugind.Errorf(plugind.CodeNotPinnable, "%s is remote: --link needs a local folder", src)
	}
	repo, err := s.repo(src, req)
	if err != nil {
		return nil, err
	}
	src, err = s.split(ctx, repo, src)
	if err != nil {
		return nil, err
	}
	f := &Fetched{Source: canonical(req.Source, src), Kind: KindGitHub, Repo: src.Key(), Ref: src.Ref, Subdir: src.Subdir}
	if src.Kind == source.Git {
		f.Kind = KindGit
	}
	pin, verify, err := s.pin(ctx, repo, src.Ref)
	if err != nil {
		return nil, err
	}
	if pin.Warning != "" {
		f.Warnings = append(f.Warnings, pin.Warning)
	}
	f.Commit = pin.SHA
	if f.Ref == "" {
		f.Ref = host.HeadRef
	}
	// A folder of a repository is fetched alone; a repository's root is
	// fetched whole, since it may be a marketplace whose entries live in it.
	res, err := s.locate(ctx, repo, pin.SHA, []string{src.Subdir}, verify)
	if err != nil {
		return nil, err
	}
	f.Snapshots, f.Transport = res.snapshots, res.transport
	f.Warnings = append(f.Warnings, res.warnings...)
	loc := res.dirs[src.Subdir]
	if err := s.checkFolder(ctx, repo, pin.SHA, src.Subdir, loc); err != nil {
		return nil, err
	}
	if _, _, err := manifest.Detect(loc.dir); err != nil && manifest.HasMarketplace(loc.dir) {
		if src.Subdir != "" {
			// A marketplace in a folder: its relative entries may reach
			// anywhere in that folder, so take the whole tree.
			res, err = s.locate(ctx, repo, pin.SHA, []string{""}, false)
			if err != nil {
				return nil, err
			}
			f.Snapshots = res.snapshots
			loc = located{snapshot: res.dirs[""].snapshot, dir: subdirOf(res.dirs[""].dir, src.Subdir)}
		}
		f.Kind = KindMarketplace
		return s.resolveMarketplace(ctx, req, f, site{dir: loc.dir, repo: repo, sha: pin.SHA, base: src.Subdir})
	}
	digest, err := s.folderDigest(ctx, src.Key(), pin.SHA, src.Subdir, loc)
	if err != nil {
		return nil, err
	}
	f.Candidates = []Candidate{{
		Source: f.Source, Subdir: src.RecordedSubdir(src.Subdir), Commit: pin.SHA, Dir: loc.dir, Digest: digest,
	}}
	return f, nil
}

// canonical is what the registry records for a single-plugin remote
// source: the user's own form, normalized, with a tree URL's REF and PATH
// as split.
func canonical(orig, split source.Source) string {
	if orig.NeedsSplit() {
		return orig.String()
	}
	return split.String()
}

// split separates a tree URL's REF from its PATH against the refs the
// remote advertises (offline: the refs this cache has seen). SPEC §5: only
// when the refs cannot be listed, the first segment is the ref.
func (s *Sources) split(ctx context.Context, repo host.Repo, src source.Source) (source.Source, error) {
	if !src.NeedsSplit() {
		return src, nil
	}
	refs, err := repo.Refs(ctx)
	if err != nil {
		if host.IsNotFound(err) {
			return source.Source{}, err
		}
		s.cfg.Log.Warn("cannot list refs; taking the first segment as the ref", "repo", src.Key(), "err", err)
		return src.Split(nil), nil
	}
	return src.Split(refs.Names()), nil
}

// pin resolves ref to a commit. A commit given by the source itself must be
// proven to be on a branch or tag (verify); a ref's head is by definition.
func (s *Sources) pin(ctx context.Context, repo host.Repo, ref string) (host.Pin, bool, error) {
	if source.IsSHA(ref) {
		return host.Pin{SHA: ref}, true, nil
	}
	pin, err := repo.Resolve(ctx, ref, nil)
	if err != nil {
		return host.Pin{}, false, err
	}
	return pin, false, nil
}

func subdirOf(root, p string) string {
	return filepath.Join(root, filepath.FromSlash(p))
}
