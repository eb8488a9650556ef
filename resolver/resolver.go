// Package resolver turns a typed source (SPEC §5) into the plugin trees it
// offers: pinned to a commit when remote, materialized once in the snapshot
// store, and read from there. Where the bytes come from is the host layer's
// business (resolver/host: GitHub, any git host, a mirror, with caching,
// offline, fallback and retries as layers around one interface); this
// package decides what a plan needs — which repository at which commit,
// which folder, which marketplace entries — and asks for each thing once.
package resolver

import (
	"cmp"
	"context"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/marketplace"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/store"
)

// Request is what a caller asks to resolve.
type Request struct {
	Source source.Source
	Name   string // selects one marketplace entry (an error when it cannot be planned)
	// Names narrows a marketplace to these entries (each must exist, unless
	// KeepMissing; they are planned as in a bulk plan).
	Names []string
	// KeepMissing lists names the marketplace no longer has in
	// Fetched.Missing instead of failing (update: a vanished entry keeps
	// its installed copy).
	KeepMissing bool
	// FollowRenames follows the marketplace's renames map for the missing
	// names (with KeepMissing): a renamed entry is planned under its
	// current name, and Fetched.Renames says where each name led.
	FollowRenames bool
	// Constraints narrow the commits of the entries they name (a
	// dependency's range or sha; see Constraint).
	Constraints map[string]Constraint
	// DocumentOnly reads a marketplace's document and lists its entries
	// (Fetched.Entries) without fetching any of them.
	DocumentOnly bool
	// KnownMarket: the source is a known marketplace, read for its entries
	// (NAME@MARKET, or the marketplace's name). Like DocumentOnly and
	// Names, it reads the marketplace even where a plugin at its root would
	// win for a repository named by its URL (SPEC §7).
	KnownMarket   bool
	Link          bool
	Offline       bool
	AllowUnpinned bool
	// Refresh ignores remembered negative results (--refresh).
	Refresh bool
}

// Kinds of resolved sources, as the response's resolved.kind says them.
const (
	KindLocal       = "local"
	KindZip         = "zip"
	KindGitHub      = "github"
	KindGit         = "git"
	KindMarketplace = "marketplace"
)

// Fetched is a resolved source.
type Fetched struct {
	Source    source.Source // the request's source in its canonical form, a tree URL's REF and PATH as split
	Kind      string        // one of the Kind constants
	Repo      string        // the repository's key ("github.com/o/r")
	Ref       string
	Commit    string
	Subdir    string
	Transport string // how content arrived: "git", "archive", "store" (already there), "mirror"
	// Verified says how the content fetched now was proven to be the
	// commit's: host.ProofGitTree ("git-tree"), "" when it was not, or
	// came from the store.
	Verified   string
	Candidates []Candidate
	// Market describes the marketplace a marketplace source is (nil for a
	// single plugin).
	Market *Market
	// Entries lists a marketplace's entries (DocumentOnly).
	Entries []Entry
	// Missing are the names of Request.Names the marketplace does not list
	// (KeepMissing).
	Missing []string
	// Renames says where the renames map led the missing names it holds
	// (FollowRenames).
	Renames  []Rename
	Warnings []string
	// Unchecked says why the source's ref could not be checked now (see
	// host.Pin.Unchecked): what was planned is what the cache knew.
	Unchecked string
	// Snapshots are the store digests the candidates are read from, so a
	// live plan keeps them from garbage collection.
	Snapshots []string
}

// Market is a marketplace document as read: its name and where it was read.
type Market struct {
	Name        string // the document's "name"
	Description string
	Source      source.Source // where the marketplace was read, in its canonical form
	Repo        string        // its repository's key, when remote
	Commit      string        // the commit it was read at, when remote
	// AllowDependenciesFrom names the other marketplaces its plugins may
	// pull dependencies from (allowCrossMarketplaceDependenciesOn).
	AllowDependenciesFrom []string
	// Renames is its renames map (old name → current name, or nil when
	// removed).
	Renames marketplace.Renames
	// Listed says which names its entries have (Renames.Follow needs it).
	Listed map[string]bool
}

// Rename is where a marketplace's renames map leads a name it no longer
// lists.
type Rename struct {
	From string
	marketplace.Rename
}

// Entry is one marketplace entry as the document lists it (DocumentOnly):
// where it points, without fetching it.
type Entry struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Status      string `json:"status"` // ready, skipped, error
	Reason      string `json:"reason,omitempty"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
	// Source is what an install would record for it when the document pins
	// it (a relative entry at the marketplace's commit, or a sha pin); ""
	// when it is resolved only at plan time.
	Source string `json:"source,omitempty"`
	Commit string `json:"commit,omitempty"`
}

// Candidate is one plugin tree a source offers.
type Candidate struct {
	Name   string        // marketplace entry name; "" for a single-plugin source
	Source source.Source // what the registry records
	// Subdir is recorded beside Source for repositories on hosts whose
	// pinned source cannot carry a folder (SPEC §7).
	Subdir string
	Commit string // 40-hex for remote trees
	Dir    string // where the tree is on disk now
	// Digest is the tree digest of Dir when already known (a read-only
	// store snapshot whose digest is cached); "" means compute it.
	Digest      string
	Link        bool
	Marketplace source.Source // the marketplace source this candidate was listed by
	// MarketCommit is the commit of that marketplace its entry was read at
	// ("" for a local one): a lock reads the entry there again.
	MarketCommit string
	// Manifest is what its marketplace entry says about the plugin (nil
	// when nothing), and Prefer the marketplace's manifest format.
	Manifest *manifest.EntryManifest
	Prefer   manifest.Kind
	Warnings []string // about how the candidate was resolved
	// Unchecked says why the candidate's pin could not be checked now: its
	// own ref's, or its marketplace's (host.Pin.Unchecked).
	Unchecked string
	// Transport says how its tree arrived: "git", "archive", "mirror", or
	// "store" when it was already there.
	Transport string
	// Tag is the release tag a Constraint's ranges resolved to
	// (NAME--vVERSION; Commit is the commit it points at) and TagVersion
	// its version; TagMiss says why no tag was taken for a relative entry
	// that stays at the marketplace's commit.
	Tag, TagVersion, TagMiss string
	// Submodules are the git submodules its tree holds or lies in (paths
	// from the repository's root).
	Submodules []plugind.Submodule
	// Err marks an entry that cannot be planned. Skip says a bulk plan
	// leaves it out with a warning rather than reporting it as an error.
	Err  error
	Skip bool
}

// Resolver resolves sources.
type Resolver interface {
	Resolve(ctx context.Context, req Request) (*Fetched, error)
}

// Config configures Sources. Zero values take defaults.
type Config struct {
	Store *store.Store
	// Cache remembers refs, verdicts, negatives, snapshots and marketplace
	// documents; nil works (nothing is remembered).
	Cache *cache.DB
	// Hosts are where remote sources come from; every repository is opened
	// through their one stack (Hosts.stack). Nil: remote sources fail
	// (offline ones are still answered from the cache).
	Hosts  *Hosts
	Budget plugind.Budget
	Log    *slog.Logger
	// Offline makes every request offline (REASONIX_OFFLINE=1).
	Offline bool
	// NegativeTTL is how long a not-found is remembered (default 1h).
	NegativeTTL time.Duration
	// Parallel bounds concurrent repository fetches of one bulk plan
	// (default: sized to the work, see fetchParallelism).
	Parallel int
	// Progress, when set, hears about bulk work (the CLI draws bars).
	Progress Progress
	Now      func() time.Time
	// Decoded keeps marketplace documents parsed, for the next plan: the
	// daemon's, shared with its installer (nil: none kept).
	Decoded *cache.Decoded
	// ChecksumLog, when set, is the log every remote tree is checked
	// against (REASONIX_CHECKSUM_LOG, SPEC §17); nil: none is.
	ChecksumLog *host.ChecksumLog
}

// Sources is the Resolver over every source kind of SPEC §5.
type Sources struct {
	cfg    Config
	flight singleflight.Group // one fetch per (repo, SHA, paths) per process
	warn   sync.Once
	// writes bounds the trees written at once, by every plan of the
	// process (the daemon's share one disk): writesPerCore.
	writes *semaphore.Weighted
}

// A bulk plan's fetches wait on the network more than on the CPU, and
// writing their trees waits on the disk, so more fetches are in flight
// (fetchParallelism) than trees are written at once (Sources.writes,
// host.FetchOptions.Writes). bench/bulk.sh with 50 ms added to every
// request: 16 in flight and 8 writing came to 0.92x (300/51) and 0.77x
// (1,000/201) of the archive floor, where 8 and 8 took 1.10x and 0.97x;
// against a fake answering at once, on the same two cores, the two were
// within the VM's noise at 300/51 (issue 24).
const (
	fetchesPerCore = 8
	writesPerCore  = 4
)

// resolve is one Resolve: the Sources, with the cache as this Resolve
// sees it (read once, written when it ends).
type resolve struct {
	*Sources
	cache *cache.Session
	// repos are the host stacks opened (repo), by source: a thousand
	// entries over two hundred repositories open two hundred.
	repos map[source.Source]host.Repo
	// offline is the request's (--offline, REASONIX_OFFLINE=1); logs are
	// its lookups in the checksum log.
	offline bool
	logs    logCalls
}

// New returns a Resolver over cfg.
func New(cfg Config) *Sources {
	cfg.Budget = cfg.Budget.OrDefault()
	cfg.Log = cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Progress = cmp.Or[Progress](cfg.Progress, noProgress{})
	return &Sources{cfg: cfg, writes: semaphore.NewWeighted(int64(max(4, writesPerCore*runtime.GOMAXPROCS(0))))}
}

// Resolve implements Resolver.
func (s *Sources) Resolve(ctx context.Context, req Request) (*Fetched, error) {
	if s.cfg.Offline {
		req.Offline = true
	}
	r := &resolve{Sources: s, cache: s.cfg.Cache.Session(), offline: req.Offline}
	defer r.cache.CommitLater(ctx, s.cacheWriteFailed)
	if w, ok := s.progress(ctx).(host.Watcher); ok {
		// The network work under this resolve is reported as it goes.
		ctx = host.WithWatcher(ctx, w)
	}
	switch req.Source.Kind {
	case source.LocalDir, source.LocalZip:
		return r.resolveLocal(ctx, req)
	case source.GitHub, source.Git:
		return r.resolveRemote(ctx, req)
	case source.MarketEntry:
		return nil, plugind.Errorf(plugind.CodeNotFound, "%s names marketplace %q, which is not a known marketplace (add it with: reasonix marketplace add SOURCE)", req.Source, req.Source.Market)
	}
	return nil, plugind.Errorf(plugind.CodeInvalidSource, "no source given")
}
