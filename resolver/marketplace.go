package resolver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/sync/errgroup"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/marketplace"
	"reasonix.io/plugind/resolver/source"
)

// maxMarketplaceDoc bounds the bytes read from one marketplace document; the
// largest in the corpus is well under 1 MiB.
const maxMarketplaceDoc = 8 << 20

// fetchParallelism bounds concurrent repository fetches of one bulk plan:
// enough to overlap network latency, few enough not to trip rate limits.
const fetchParallelism = 4

// site is where a marketplace document lives.
type site struct {
	dir    string         // the marketplace root on disk
	remote *source.Remote // nil for a local folder
	sha    string         // the marketplace's commit, when remote
	base   string         // dir's path inside the repository ("" for its root)
}

func (st site) label() string {
	if st.remote == nil {
		return st.dir
	}
	return remoteKey(st.remote) + "@" + short(st.sha)
}

// resolveLocalMarketplace resolves a local marketplace folder.
func (s *Sources) resolveLocalMarketplace(ctx context.Context, req Request, dir string) (*Fetched, error) {
	f := &Fetched{Source: dir, Kind: "marketplace"}
	return s.resolveMarketplace(ctx, req, f, site{dir: dir})
}

// entryPlan is one marketplace entry on its way to a Candidate.
type entryPlan struct {
	entry  marketplace.Entry
	cand   Candidate
	remote *source.Remote // the repository the entry's tree comes from
	ref    string         // to resolve when sha is "" ("" = default branch)
	sha    string
	path   string // the plugin's folder inside that repository
	git    bool   // git-subdir: git only, no tarball fallback
}

// repoAt identifies one fetch: a repository at a commit.
type repoAt struct{ repo, sha string }

// resolveMarketplace turns every entry of the marketplace at st (or the one
// --name selects) into a Candidate. Each (repository, commit) is fetched
// once, however many entries point into it, with bounded parallelism across
// repositories. A problem with one entry is that entry's, never the
// others'; with --name it is the operation's.
func (s *Sources) resolveMarketplace(ctx context.Context, req Request, f *Fetched, st site) (*Fetched, error) {
	if req.Link && st.remote != nil {
		return nil, plugind.Errorf(plugind.CodeNotPinnable, "%s is remote: --link needs a local folder", req.Source)
	}
	m, err := s.marketplaceDoc(ctx, st, req.AllowUnpinned)
	if err != nil {
		return nil, err
	}
	f.Warnings = append(f.Warnings, m.Warnings...)
	entries := m.Entries
	if req.Name != "" {
		e, err := m.Select(req.Name)
		if err != nil {
			return nil, err
		}
		entries = []marketplace.Entry{*e}
	}
	label := f.Source
	plans := make([]*entryPlan, 0, len(entries))
	for _, e := range entries {
		ep := s.classify(req, st, e)
		ep.cand.Marketplace = label
		if ep.cand.Err != nil && req.Name != "" {
			return nil, ep.cand.Err
		}
		plans = append(plans, ep)
	}

	bar := s.entryBar(len(plans))
	defer bar.Finish()
	ctx = context.WithValue(ctx, bulkProgressKey{}, true)
	if err := s.pinEntries(ctx, req, plans); err != nil {
		return nil, err
	}
	snaps, warnings, err := s.fetchEntries(ctx, req, plans, bar)
	if err != nil {
		return nil, err
	}
	f.Warnings = append(f.Warnings, warnings...)
	for _, ep := range plans {
		s.finishEntry(ctx, st, ep, snaps)
		if ep.cand.Err != nil && req.Name != "" {
			return nil, ep.cand.Err
		}
		f.Candidates = append(f.Candidates, ep.cand)
	}
	used := map[string]bool{}
	for _, d := range f.Snapshots {
		used[d] = true
	}
	for _, snap := range snaps {
		if snap.digest != "" && !used[snap.digest] {
			used[snap.digest] = true
			f.Snapshots = append(f.Snapshots, snap.digest)
		}
	}
	sort.Strings(f.Snapshots)
	return f, nil
}

// classify reads what an entry needs: nothing (a local relative folder), or
// a repository at a commit or ref.
func (s *Sources) classify(req Request, st site, e marketplace.Entry) *entryPlan {
	ep := &entryPlan{entry: e, cand: Candidate{Name: e.Name}}
	if err := e.Err(); err != nil {
		ep.cand.Err = err
		ep.cand.Skip = e.Status == marketplace.StatusSkipped
		return ep
	}
	switch e.Kind {
	case marketplace.KindRelative:
		if st.remote == nil {
			ep.cand.Link = req.Link
			return ep
		}
		ep.remote, ep.sha = st.remote, st.sha
		ep.path = joinSlash(st.base, e.Path)
	case marketplace.KindURL, marketplace.KindGitHub, marketplace.KindGitSubdir:
		if req.Link {
			ep.cand.Err = plugind.Errorf(plugind.CodeNotPinnable, "plugin %q comes from github.com/%s/%s: --link needs a local folder", e.Name, e.Owner, e.Repo)
			return ep
		}
		ep.remote = &source.Remote{Owner: e.Owner, Repo: e.Repo}
		ep.sha, ep.ref, ep.path = e.SHA, e.Ref, e.Path
		if e.Kind == marketplace.KindGitSubdir {
			ep.git = true
			if s.cfg.GitOff {
				ep.cand.Err = plugind.Errorf(plugind.CodeNotPinnable, "plugin %q is a git-subdir source (github.com/%s/%s), which needs git, and git is off (REASONIX_GIT=off)", e.Name, e.Owner, e.Repo)
				ep.cand.Skip = true
			}
		}
	default:
		ep.cand.Err = plugind.Errorf(plugind.CodeNotPinnable, "plugin %q: source kind %q is not supported", e.Name, e.Kind)
		ep.cand.Skip = true
	}
	return ep
}

// pinEntries resolves the ref of every entry that has no sha yet (git-subdir
// without sha, --allow-unpinned url/github): each (repository, ref) once.
func (s *Sources) pinEntries(ctx context.Context, req Request, plans []*entryPlan) error {
	type repoRef struct{ repo, ref string }
	want := map[repoRef]*source.Remote{}
	for _, ep := range plans {
		if ep.cand.Err == nil && ep.remote != nil && ep.sha == "" {
			want[repoRef{ep.remote.FullName(), ep.ref}] = ep.remote
		}
	}
	if len(want) == 0 {
		return nil
	}
	var mu sync.Mutex
	got := map[repoRef]resolvedRef{}
	errs := map[repoRef]error{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fetchParallelism)
	for k, r := range want {
		g.Go(func() error {
			rr, err := s.resolveRef(gctx, r, k.ref, req.Offline)
			mu.Lock()
			defer mu.Unlock()
			got[k], errs[k] = rr, err
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, ep := range plans {
		if ep.cand.Err != nil || ep.remote == nil || ep.sha != "" {
			continue
		}
		k := repoRef{ep.remote.FullName(), ep.ref}
		if err := errs[k]; err != nil {
			ep.cand.Err = fmt.Errorf("plugin %q: %w", ep.entry.Name, err)
			continue
		}
		ep.sha = got[k].SHA
		if w := got[k].Warning; w != "" {
			ep.cand.Warnings = append(ep.cand.Warnings, w)
		}
		if ep.entry.Unpinned {
			ep.cand.Warnings = append(ep.cand.Warnings, fmt.Sprintf("unpinned in the marketplace: %s of github.com/%s pinned at plan time to %s", describeRef(refOrHead(ep.ref)), ep.remote.FullName(), ep.sha))
		}
	}
	return nil
}

type fetchResult struct {
	snapshotRef
	err error
}

// fetchEntries brings every (repository, commit) the entries need into the
// store, each once, at most fetchParallelism at a time.
func (s *Sources) fetchEntries(ctx context.Context, req Request, plans []*entryPlan, bar *progressbar.ProgressBar) (map[repoAt]fetchResult, []string, error) {
	type job struct {
		remote  *source.Remote
		gitOnly bool
		entries int
	}
	jobs := map[repoAt]*job{}
	for _, ep := range plans {
		if ep.cand.Err != nil || ep.remote == nil {
			_ = bar.Add(1)
			continue
		}
		k := repoAt{ep.remote.FullName(), ep.sha}
		j, ok := jobs[k]
		if !ok {
			j = &job{remote: ep.remote, gitOnly: true}
			jobs[k] = j
		}
		// A tarball serves the same tree as git: the fallback is allowed as
		// soon as one entry that may use it needs this commit.
		j.gitOnly = j.gitOnly && ep.git
		j.entries++
	}
	keys := make([]repoAt, 0, len(jobs))
	for k := range jobs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].repo+keys[i].sha < keys[j].repo+keys[j].sha })
	results := make([]fetchResult, len(keys))
	var fetched, repos atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fetchParallelism)
	for i, k := range keys {
		j := jobs[k]
		g.Go(func() error {
			snap, err := s.snapshot(gctx, j.remote, k.sha, fetchMode{offline: req.Offline, gitOnly: j.gitOnly})
			results[i] = fetchResult{snap, err}
			if snap.bytes > 0 {
				bar.Describe(fmt.Sprintf("marketplace entries (%d repos, %s fetched)", repos.Add(1), plugind.HumanBytes(fetched.Add(snap.bytes))))
			}
			_ = bar.Add(j.entries)
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	out := make(map[repoAt]fetchResult, len(keys))
	var warnings []string
	for i, k := range keys {
		out[k] = results[i]
		warnings = append(warnings, results[i].warnings...)
	}
	return out, warnings, nil
}

// finishEntry locates an entry's plugin folder and its digest.
func (s *Sources) finishEntry(ctx context.Context, st site, ep *entryPlan, snaps map[repoAt]fetchResult) {
	if ep.cand.Err != nil {
		return
	}
	e := &ep.entry
	if ep.remote == nil { // a relative entry of a local marketplace
		dir, err := localEntryDir(st.dir, e.Path)
		if err != nil {
			ep.cand.Err = fmt.Errorf("plugin %q: %w", e.Name, err)
			return
		}
		ep.cand.Dir, ep.cand.Source = dir, dir
		return
	}
	res := snaps[repoAt{ep.remote.FullName(), ep.sha}]
	if res.err != nil {
		ep.cand.Err = fmt.Errorf("plugin %q: %w", e.Name, res.err)
		return
	}
	dir, err := subdir(res.root, ep.path)
	if err != nil {
		ep.cand.Err = fmt.Errorf("plugin %q: %s at %s: %w", e.Name, remoteKey(ep.remote), short(ep.sha), err)
		return
	}
	digest, err := s.subdirDigest(ctx, ep.remote, ep.sha, ep.path, dir)
	if err != nil {
		ep.cand.Err = fmt.Errorf("plugin %q: %w", e.Name, err)
		return
	}
	ep.cand.Dir, ep.cand.Digest, ep.cand.Commit = dir, digest, ep.sha
	ep.cand.Source = source.PinnedSource(ep.remote.Owner, ep.remote.Repo, ep.sha, ep.path)
}

// localEntryDir resolves a relative entry of a local marketplace, refusing a
// folder that leaves the marketplace through a symlink.
func localEntryDir(root, p string) (string, error) {
	dir, err := subdir(root, p)
	if err != nil {
		return "", err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", plugind.Errorf(plugind.CodeSourceUnreadable, "%s: %w", root, err)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", plugind.Errorf(plugind.CodeSourceUnreadable, "%s: %w", dir, err)
	}
	if !plugind.Within(realRoot, realDir) {
		return "", plugind.Errorf(plugind.CodeInvalidSource, "path %q leaves the marketplace folder (it resolves to %s)", p, realDir)
	}
	return dir, nil
}

// marketplaceDoc reads and parses the marketplace document at st. A remote
// document is cached by (repository path, commit), so an offline re-plan
// reads it without touching the store's tree.
func (s *Sources) marketplaceDoc(ctx context.Context, st site, allowUnpinned bool) (*marketplace.Marketplace, error) {
	rel, parse := manifest.ClaudeMarketplace, marketplace.Parse
	if _, err := os.Lstat(filepath.Join(st.dir, filepath.FromSlash(rel))); err != nil {
		rel, parse = manifest.CodexMarketplace, marketplace.ParseCodex
	}
	var key string
	var data []byte
	if st.remote != nil && s.cfg.Cache != nil {
		key = remoteKey(st.remote) + "/" + joinSlash(st.base, rel)
		if doc, ok, err := s.cfg.Cache.GetMarketplace(ctx, key, st.sha); err == nil && ok {
			s.count(ctx, cache.KindMarketplace, true)
			data = doc
		}
	}
	if data == nil {
		var err error
		data, err = readBounded(filepath.Join(st.dir, filepath.FromSlash(rel)), maxMarketplaceDoc)
		if err != nil {
			return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "marketplace %s: %s: %w", st.label(), rel, err)
		}
		if key != "" {
			s.count(ctx, cache.KindMarketplace, false)
			_ = s.cfg.Cache.PutMarketplace(ctx, key, st.sha, data)
		}
	}
	m, err := parse(data, marketplace.Options{AllowUnpinned: allowUnpinned})
	if err != nil {
		return nil, fmt.Errorf("marketplace %s (%s): %w", st.label(), rel, err)
	}
	return m, nil
}

func readBounded(p string, limit int64) ([]byte, error) {
	fh, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errors.New("larger than " + plugind.HumanBytes(limit))
	}
	return data, nil
}

// bulkProgressKey marks a context resolving many entries at once: one
// aggregate bar, no per-download bars interleaving on the terminal.
type bulkProgressKey struct{}

func bulkProgress(ctx context.Context) bool {
	v, _ := ctx.Value(bulkProgressKey{}).(bool)
	return v
}

// entryBar shows entries resolved on a terminal; a no-op bar otherwise.
func (s *Sources) entryBar(n int) *progressbar.ProgressBar {
	if s.cfg.Progress == nil || n < 2 {
		return progressbar.DefaultSilent(int64(n))
	}
	return progressbar.NewOptions(n,
		progressbar.OptionSetWriter(s.cfg.Progress),
		progressbar.OptionSetDescription("marketplace entries"),
		progressbar.OptionShowCount(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond))
}

func joinSlash(base, p string) string {
	j := path.Join(base, p)
	if j == "." {
		return ""
	}
	return j
}

func refOrHead(ref string) string {
	if ref == "" {
		return headRef
	}
	return ref
}
