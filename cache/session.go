package cache

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"time"

	"reasonix.io/plugind"
)

// Session is the cache as one resolve sees it. A bulk plan asks about
// hundreds of repositories, several times each, and SQLite's per-statement
// and per-transaction costs made those lookups a large share of a warm
// plan. So a Session reads the rows of the (repository, commit) pairs it is
// asked about once, a query per table for however many (Load, or the first
// lookup of a pair), answers every later lookup from memory, and keeps what
// the resolve learns — snapshots, submodules, verdicts, negatives,
// marketplace documents, manifest inventories, hit and miss counts,
// snapshot uses — for one
// transaction when the resolve ends (Commit). It sees its own writes at
// once; what other processes write it reads only when it first asks, and
// the next Session reads afresh (a snapshot quarantined meanwhile is
// forgotten there).
//
// Refs are the exception: they go to the database as they come (a listing
// replaces a repository's refs, which is not a row to overlay).
//
// A nil *Session (no cache) remembers nothing and answers every lookup
// with a miss. It is safe for concurrent use.
type Session struct {
	db *DB

	mu       sync.Mutex
	snaps    map[RepoAt]map[string]string // rows read, by key (snapshotKey)
	subs     map[RepoAt][]plugind.Submodule
	verdicts map[RepoAt]*Verdict // read (nil: none recorded)
	negs     map[string][]Negative
	invs     map[string][]byte
	invAsked map[string]bool
	w        sessionWrites
}

// sessionWrites is what Commit writes.
type sessionWrites struct {
	snaps    map[RepoAt]map[string]string
	subs     map[RepoAt][]plugind.Submodule
	verdicts map[RepoAt]Verdict
	negs     map[negativeID]Negative
	markets  map[RepoAt][]byte
	invs     map[string][]byte
	counts   map[string]HitMiss
	touched  map[string]time.Time
}

func newWrites() sessionWrites {
	return sessionWrites{
		snaps: map[RepoAt]map[string]string{}, subs: map[RepoAt][]plugind.Submodule{},
		verdicts: map[RepoAt]Verdict{}, negs: map[negativeID]Negative{}, markets: map[RepoAt][]byte{},
		invs: map[string][]byte{}, counts: map[string]HitMiss{}, touched: map[string]time.Time{},
	}
}

type negativeID struct{ Kind, Remote, SHA, Path string }

// Session starts a resolve's view of db (nil for a nil db).
func (db *DB) Session() *Session {
	if db == nil {
		return nil
	}
	return &Session{
		db:       db,
		snaps:    map[RepoAt]map[string]string{},
		subs:     map[RepoAt][]plugind.Submodule{},
		verdicts: map[RepoAt]*Verdict{},
		negs:     map[string][]Negative{},
		invs:     map[string][]byte{},
		invAsked: map[string]bool{},
		w:        newWrites(),
	}
}

// Load reads, a query per table, the rows of every one of ats not read
// yet: snapshot records, submodules and verdicts of each, the unexpired
// negatives of their repositories. A failed read leaves those to be read
// at their first lookup.
func (s *Session) Load(ctx context.Context, ats []RepoAt, now time.Time) {
	if s == nil {
		return
	}
	var snaps, subs, verdicts []RepoAt
	var remotes []string
	s.mu.Lock()
	for _, at := range ats {
		if _, ok := s.snaps[at]; !ok && !slices.Contains(snaps, at) {
			snaps = append(snaps, at)
		}
		if _, ok := s.subs[at]; !ok && !slices.Contains(subs, at) {
			subs = append(subs, at)
		}
		if _, ok := s.verdicts[at]; !ok && !slices.Contains(verdicts, at) {
			verdicts = append(verdicts, at)
		}
		if _, ok := s.negs[at.Remote]; !ok && !slices.Contains(remotes, at.Remote) {
			remotes = append(remotes, at.Remote)
		}
	}
	s.mu.Unlock()
	s.loadSnapshots(ctx, snaps)
	s.loadSubmodules(ctx, subs)
	s.loadVerdicts(ctx, verdicts)
	s.loadNegatives(ctx, remotes, now)
}

// The loaders keep what another lookup of this Session read meanwhile.

func (s *Session) loadSnapshots(ctx context.Context, ats []RepoAt) bool {
	if len(ats) == 0 {
		return true
	}
	got, err := s.db.snapshotsOf(ctx, ats)
	if err != nil || got == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for at, rows := range got {
		if _, raced := s.snaps[at]; !raced {
			s.snaps[at] = rows
		}
	}
	return true
}

func (s *Session) loadSubmodules(ctx context.Context, ats []RepoAt) bool {
	if len(ats) == 0 {
		return true
	}
	got, err := s.db.submodulesOf(ctx, ats)
	if err != nil || got == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for at, list := range got {
		if _, raced := s.subs[at]; !raced {
			s.subs[at] = list
		}
	}
	return true
}

func (s *Session) loadVerdicts(ctx context.Context, ats []RepoAt) bool {
	if len(ats) == 0 {
		return true
	}
	got, err := s.db.verdictsOf(ctx, ats)
	if err != nil || got == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, at := range ats {
		if _, raced := s.verdicts[at]; raced {
			continue
		}
		var v *Verdict
		if found, ok := got[at]; ok {
			v = &found
		}
		s.verdicts[at] = v
	}
	return true
}

func (s *Session) loadNegatives(ctx context.Context, remotes []string, now time.Time) bool {
	if len(remotes) == 0 {
		return true
	}
	got, err := s.db.negativesOf(ctx, remotes, now)
	if err != nil || got == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range remotes {
		if _, raced := s.negs[r]; !raced {
			s.negs[r] = got[r]
		}
	}
	return true
}

// snapshot returns the record of key for at.
func (s *Session) snapshot(ctx context.Context, at RepoAt, key string) (string, bool) {
	if s == nil {
		return "", false
	}
	s.mu.Lock()
	d, written := s.w.snaps[at][key]
	rows, read := s.snaps[at]
	s.mu.Unlock()
	if written {
		return d, true
	}
	if !read {
		if !s.loadSnapshots(ctx, []RepoAt{at}) {
			return "", false // a read failure is a miss
		}
		s.mu.Lock()
		rows = s.snaps[at]
		s.mu.Unlock()
	}
	d, ok := rows[key]
	return d, ok
}

func (s *Session) putSnapshot(at RepoAt, key, digest string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w.snaps[at] == nil {
		s.w.snaps[at] = map[string]string{}
	}
	s.w.snaps[at][key] = digest
}

// Submodules returns the submodules recorded for at: those read, then
// those this Session recorded that they lack.
func (s *Session) Submodules(ctx context.Context, at RepoAt) []plugind.Submodule {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	list, read := s.subs[at]
	s.mu.Unlock()
	if !read {
		s.loadSubmodules(ctx, []RepoAt{at})
		s.mu.Lock()
		list = s.subs[at]
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return MergeSubmodules(list, s.w.subs[at])
}

// PutSubmodules records what a fetch of at found.
func (s *Session) PutSubmodules(at RepoAt, list []plugind.Submodule) {
	if s == nil || len(list) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.subs[at] = MergeSubmodules(list, s.w.subs[at])
}

// MergeSubmodules is a with the submodules of b it lacks (by path).
func MergeSubmodules(a, b []plugind.Submodule) []plugind.Submodule {
	out := append([]plugind.Submodule(nil), a...)
	for _, sub := range b {
		if !slices.ContainsFunc(out, func(o plugind.Submodule) bool { return o.Path == sub.Path }) {
			out = append(out, sub)
		}
	}
	return out
}

// GetVerdict implements the Cached host layer's MetaStore.
func (s *Session) GetVerdict(ctx context.Context, remote, sha string) (Verdict, bool, error) {
	if s == nil {
		return Verdict{}, false, nil
	}
	at := RepoAt{remote, sha}
	s.mu.Lock()
	v, written := s.w.verdicts[at]
	read, ok := s.verdicts[at]
	s.mu.Unlock()
	if written {
		return v, true, nil
	}
	if !ok {
		if !s.loadVerdicts(ctx, []RepoAt{at}) {
			return Verdict{}, false, ctx.Err()
		}
		s.mu.Lock()
		read = s.verdicts[at]
		s.mu.Unlock()
	}
	if read == nil {
		return Verdict{}, false, nil
	}
	return *read, true, nil
}

// PutVerdict implements MetaStore.
func (s *Session) PutVerdict(_ context.Context, v Verdict) error {
	if v.Remote == "" || v.SHA == "" {
		return fmt.Errorf("cache: put verdict: remote and sha are required")
	}
	if s != nil {
		s.mu.Lock()
		s.w.verdicts[RepoAt{v.Remote, v.SHA}] = v
		s.mu.Unlock()
	}
	return nil
}

// FirstNegative implements MetaStore: the first of keys (in their order)
// with a negative result of remote that has not expired at now.
func (s *Session) FirstNegative(ctx context.Context, remote string, now time.Time, keys ...NegativeKey) (Negative, bool, error) {
	if s == nil || len(keys) == 0 {
		return Negative{}, false, nil
	}
	s.mu.Lock()
	_, read := s.negs[remote]
	s.mu.Unlock()
	if !read && !s.loadNegatives(ctx, []string{remote}, now) {
		return Negative{}, false, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	negs := slices.DeleteFunc(slices.Clone(s.negs[remote]), func(n Negative) bool {
		_, replaced := s.w.negs[n.id()]
		return replaced
	})
	for _, n := range s.w.negs {
		negs = append(negs, n)
	}
	n, found := FirstOf(negs, remote, now, keys)
	return n, found, nil
}

func (n Negative) id() negativeID { return negativeID{n.Kind, n.Remote, n.SHA, n.Path} }

// PutNegative implements MetaStore (replacing an older one).
func (s *Session) PutNegative(_ context.Context, n Negative) error {
	if n.Kind == "" || n.Remote == "" {
		return fmt.Errorf("cache: put negative: kind and remote are required")
	}
	if s != nil {
		s.mu.Lock()
		s.w.negs[n.id()] = n
		s.mu.Unlock()
	}
	return nil
}

// Count implements MetaStore: one lookup of kind, a hit or a miss.
func (s *Session) Count(_ context.Context, kind string, hit bool) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.w.counts[kind]
	if hit {
		c.Hits++
	} else {
		c.Misses++
	}
	s.w.counts[kind] = c
	return nil
}

// Touch records that snapshot digest was used at at (store GC reads the
// last use).
func (s *Session) Touch(digest string, at time.Time) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if at.After(s.w.touched[digest]) {
		s.w.touched[digest] = at
	}
}

// Marketplace returns the marketplace document read from remote at sha.
func (s *Session) Marketplace(ctx context.Context, remote, sha string) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	doc, written := s.w.markets[RepoAt{remote, sha}]
	s.mu.Unlock()
	if written {
		return doc, true
	}
	doc, ok, err := s.db.GetMarketplace(ctx, remote, sha)
	return doc, ok && err == nil
}

// PutMarketplace records the marketplace document read from remote at
// sha. A commit's content never changes, so a second put just replaces
// bytes that should be identical.
func (s *Session) PutMarketplace(remote, sha string, doc []byte) {
	if s == nil {
		return
	}
	if doc == nil {
		doc = []byte{} // the column is NOT NULL; an empty document is still a document
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.markets[RepoAt{remote, sha}] = doc
}

// The refs go straight to the database (see Session).

// GetRef implements MetaStore.
func (s *Session) GetRef(ctx context.Context, remote, ref string) (Ref, bool, error) {
	return s.db.GetRef(ctx, remote, ref)
}

// PutRef implements MetaStore.
func (s *Session) PutRef(ctx context.Context, r Ref) error { return s.db.PutRef(ctx, r) }

// ListRefs implements MetaStore.
func (s *Session) ListRefs(ctx context.Context, remote string) ([]Ref, error) {
	return s.db.ListRefs(ctx, remote)
}

// ReplaceRefs implements MetaStore.
func (s *Session) ReplaceRefs(ctx context.Context, remote string, commits map[string]string, at time.Time) error {
	return s.db.ReplaceRefs(ctx, remote, commits, at)
}

// Commit writes what the Session recorded since the last Commit, in one
// transaction, even when ctx was cancelled: what was learnt is true, and
// GC reads snapshot uses.
func (s *Session) Commit(ctx context.Context) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	w := s.w
	s.w = newWrites()
	s.fold(w)
	s.mu.Unlock()
	if w.empty() {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	if err := s.db.write(ctx, "commit session", func(tx *sql.Tx) error { return w.apply(ctx, tx) }); err != nil {
		return fmt.Errorf("cache: record what a resolve learnt: %w", err)
	}
	return nil
}

// fold makes what w wrote part of what the Session read, as the database
// will hold it.
func (s *Session) fold(w sessionWrites) {
	for at, rows := range w.snaps {
		if read, ok := s.snaps[at]; ok {
			for k, d := range rows {
				read[k] = d
			}
		}
	}
	for at, list := range w.subs {
		if read, ok := s.subs[at]; ok {
			s.subs[at] = MergeSubmodules(read, list)
		}
	}
	for at, v := range w.verdicts {
		s.verdicts[at] = &v
	}
	for id, n := range w.negs {
		if read, ok := s.negs[id.Remote]; ok {
			s.negs[id.Remote] = append(slices.DeleteFunc(read, func(o Negative) bool { return o.id() == id }), n)
		}
	}
	for k, body := range w.invs {
		s.invAsked[k], s.invs[k] = true, body
	}
}

func (w *sessionWrites) empty() bool {
	return len(w.snaps)+len(w.subs)+len(w.verdicts)+len(w.negs)+len(w.markets)+len(w.invs)+len(w.counts)+len(w.touched) == 0
}
