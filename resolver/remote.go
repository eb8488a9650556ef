package resolver

import (
	"cmp"
	"context"
	"path/filepath"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/marketplace"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// resolveRemote pins a repository source to a commit, makes sure the
// folder it names is in the store, and offers the plugin there — or, when
// the folder is a marketplace, every plugin it lists.
func (s *resolve) resolveRemote(ctx context.Context, req Request) (*Fetched, error) {
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
	// The registry records a branch-tracking source in the user's own
	// form; a tree URL's REF and PATH as split, unless they were never
	// told apart (then as the user wrote them).
	f := &Fetched{Source: src.Bare(), Kind: KindGitHub, Repo: src.Key(), Ref: src.Ref, Subdir: src.Subdir}
	if req.Source.NeedsSplit() {
		f.Source = req.Source
	}
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
	f.Commit, f.Unchecked = pin.SHA, pin.Unchecked
	defer markUnchecked(f)
	f.Ref = cmp.Or(f.Ref, host.HeadRef)
	// A folder of a repository is fetched alone; a repository's root is
	// fetched whole, since it may be a marketplace whose entries live in it.
	// A repository over the budget as a whole may still hold a marketplace
	// whose plugins fit (SPEC §8: budgets count what is stored): then only
	// its manifest folders are stored, and each entry's folder on its own.
	if src.Subdir != "" {
		// A folder is a plugin's, likely: its record is looked up while
		// it is fetched. A root may be a marketplace, whose own tree is
		// not installed: it is looked up only once it is known not to be.
		s.expect(ctx, src, pin.SHA, src.Subdir)
	}
	var res *fetchResult
	if src.Subdir == "" {
		res = s.partialMarketplace(ctx, repo, pin.SHA, verify)
	}
	if res == nil {
		res, err = s.locate(ctx, repo, pin.SHA, []string{src.Subdir}, verify, false)
		if err != nil && src.Subdir == "" && ownContent(err) {
			res = s.marketplaceOnly(ctx, repo, pin.SHA, verify)
		}
		if res == nil {
			return nil, err
		}
	}
	f.Snapshots, f.Transport, f.Verified = res.snapshots, res.transport, res.proof
	f.Warnings = append(f.Warnings, res.warnings...)
	loc := res.dirs[src.Subdir]
	if err := s.checkFolder(ctx, repo, pin.SHA, src.Subdir, loc); err != nil {
		return nil, err
	}
	if isMarketplace(loc.dir, req) {
		if src.Subdir != "" {
			// A marketplace in a folder: its relative entries may reach
			// anywhere in that folder, so take the whole tree — unless the
			// tree is over the budget: then its entries are fetched folder
			// by folder, as for a marketplace at the root.
			whole, err := s.locate(ctx, repo, pin.SHA, []string{""}, false, false)
			switch {
			case err == nil:
				f.Snapshots = whole.snapshots
				loc = located{snapshot: whole.dirs[""].snapshot, dir: filepath.Join(whole.dirs[""].dir, filepath.FromSlash(src.Subdir))}
			case !ownContent(err):
				return nil, err
			}
		}
		f.Kind = KindMarketplace
		return s.resolveMarketplace(ctx, req, f, site{dir: loc.dir, repo: repo, sha: pin.SHA, base: src.Subdir})
	}
	digest, err := s.folderDigest(ctx, src.Key(), pin.SHA, src.Subdir, loc)
	if err != nil {
		return nil, err
	}
	if err := s.checkLog(ctx, src, pin.SHA, src.Subdir, digest, loc.snapshot); err != nil {
		return nil, err
	}
	f.Candidates = []Candidate{{
		Source: f.Source, Subdir: src.RecordedSubdir(src.Subdir), Commit: pin.SHA, Dir: loc.dir, Digest: digest,
		Transport: f.Transport, Submodules: plugind.SubmodulesOf(res.submodules, src.Subdir),
	}}
	return f, nil
}

// marketplaceFolders hold the marketplace documents.
var marketplaceFolders = marketplace.Folders()

// marketplaceOnly stores just the marketplace folders of a repository that
// is over the budget as a whole, and returns them as the root ("") of the
// one snapshot holding them, when that root holds a marketplace; nil when
// it does not (the budget error stands) or they cannot be fetched.
func (s *resolve) marketplaceOnly(ctx context.Context, repo host.Repo, sha string, verify bool) *fetchResult {
	res, err := s.locate(ctx, repo, sha, marketplaceFolders, verify, false)
	if err != nil {
		return nil
	}
	loc := res.dirs[marketplaceFolders[0]]
	root, err := s.cfg.Store.Path(loc.snapshot)
	if err != nil || !marketplace.Has(root) {
		return nil
	}
	res.dirs = map[string]located{"": {snapshot: loc.snapshot, dir: root}}
	return res
}

// partialMarketplace finds the marketplace folders marketplaceOnly stored
// for repo at sha, when the whole tree is not stored: a re-plan (warm or
// offline) does not try the whole tree again to learn it is too big.
func (s *resolve) partialMarketplace(ctx context.Context, repo host.Repo, sha string, verify bool) *fetchResult {
	at := cache.RepoAt{Remote: repo.Source().Key(), SHA: sha}
	if full, ok := s.cache.Whole(ctx, at); ok && s.cfg.Store.Has(full) {
		return nil
	}
	if d, ok := s.cache.Holding(ctx, at, marketplaceFolders[0]); !ok || !s.cfg.Store.Has(d) {
		return nil
	}
	return s.marketplaceOnly(ctx, repo, sha, verify)
}

// split separates a tree URL's REF from its PATH against the refs the
// remote advertises (offline: the refs this cache has seen). SPEC §5: only
// when the refs cannot be listed, the first segment is the ref.
func (s *resolve) split(ctx context.Context, repo host.Repo, src source.Source) (source.Source, error) {
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
func (s *resolve) pin(ctx context.Context, repo host.Repo, ref string) (host.Pin, bool, error) {
	if source.IsSHA(ref) {
		return host.Pin{SHA: ref}, true, nil
	}
	pin, err := repo.Resolve(ctx, ref, nil)
	if err != nil {
		return host.Pin{}, false, err
	}
	return pin, false, nil
}

// markUnchecked passes a source's unchecked pin on to what it offers: a
// marketplace read at a commit the network could not confirm may list
// other pins now, for every entry.
func markUnchecked(f *Fetched) {
	if f.Unchecked == "" {
		return
	}
	for i := range f.Candidates {
		if f.Candidates[i].Unchecked == "" {
			f.Candidates[i].Unchecked = f.Unchecked
		}
	}
}
