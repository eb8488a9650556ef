package resolver

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/marketplace"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// fetchParallelism sizes a bulk plan's concurrent repository fetches to the
// work and the machine (fetchesPerCore), never more than there are
// repositories.
func (s *Sources) fetchParallelism(jobs int) int {
	n := s.cfg.Parallel
	if n <= 0 {
		n = max(4, fetchesPerCore*runtime.GOMAXPROCS(0))
	}
	return max(1, min(n, jobs))
}

// eachAtOnce runs do for every key of work, fetchParallelism at a time,
// and returns what each gave.
func eachAtOnce[K comparable, V, R any](ctx context.Context, s *resolve, work map[K]V, do func(context.Context, K, V) (R, error)) (map[K]R, map[K]error) {
	var mu sync.Mutex
	got, errs := make(map[K]R, len(work)), make(map[K]error, len(work))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.fetchParallelism(len(work)))
	for k, v := range work {
		g.Go(func() error {
			r, err := do(gctx, k, v)
			mu.Lock()
			defer mu.Unlock()
			got[k], errs[k] = r, err
			return nil
		})
	}
	_ = g.Wait()
	return got, errs
}

// site is where a marketplace document lives.
type site struct {
	dir  string    // the marketplace root on disk
	repo host.Repo // nil for a local folder
	sha  string    // the marketplace's commit, when remote
	base string    // dir's path inside the repository ("" for its root)
	// snapshot is the store snapshot holding dir (remote marketplaces).
	snapshot string
	// format is the marketplace's manifest format: its plugins' manifest of
	// that kind is read first (SPEC §10).
	format manifest.Kind
}

func (st site) label() string {
	if st.repo == nil {
		return st.dir
	}
	return st.repo.Source().Key() + "@" + host.Short(st.sha)
}

// entryPlan is one marketplace entry on its way to a Candidate.
type entryPlan struct {
	entry marketplace.Entry
	cand  Candidate
	repo  host.Repo // where the entry's tree comes from; nil for a local folder
	ref   string    // to resolve when sha is "" ("" = default branch)
	sha   string
	path  string // the plugin's folder inside that repository
	// verify: the sha came from the document, not from resolving a ref,
	// so it must be proven to be on a branch or tag.
	verify bool
}

// repoAt identifies one fetch: a repository at a commit.
type repoAt struct{ repo, sha string }

// resolveMarketplace turns every entry of the marketplace at st (or the one
// --name selects) into a Candidate. Each (repository, commit) is fetched
// once, however many entries point into it, with bounded parallelism across
// repositories, and only the folders the entries name. A problem with one
// entry is that entry's, never the others'; with --name it is the
// operation's.
func (s *resolve) resolveMarketplace(ctx context.Context, req Request, f *Fetched, st site) (*Fetched, error) {
	if req.Link && st.repo != nil {
		return nil, plugind.Errorf(plugind.CodeNotPinnable, "%s is remote: --link needs a local folder", req.Source)
	}
	if st.repo != nil && len(f.Snapshots) > 0 {
		st.snapshot = f.Snapshots[0]
	}
	m, err := s.marketplaceDoc(ctx, &st, req.AllowUnpinned)
	if err != nil {
		return nil, err
	}
	f.Warnings = append(f.Warnings, m.Warnings...)
	f.Market = &Market{Name: m.Name, Description: m.Description, Source: f.Source, Commit: st.sha,
		AllowDependenciesFrom: m.AllowCrossMarketplaceDependenciesOn, Renames: m.Renames, Listed: m.Listed()}
	if st.repo != nil {
		f.Market.Repo = st.repo.Source().Key()
	}
	if req.DocumentOnly {
		f.Entries = s.listEntries(st, m)
		return f, nil
	}
	entries := m.Entries
	switch {
	case req.Name != "":
		e, err := m.Select(req.Name)
		if err != nil {
			return nil, err
		}
		entries = []marketplace.Entry{*e}
	case len(req.Names) > 0 && req.KeepMissing:
		entries, f.Missing = m.NarrowKeep(req.Names)
		if req.FollowRenames {
			entries, f.Renames = followRenames(m, f.Market.Listed, req.Names, f.Missing, entries)
		}
	case len(req.Names) > 0:
		entries, err = m.Narrow(req.Names)
		if err != nil {
			return nil, err
		}
	}
	plans := make([]*entryPlan, 0, len(entries))
	for _, e := range entries {
		ep := s.classify(req, st, e)
		ep.cand.Marketplace, ep.cand.MarketCommit = f.Source, f.Commit
		if ep.cand.Err != nil && req.Name != "" {
			return nil, ep.cand.Err
		}
		plans = append(plans, ep)
	}

	progress := s.progress(ctx)
	progress.Start(len(plans))
	defer progress.Finish()
	s.pinConstraints(ctx, req, plans)
	s.pinEntries(ctx, plans)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var wants []logWant
	for _, ep := range plans {
		if ep.cand.Err == nil && ep.repo != nil {
			wants = append(wants, logWant{ep.repo.Source(), ep.sha, ep.path})
		}
	}
	fetched := make(chan struct{})
	s.expectAll(ctx, wants, fetched)
	results, warnings := s.fetchEntries(ctx, plans)
	close(fetched)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.Warnings = append(f.Warnings, warnings...)
	// Each entry's folder is checked and its digest looked up side by
	// side (a stat and a cache read each: 5 ms of a 1,000-entry re-plan).
	var finishing errgroup.Group
	finishing.SetLimit(runtime.GOMAXPROCS(0))
	for _, ep := range plans {
		finishing.Go(func() error { s.finishEntry(ctx, st, ep, results); return nil })
	}
	_ = finishing.Wait()
	for _, ep := range plans {
		if ep.cand.Err != nil && (req.Name != "" || logRefused(ep.cand.Err)) {
			return nil, ep.cand.Err
		}
		f.Candidates = append(f.Candidates, ep.cand)
	}
	for _, r := range results {
		if r.res != nil {
			f.Snapshots = append(f.Snapshots, r.res.snapshots...)
		}
	}
	slices.Sort(f.Snapshots)
	f.Snapshots = slices.Compact(f.Snapshots)
	return f, nil
}

// followRenames follows m's renames map for each missing name, as Claude
// Code does for a plugin its marketplace no longer lists, and adds the
// entries renamed names lead to (in document order with the others).
func followRenames(m *marketplace.Marketplace, listed map[string]bool, names, missing []string, entries []marketplace.Entry) ([]marketplace.Entry, []Rename) {
	var renames []Rename
	var targets []string
	for _, n := range missing {
		r := m.Renames.Follow(n, func(name string) bool { return listed[name] })
		if r.Kind == marketplace.NotRenamed {
			continue
		}
		renames = append(renames, Rename{From: n, Rename: r})
		if r.Kind == marketplace.Renamed {
			targets = append(targets, r.To)
		}
	}
	if len(targets) == 0 {
		return entries, renames
	}
	all, _ := m.NarrowKeep(append(append([]string{}, names...), targets...))
	return all, renames
}

// listEntries describes every entry of m without fetching any.
func (s *resolve) listEntries(st site, m *marketplace.Marketplace) []Entry {
	out := make([]Entry, 0, len(m.Entries))
	for _, e := range m.Entries {
		it := Entry{Name: e.Name, Kind: string(e.Kind), Status: string(e.Status), Reason: e.Reason, Version: e.Version, Description: e.Description}
		if e.Status == marketplace.StatusReady {
			switch {
			case e.Kind == marketplace.KindRelative && st.repo != nil:
				src := st.repo.Source()
				it.Commit = st.sha
				it.Source = src.Recorded(st.sha, joinSlash(st.base, e.Path)).String()
			case e.Kind == marketplace.KindRelative:
				it.Source = filepath.Join(st.dir, filepath.FromSlash(e.Path))
			case e.SHA != "":
				it.Commit = e.SHA
				it.Source = e.Remote.Recorded(e.SHA, e.Path).String()
			}
		}
		out = append(out, it)
	}
	return out
}

// classify reads what an entry needs: nothing (a relative folder of the
// marketplace), or a repository at a commit or ref.
func (s *resolve) classify(req Request, st site, e marketplace.Entry) *entryPlan {
	ep := &entryPlan{entry: e, cand: Candidate{Name: e.Name, Prefer: st.format, Manifest: e.ManifestFor(),
		Warnings: append([]string(nil), e.Warnings...)}}
	if err := e.Err(); err != nil {
		ep.cand.Err = err
		ep.cand.Skip = e.Status == marketplace.StatusSkipped
		return ep
	}
	switch e.Kind {
	case marketplace.KindRelative:
		if st.repo == nil {
			ep.cand.Link = req.Link
			return ep
		}
		ep.repo, ep.sha = st.repo, st.sha
		ep.path = joinSlash(st.base, e.Path)
	case marketplace.KindURL, marketplace.KindGitHub, marketplace.KindGitSubdir:
		if req.Link {
			ep.cand.Err = plugind.Errorf(plugind.CodeNotPinnable, "plugin %q comes from %s: --link needs a local folder", e.Name, e.Remote.Key())
			return ep
		}
		repo, err := s.repo(e.Remote, req)
		if err != nil {
			ep.cand.Err = fmt.Errorf("plugin %q: %w", e.Name, err)
			ep.cand.Skip = plugind.CodeOf(err) == plugind.CodeNotPinnable
			return ep
		}
		ep.repo, ep.sha, ep.ref, ep.path = repo, e.SHA, e.Ref, e.Path
		ep.verify = e.SHA != ""
	default:
		ep.cand.Err = plugind.Errorf(plugind.CodeNotPinnable, "plugin %q: source kind %q is not supported", e.Name, e.Kind)
		ep.cand.Skip = true
	}
	return ep
}

// pinEntries resolves the ref of every entry that has no sha yet (git-subdir
// without sha, --allow-unpinned url/github): each (repository, ref) once.
func (s *resolve) pinEntries(ctx context.Context, plans []*entryPlan) {
	type repoRef struct{ repo, ref string }
	want := map[repoRef]host.Repo{}
	for _, ep := range plans {
		if ep.cand.Err == nil && ep.repo != nil && ep.sha == "" {
			want[repoRef{ep.repo.Source().Key(), ep.ref}] = ep.repo
		}
	}
	if len(want) == 0 {
		return
	}
	got, errs := eachAtOnce(ctx, s, want, func(ctx context.Context, k repoRef, r host.Repo) (host.Pin, error) {
		return r.Resolve(ctx, k.ref, nil)
	})
	for _, ep := range plans {
		if ep.cand.Err != nil || ep.repo == nil || ep.sha != "" {
			continue
		}
		k := repoRef{ep.repo.Source().Key(), ep.ref}
		if err := errs[k]; err != nil {
			ep.cand.Err = fmt.Errorf("plugin %q: %w", ep.entry.Name, err)
			continue
		}
		ep.sha = got[k].SHA
		ep.cand.Unchecked = got[k].Unchecked
		if w := got[k].Warning; w != "" {
			ep.cand.Warnings = append(ep.cand.Warnings, w)
		}
		if ep.entry.Unpinned {
			ep.cand.Warnings = append(ep.cand.Warnings, fmt.Sprintf("unpinned in the marketplace: %s of %s pinned at plan time to %s", host.DescribeRef(ep.ref), k.repo, ep.sha))
		}
	}
}

type entryResult struct {
	res *fetchResult
	err error
}

// fetchEntries brings every (repository, commit) the entries need into the
// store, each once with every folder its entries name, a bounded number at
// a time.
func (s *resolve) fetchEntries(ctx context.Context, plans []*entryPlan) (map[repoAt]entryResult, []string) {
	type job struct {
		repo    host.Repo
		paths   map[string]bool
		verify  bool
		entries int
	}
	jobs := map[repoAt]*job{}
	done := 0
	for _, ep := range plans {
		if ep.cand.Err != nil || ep.repo == nil {
			done++
			continue
		}
		k := repoAt{ep.repo.Source().Key(), ep.sha}
		j, ok := jobs[k]
		if !ok {
			j = &job{repo: ep.repo, paths: map[string]bool{}}
			jobs[k] = j
		}
		j.paths[ep.path] = true
		j.verify = j.verify || ep.verify
		j.entries++
	}
	var entriesDone, repos atomic.Int64
	var fetched atomic.Int64
	entriesDone.Store(int64(done))
	progress := s.progress(ctx)
	progress.Resolved(done, 0, 0)
	keys := slices.SortedFunc(maps.Keys(jobs), func(a, b repoAt) int { return strings.Compare(a.repo+a.sha, b.repo+b.sha) })
	// Read, in a query per table, what locating them will look up per
	// repository.
	ats := make([]cache.RepoAt, len(keys))
	for i, k := range keys {
		ats[i] = cache.RepoAt{Remote: k.repo, SHA: k.sha}
	}
	s.cache.Load(ctx, ats)
	results := make([]entryResult, len(keys))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.fetchParallelism(len(keys)))
	for i, k := range keys {
		j := jobs[k]
		g.Go(func() error {
			res, err := s.locate(gctx, j.repo, k.sha, slices.Sorted(maps.Keys(j.paths)), j.verify, len(keys) > 1)
			results[i] = entryResult{res, err}
			var b int64
			if res != nil && res.transport != "store" {
				b = fetched.Add(res.bytes)
				repos.Add(1)
			} else {
				b = fetched.Load()
			}
			progress.Resolved(int(entriesDone.Add(int64(j.entries))), int(repos.Load()), b)
			return nil
		})
	}
	_ = g.Wait()
	out := make(map[repoAt]entryResult, len(keys))
	var warnings []string
	for i, k := range keys {
		out[k] = results[i]
		if results[i].res != nil {
			warnings = append(warnings, results[i].res.warnings...)
		}
	}
	return out, warnings
}

// finishEntry locates an entry's plugin folder and its digest.
func (s *resolve) finishEntry(ctx context.Context, st site, ep *entryPlan, results map[repoAt]entryResult) {
	if ep.cand.Err != nil {
		return
	}
	e := &ep.entry
	if ep.repo == nil { // a relative entry of a local marketplace
		dir, err := localEntryDir(st.dir, e.Path)
		if err != nil {
			ep.cand.Err = fmt.Errorf("plugin %q: %w", e.Name, err)
			return
		}
		ep.cand.Dir, ep.cand.Source = dir, source.Local(dir)
		return
	}
	key := ep.repo.Source().Key()
	r := results[repoAt{key, ep.sha}]
	if r.err == nil {
		r.err = r.res.refused[ep.path]
	}
	if r.err != nil {
		ep.cand.Err = fmt.Errorf("plugin %q: %w", e.Name, r.err)
		return
	}
	loc := r.res.dirs[ep.path]
	if err := s.checkFolder(ctx, ep.repo, ep.sha, ep.path, loc); err != nil {
		ep.cand.Err = fmt.Errorf("plugin %q: %w", e.Name, err)
		return
	}
	digest, err := s.folderDigest(ctx, key, ep.sha, ep.path, loc)
	if err == nil {
		err = s.checkLog(ctx, ep.repo.Source(), ep.sha, ep.path, digest, loc.snapshot)
	}
	if err != nil {
		ep.cand.Err = fmt.Errorf("plugin %q: %w", e.Name, err)
		return
	}
	src := ep.repo.Source()
	ep.cand.Dir, ep.cand.Digest, ep.cand.Commit = loc.dir, digest, ep.sha
	ep.cand.Transport = r.res.transport
	ep.cand.Submodules = plugind.SubmodulesOf(r.res.submodules, ep.path)
	ep.cand.Source = src.Recorded(ep.sha, ep.path)
	ep.cand.Subdir = src.RecordedSubdir(ep.path)
}

// localEntryDir resolves a relative entry of a local marketplace, refusing a
// folder that leaves the marketplace through a symlink.
func localEntryDir(root, p string) (string, error) {
	dir := filepath.Join(root, filepath.FromSlash(p))
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", plugind.Errorf(plugind.CodeNotFound, "path %q does not exist", p)
	case err != nil:
		return "", plugind.Errorf(plugind.CodeSourceUnreadable, "path %q: %w", p, err)
	case !info.IsDir():
		return "", plugind.Errorf(plugind.CodeInvalidSource, "path %q is not a folder", p)
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

// docKey names a parse of a marketplace document: parsing is a pure
// function of its bytes, format and options.
func docKey(data []byte, doc marketplace.Document, opts marketplace.Options) string {
	h := sha256.New()
	h.Write([]byte(doc.Path))
	if opts.AllowUnpinned {
		h.Write([]byte{1})
	} else {
		h.Write([]byte{0})
	}
	h.Write(data)
	return "marketplace\x00" + string(h.Sum(nil))
}

// marketplaceDoc reads and parses the marketplace document at st (where
// it lives is marketplace.Find's answer). A remote document is cached by
// (repository path, commit), so an offline re-plan reads it without
// touching the store's tree.
func (s *resolve) marketplaceDoc(ctx context.Context, st *site, allowUnpinned bool) (*marketplace.Marketplace, error) {
	found, ok := marketplace.Find(st.dir)
	if !ok {
		found = marketplace.Found{Document: marketplace.Documents[0]}
	}
	rel := found.Path
	st.format = found.Format
	var key string
	var data []byte
	if st.repo != nil {
		key = st.repo.Source().Key() + "/" + joinSlash(st.base, rel)
		if doc, ok := s.cache.Marketplace(ctx, key, st.sha); ok {
			s.cache.Count(ctx, cache.KindMarketplace, true)
			data = doc
		}
	}
	if data == nil {
		var err error
		data, err = found.Read(st.dir)
		if err != nil {
			return nil, plugind.Errorf(plugind.CodeOf(err), "marketplace %s: %w", st.label(), err)
		}
		if key != "" {
			s.cache.Count(ctx, cache.KindMarketplace, false)
			s.cache.PutMarketplace(key, st.sha, data)
		}
	}
	opts := marketplace.Options{AllowUnpinned: allowUnpinned}
	doc, err := cache.Remember(s.cfg.Decoded, func() string { return docKey(data, found.Document, opts) },
		func() (*marketplace.Marketplace, error) { return found.Parse(data, opts) })
	if err != nil {
		return nil, fmt.Errorf("marketplace %s (%s): %w", st.label(), rel, err)
	}
	if note := found.Note(); note != "" {
		// Parsed documents are shared; the note goes with this reading.
		copied := *doc
		copied.Warnings = append(append([]string{}, doc.Warnings...), note)
		doc = &copied
	}
	return doc, nil
}

func joinSlash(base, p string) string {
	j := path.Join(base, p)
	if j == "." {
		return ""
	}
	return j
}

// isMarketplace reports whether the folder dir is read as a marketplace:
// it holds a marketplace document and no plugin manifest (SPEC §7: when
// the root also has one, the plugin wins) — unless the request is for the
// marketplace's document itself (marketplace add and update, validate) or
// for its entries (NAME@MARKET, entries by name: update, dependencies),
// which a plugin at the root does not hide.
func isMarketplace(dir string, req Request) bool {
	if !marketplace.Has(dir) {
		return false
	}
	if req.DocumentOnly || req.KnownMarket || len(req.Names) > 0 {
		return true
	}
	_, _, err := manifest.Detect(dir)
	return err != nil
}
