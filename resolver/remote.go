package resolver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/resolver/source"
)

// resolveRemote pins a GitHub source to a commit, makes sure its tree is in
// the store (fetching it at most once per process per commit), and offers
// the plugin at its path.
func (s *Sources) resolveRemote(ctx context.Context, req Request) (*Fetched, error) {
	r, err := source.ParseRemote(req.Source)
	if err != nil {
		return nil, err
	}
	if req.Link {
		return nil, plugind.Errorf(plugind.CodeNotPinnable, "%s is remote: --link needs a local folder", req.Source)
	}
	s.splitTree(ctx, r, req.Offline)
	rr, err := s.resolveRef(ctx, r, r.Ref, req.Offline)
	if err != nil {
		return nil, err
	}
	snap, err := s.snapshot(ctx, r, rr.SHA, fetchMode{offline: req.Offline})
	if err != nil {
		return nil, err
	}
	f := &Fetched{
		Source: canonicalSource(req.Source, r), Kind: "github", Repo: r.FullName(),
		Ref: r.Ref, Commit: rr.SHA, Subdir: r.Path, Snapshots: []string{snap.digest},
	}
	if rr.Warning != "" {
		f.Warnings = append(f.Warnings, rr.Warning)
	}
	f.Warnings = append(f.Warnings, snap.warnings...)
	if f.Ref == "" {
		f.Ref = headRef
	}
	dir, err := subdir(snap.root, r.Path)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", remoteKey(r), short(rr.SHA), err)
	}
	if _, _, err := manifest.Detect(dir); err != nil && manifest.HasMarketplace(dir) {
		f.Kind = "marketplace"
		return s.resolveMarketplace(ctx, req, f, site{dir: dir, remote: r, sha: rr.SHA, base: r.Path})
	}
	digest, err := s.subdirDigest(ctx, r, rr.SHA, r.Path, dir)
	if err != nil {
		return nil, err
	}
	f.Candidates = []Candidate{{Source: f.Source, Commit: rr.SHA, Dir: dir, Digest: digest}}
	return f, nil
}

// canonicalSource is what the registry records for a single-plugin remote
// source: the user's form, normalized. git: and plain repository sources
// track the default branch; tree URLs keep their ref (a SHA stays pinned).
func canonicalSource(src string, r *source.Remote) string {
	if strings.HasPrefix(src, "git:") {
		return "git:github.com/" + r.FullName()
	}
	return r.String()
}

// subdir resolves a path inside a snapshot, refusing anything that is not
// a folder strictly inside it.
func subdir(root, p string) (string, error) {
	if p == "" {
		return root, nil
	}
	clean, err := plugind.LocalPath(p)
	if err != nil {
		return "", plugind.Errorf(plugind.CodeInvalidSource, "path %q: %w", p, err)
	}
	dir := filepath.Join(root, filepath.FromSlash(clean))
	info, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", plugind.Errorf(plugind.CodeNotFound, "path %q does not exist", p)
	}
	if err != nil {
		return "", plugind.Errorf(plugind.CodeSourceUnreadable, "path %q: %w", p, err)
	}
	if !info.IsDir() {
		return "", plugind.Errorf(plugind.CodeInvalidSource, "path %q is not a folder", p)
	}
	return dir, nil
}

// fetchMode says how a snapshot may be obtained.
type fetchMode struct {
	offline bool // from the store only
	gitOnly bool // git-subdir sources: no tarball fallback (SPEC §6)
}

type snapshotRef struct {
	digest   string
	root     string
	warnings []string
	bytes    int64 // content fetched for it (only counted when progress shows)
}

// snapshot returns the store snapshot of remote@sha, fetching it only when
// neither the cache nor the store has it. Concurrent callers in this process
// share one fetch; across processes the store's per-digest lock keeps the
// commit safe.
func (s *Sources) snapshot(ctx context.Context, r *source.Remote, sha string, mode fetchMode) (snapshotRef, error) {
	key := remoteKey(r)
	if d, ok := s.cachedSnapshot(ctx, key, sha, ""); ok {
		s.count(ctx, cache.KindSnapshot, true)
		root, _ := s.cfg.Store.Path(d)
		s.touch(ctx, d)
		return snapshotRef{digest: d, root: root}, nil
	}
	if mode.offline {
		return snapshotRef{}, plugind.Errorf(plugind.CodeOfflineMiss, "offline: the content of %s at %s was never fetched, so it is not in the store", key, sha)
	}
	s.count(ctx, cache.KindSnapshot, false)
	v, err, _ := s.flight.Do(key+"@"+sha, func() (any, error) {
		if d, ok := s.cachedSnapshot(ctx, key, sha, ""); ok {
			return snapshotRef{digest: d}, nil
		}
		return s.fetch(ctx, r, sha, mode.gitOnly)
	})
	if err != nil {
		return snapshotRef{}, err
	}
	snap := v.(snapshotRef)
	snap.root, err = s.cfg.Store.Path(snap.digest)
	if err != nil {
		return snapshotRef{}, err
	}
	s.touch(ctx, snap.digest)
	return snap, nil
}

func (s *Sources) cachedSnapshot(ctx context.Context, key, sha, sub string) (string, bool) {
	if s.cfg.Cache == nil {
		return "", false
	}
	d, ok, err := s.cfg.Cache.GetSnapshot(ctx, key, sha, sub)
	if err != nil || !ok {
		return "", false
	}
	if sub == "" && !s.cfg.Store.Has(d) {
		return "", false // evicted by gc
	}
	return d, true
}

func (s *Sources) touch(ctx context.Context, digest string) {
	if s.cfg.Cache != nil {
		_ = s.cfg.Cache.TouchSnapshot(ctx, digest, s.cfg.Now())
	}
}

// fetch brings remote@sha into the store: git first, the tarball fallback
// when git is off or fails.
func (s *Sources) fetch(ctx context.Context, r *source.Remote, sha string, gitOnly bool) (snapshotRef, error) {
	var warnings []string
	st, err := s.cfg.Store.Stage()
	if err != nil {
		return snapshotRef{}, err
	}
	dest := st.Path("tree")
	var gitErr error
	if s.cfg.GitOff {
		gitErr = errors.New("git is off (REASONIX_GIT=off)")
		if gitOnly {
			_ = st.Discard()
			return snapshotRef{}, plugind.Errorf(plugind.CodeNotPinnable, "%s: git-subdir sources need git, and git is off (REASONIX_GIT=off)", remoteKey(r))
		}
	} else {
		gitErr = s.fetchGit(ctx, r, sha, st.Path("scratch"), dest)
		if gitErr != nil {
			if c := plugind.CodeOf(gitErr); gitOnly || c == plugind.CodeBudgetExceeded || c == plugind.CodeUnsafeArchive || ctx.Err() != nil {
				_ = st.Discard()
				if gitOnly && c == "" {
					gitErr = plugind.Errorf(plugind.CodeSourceUnreadable, "git-subdir source %s at %s (no tarball fallback for git-subdir): %w", remoteKey(r), short(sha), gitErr)
				}
				return snapshotRef{}, gitErr
			}
			warnings = append(warnings, fmt.Sprintf("git fetch of %s failed (%v); used the tarball fallback", remoteKey(r), gitErr))
			s.cfg.Log.Warn("git fetch failed; using the tarball fallback", "repo", remoteKey(r), "err", gitErr)
			_ = os.RemoveAll(dest)
		}
	}
	_ = os.RemoveAll(st.Path("scratch"))
	if gitErr != nil {
		if err := s.fetchTarball(ctx, r, sha, dest); err != nil {
			_ = st.Discard()
			return snapshotRef{}, err
		}
	}
	var size int64
	if s.cfg.Progress != nil {
		if t, err := plugind.ScanTree(dest, s.cfg.Budget); err == nil {
			size = t.Bytes
		}
	}
	digest, err := s.cfg.Store.CommitDir(ctx, st, dest)
	if err != nil {
		return snapshotRef{}, fmt.Errorf("store %s@%s: %w", remoteKey(r), short(sha), err)
	}
	if s.cfg.Cache != nil {
		_ = s.cfg.Cache.PutSnapshot(ctx, remoteKey(r), sha, "", digest)
	}
	return snapshotRef{digest: digest, warnings: warnings, bytes: size}, nil
}

// subdirDigest is the tree digest of a plugin folder inside a snapshot. The
// snapshot is read-only and content-addressed, so the digest is cached by
// (remote, sha, path) and a warm re-plan hashes nothing.
func (s *Sources) subdirDigest(ctx context.Context, r *source.Remote, sha, p, dir string) (string, error) {
	sub := path.Clean("/" + p)[1:]
	if d, ok := s.cachedSnapshot(ctx, remoteKey(r), sha, "/"+sub); ok {
		return d, nil
	}
	d, _, err := plugind.TreeDigest(dir, s.cfg.Budget)
	if err != nil {
		return "", err
	}
	if s.cfg.Cache != nil {
		_ = s.cfg.Cache.PutSnapshot(ctx, remoteKey(r), sha, "/"+sub, d)
	}
	return d, nil
}
