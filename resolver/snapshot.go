package resolver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/tarball"
)

// Budgets count what is stored and installed (SPEC §8): a plugin folder of a
// repository far larger than the budget is fetched alone, never the rest.

// located is a folder of a repository's commit, on disk in the store.
type located struct {
	snapshot string // store digest of the snapshot holding it
	dir      string // the folder on disk
	// tree lists the snapshot's files as the fetch that just stored it
	// hashed them (nil otherwise): folder digests come from it instead of
	// reading the folder back.
	tree []plugind.File
}

// fetchResult is what locate did for one (repository, commit).
type fetchResult struct {
	dirs map[string]located // by requested path ("" = the whole tree)
	// refused are requested folders whose own content was refused (or
	// whose submodule could not be fetched) while the others were fetched:
	// the error is theirs alone.
	refused   map[string]error
	snapshots []string
	transport string
	// proof says how this fetch proved the content the commit's
	// (host.Fetched.Proof); "" when nothing was fetched.
	proof    string
	bytes    int64
	warnings []string
	// submodules are those of the tree at the commit that this Resolve
	// knows of (fetched now, or recorded when the tree was stored).
	submodules []plugind.Submodule
}

// locate makes sure every folder in paths of repo at sha is in the store
// ("" meaning the whole tree), fetching what is missing at most once per
// process however many callers ask, and returns where each is. verify asks
// that sha be proven reachable from a branch or tag (a pin that came from
// the user or a marketplace, not from resolving a ref); concurrent, that
// the caller runs several at once (host.FetchOptions.Concurrent).
func (s *resolve) locate(ctx context.Context, repo host.Repo, sha string, paths []string, verify, concurrent bool) (*fetchResult, error) {
	key := repo.Source().Key()
	at := cache.RepoAt{Remote: key, SHA: sha}
	res := &fetchResult{dirs: map[string]located{}, transport: "store"}
	var missing, damaged []string
	// roots holds each snapshot's folder once looked up (one lstat per
	// snapshot, not one per entry folder and again per entry).
	roots := map[string]string{}
	stored := func(d string) bool {
		if _, ok := roots[d]; ok {
			return true
		}
		if root, err := s.cfg.Store.Path(d); err == nil {
			roots[d] = root
			return true
		}
		if s.cfg.Store.Quarantined(d) {
			damaged = append(damaged, d)
		}
		return false // evicted (gc) or quarantined since
	}
	full, haveFull := s.cache.Whole(ctx, at)
	haveFull = haveFull && stored(full)
	for _, p := range paths {
		switch d, ok := s.cache.Holding(ctx, at, p); {
		case haveFull:
			res.dirs[p] = located{snapshot: full}
		case p != "" && ok && stored(d):
			res.dirs[p] = located{snapshot: d}
		default:
			missing = append(missing, p)
		}
	}
	s.cache.Count(ctx, cache.KindSnapshot, len(missing) == 0)
	if len(missing) == 0 && verify {
		if err := repo.Reachable(ctx, sha, ""); err != nil {
			return nil, err
		}
	}
	if len(missing) > 0 {
		got, err := s.fetchOnce(ctx, repo, sha, missing, verify, concurrent)
		switch {
		case err == nil:
		case len(damaged) > 0 && plugind.CodeOf(err) == plugind.CodeOfflineMiss:
			return nil, plugind.Errorf(plugind.CodeOfflineMiss, "offline: the stored snapshot %s of %s at %s failed verification and was quarantined; plan online to fetch it again: %w", damaged[0], key, host.Short(sha), host.ErrOffline)
		case len(res.dirs) > 0 && ownContent(err):
			// The folders in the store stand; the refusal is the others'.
			got = fetched{transport: "store", refused: map[string]error{}}
			for _, p := range missing {
				got.refused[p] = err
			}
		default:
			return nil, err
		}
		// got.refused names only folders of missing (and is only read).
		res.transport, res.proof, res.bytes, res.warnings, res.refused = got.transport, got.proof, got.bytes, got.warnings, got.refused
		for _, p := range missing {
			if _, refused := got.refused[p]; !refused {
				res.dirs[p] = located{snapshot: got.digest, tree: got.tree}
			}
		}
		res.submodules = got.submodules
	}
	res.submodules = cache.MergeSubmodules(res.submodules, s.cache.Submodules(ctx, at))
	seen := map[string]bool{}
	for p, loc := range res.dirs {
		root, ok := roots[loc.snapshot]
		if !ok { // fetched just now
			var err error
			if root, err = s.cfg.Store.Path(loc.snapshot); err != nil {
				return nil, err
			}
			roots[loc.snapshot] = root
		}
		if !seen[loc.snapshot] {
			seen[loc.snapshot] = true
			res.snapshots = append(res.snapshots, loc.snapshot)
			s.cache.Touch(loc.snapshot, s.cfg.Now())
		}
		loc.dir = filepath.Join(root, filepath.FromSlash(p))
		res.dirs[p] = loc
	}
	sort.Strings(res.snapshots)
	return res, nil
}

type fetched struct {
	digest     string
	tree       []plugind.File // nil when the transport did not hash
	transport  string
	proof      string
	bytes      int64
	warnings   []string
	refused    map[string]error // requested folders left out, and why
	submodules []plugind.Submodule
}

// fetchOnce fetches paths of repo at sha into the store; concurrent callers
// asking for the same thing share one fetch.
func (s *resolve) fetchOnce(ctx context.Context, repo host.Repo, sha string, paths []string, verify, concurrent bool) (fetched, error) {
	sorted := slices.Sorted(slices.Values(paths))
	key := repo.Source().Key()
	v, err, _ := s.flight.Do(key+"@"+sha+"\x00"+strings.Join(sorted, "\x00"), func() (any, error) {
		return s.fetch(ctx, repo, sha, sorted, verify, concurrent)
	})
	if err != nil {
		return fetched{}, err
	}
	return v.(fetched), nil
}

// maxNeedPasses bounds the passes one fetch of some folders makes again
// with what links in them need from outside them (tarball.NeedsPathsError):
// a pass gathers everything its kept links need, so one is the rule.
// Besides, a pass is made again without each folder refused on its own
// account.
const maxNeedPasses = 3

// fetch brings repo at sha into the store: only the folders in paths, or
// everything when one of them is "". When several folders are fetched and
// one of them is refused for what it holds (or a submodule of it cannot be
// fetched), the others are fetched without it and the refusal is that
// folder's alone (fetched.refused): a bad link in one plugin does not
// refuse the plugins beside it.
func (s *resolve) fetch(ctx context.Context, repo host.Repo, sha string, paths []string, verify, concurrent bool) (fetched, error) {
	key := repo.Source().Key()
	keep := paths
	if slices.Contains(paths, "") {
		keep = nil
	}
	wanted := append([]string(nil), keep...) // requested and not refused
	refused := map[string]error{}
	var got *host.Fetched
	var digest string
	var err error
	for needPasses := 0; ; {
		got, digest, err = s.fetchInto(ctx, repo, sha, keep, verify, concurrent)
		if err == nil || keep == nil {
			break
		}
		if need, ok := errors.AsType[*tarball.NeedsPathsError](err); ok {
			if needPasses++; needPasses > maxNeedPasses {
				break
			}
			keep = union(keep, need.Paths)
			continue
		}
		p, ok := host.FolderOf(err, wanted)
		if !ok || len(wanted) == 1 {
			break
		}
		refused[p] = err
		wanted = slices.DeleteFunc(wanted, func(w string) bool { return w == p })
		keep = slices.DeleteFunc(keep, func(w string) bool { return w == p })
	}
	if err != nil {
		return fetched{}, err
	}
	at := cache.RepoAt{Remote: key, SHA: sha}
	if keep == nil {
		s.cache.PutWhole(at, digest)
	} else {
		for _, p := range wanted {
			s.cache.PutHolding(at, p, digest)
		}
	}
	s.cache.PutSubmodules(at, got.Submodules)
	return fetched{digest: digest, tree: got.Tree, transport: got.Transport, proof: got.Proof, bytes: got.Bytes, warnings: got.Warnings,
		refused: refused, submodules: got.Submodules}, nil
}

// ownContent reports an error about the content of the folders fetched
// (over the budget, unsafe, or a submodule of theirs that could not be
// fetched), which says nothing about other folders of the same commit:
// when a whole tree is refused so and it is a marketplace, its plugins are
// fetched folder by folder, and what spoils the whole need not spoil them.
func ownContent(err error) bool {
	_, ok := tarball.PathOf(err)
	return ok || host.RefusedContent(err)
}

// union is a with the paths of b it lacks.
func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, p := range b {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func (s *resolve) fetchInto(ctx context.Context, repo host.Repo, sha string, keep []string, verify, concurrent bool) (*host.Fetched, string, error) {
	st, err := s.cfg.Store.Stage()
	if err != nil {
		return nil, "", err
	}
	w, key := host.WatcherFrom(ctx), repo.Source().Key()
	wrote := func(n int64) { w.Wrote(key, n) }
	got, err := repo.Fetch(ctx, sha, st.Dir, host.FetchOptions{Paths: keep, Budget: s.cfg.Budget, Verify: verify, Hash: true, Concurrent: concurrent, Progress: wrote, Writes: s.writes})
	if err != nil {
		_ = st.Discard()
		return nil, "", err
	}
	var digest string
	if got.Tree != nil {
		// Hashed as it was written into our private staging area: the
		// store takes the list instead of reading the tree back.
		digest, err = s.cfg.Store.CommitHashed(ctx, st, got.Tree, got.Dirs)
	} else {
		digest, err = s.cfg.Store.Commit(ctx, st)
	}
	if err != nil {
		return nil, "", fmt.Errorf("store %s@%s: %w", repo.Source().Key(), host.Short(sha), err)
	}
	return got, digest, nil
}

// folderDigest is the tree digest of folder p of repo at sha, on disk at
// dir inside a read-only, content-addressed snapshot: it never changes, so
// it is cached and a warm re-plan hashes nothing. tree, when not nil, is
// the snapshot's file list as the fetch hashed it: the folder's digest is
// computed from it without reading the folder.
func (s *resolve) folderDigest(ctx context.Context, key, sha, p string, loc located) (string, error) {
	at := cache.RepoAt{Remote: key, SHA: sha}
	if p == "" {
		// The snapshot of a whole tree is named by that tree's digest.
		if full, ok := s.cache.Whole(ctx, at); ok && full == loc.snapshot {
			return full, nil
		}
	}
	if d, ok := s.cache.Folder(ctx, at, p); ok {
		return d, nil
	}
	var d string
	if loc.tree != nil {
		d = plugind.DigestBelow(loc.tree, p)
	} else {
		var err error
		if d, _, err = plugind.TreeDigest(loc.dir, s.cfg.Budget); err != nil {
			return "", err
		}
	}
	s.cache.PutFolder(at, p, d)
	return d, nil
}

// checkFolder makes sure a located folder exists and is a folder,
// remembering a missing one so a re-plan does not fetch again to find out.
func (s *resolve) checkFolder(ctx context.Context, repo host.Repo, sha, p string, loc located) error {
	if p == "" {
		return nil
	}
	info, err := os.Stat(loc.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = plugind.Errorf(plugind.CodeNotFound, "%s at %s: folder %q: %w", repo.Source().Key(), host.Short(sha), p, host.ErrPathNotFound)
		if mp, ok := repo.(missingPaths); ok {
			mp.RememberMissingPath(ctx, sha, p, err)
		}
		return err
	case err != nil:
		return plugind.Errorf(plugind.CodeSourceUnreadable, "%s at %s: folder %q: %w", repo.Source().Key(), host.Short(sha), p, err)
	case !info.IsDir():
		return plugind.Errorf(plugind.CodeInvalidSource, "%s at %s: %q is a file, not a folder", repo.Source().Key(), host.Short(sha), p)
	}
	return nil
}
