package cache

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"reasonix.io/plugind"
)

// Session is the cache as one resolve (or one plan) sees it. A bulk plan
// asks about hundreds of repositories, several times each, and SQLite's
// per-statement and per-transaction costs made those lookups a large share
// of a warm plan. So a Session reads the rows of the (repository, commit)
// pairs it is asked about once, a query per table for however many (Load,
// or the first lookup of a pair), answers every later lookup from memory,
// and keeps what the resolve learns — snapshots, submodules, verdicts,
// negatives, marketplace documents, manifest inventories, ref
// resolutions, hit and miss counts, snapshot uses — for one transaction
// when the resolve ends (Commit). It sees its own writes at once; what other processes write it
// reads only when it first asks, and the next Session reads afresh (a
// snapshot quarantined meanwhile is forgotten there).
//
// Ref listings are the exception: they go to the database as they come (a
// listing replaces a repository's refs, which is not a row to overlay),
// after the ref resolutions kept of that repository.
//
// A nil *Session (no cache) remembers nothing and answers every lookup
// with a miss. It is safe for concurrent use.
type Session struct {
	db *DB

	mu       sync.Mutex // guards the rows and w
	snaps    rows[RepoAt, map[string]string]
	subs     rows[RepoAt, []plugind.Submodule]
	verdicts rows[RepoAt, Verdict] // the zero Verdict: none recorded
	negs     rows[string, []Negative]
	invs     rows[string, []byte] // nil: none stored
	w        sessionWrites
}

// rows are what a Session read of one table, by key: a key present was
// read (its zero value: nothing stored).
type rows[K comparable, V any] struct {
	m    map[K]V
	read func(ctx context.Context, keys []K) (map[K]V, error) // on error, what it gives is not used
}

func newRows[K comparable, V any](read func(context.Context, []K) (map[K]V, error)) rows[K, V] {
	return rows[K, V]{m: map[K]V{}, read: read}
}

// load reads, in one go, those of keys not read yet; false when the read
// failed (a miss: they are read again at their next lookup).
func (r *rows[K, V]) load(ctx context.Context, mu *sync.Mutex, keys []K) bool {
	var want []K
	seen := map[K]bool{}
	mu.Lock()
	for _, k := range keys {
		if _, ok := r.m[k]; !ok && !seen[k] {
			seen[k] = true
			want = append(want, k)
		}
	}
	mu.Unlock()
	if len(want) == 0 {
		return true
	}
	got, err := r.read(ctx, want)
	if err != nil || got == nil {
		return false
	}
	mu.Lock()
	defer mu.Unlock()
	for _, k := range want {
		if _, raced := r.m[k]; !raced { // another lookup's read stands
			r.m[k] = got[k]
		}
	}
	return true
}

// get returns what was read under k, reading it first if need be.
func (r *rows[K, V]) get(ctx context.Context, mu *sync.Mutex, k K) V {
	r.load(ctx, mu, []K{k})
	mu.Lock()
	defer mu.Unlock()
	return r.m[k]
}

// sessionWrites is what Commit writes.
type sessionWrites struct {
	snaps    map[RepoAt]map[string]string
	subs     map[RepoAt][]plugind.Submodule
	verdicts map[RepoAt]Verdict
	negs     map[negativeID]Negative
	markets  map[RepoAt][]byte
	invs     map[string][]byte
	refs     map[[2]string]Ref // by remote and ref
	counts   map[string]HitMiss
	touched  map[string]time.Time
}

func newWrites() sessionWrites {
	return sessionWrites{
		snaps: map[RepoAt]map[string]string{}, subs: map[RepoAt][]plugind.Submodule{},
		verdicts: map[RepoAt]Verdict{}, negs: map[negativeID]Negative{}, markets: map[RepoAt][]byte{},
		invs: map[string][]byte{}, refs: map[[2]string]Ref{}, counts: map[string]HitMiss{}, touched: map[string]time.Time{},
	}
}

type negativeID struct{ Kind, Remote, SHA, Path string }

func (n Negative) id() negativeID { return negativeID{n.Kind, n.Remote, n.SHA, n.Path} }

// Session starts a resolve's view of db (nil for a nil db).
func (db *DB) Session() *Session {
	if db == nil {
		return nil
	}
	db.settle()
	return &Session{
		db:       db,
		snaps:    newRows(db.snapshotsOf),
		subs:     newRows(db.submodulesOf),
		verdicts: newRows(db.verdictsOf),
		negs:     newRows(db.negativesOf),
		invs:     newRows(db.inventoriesOf),
		w:        newWrites(),
	}
}

// Load reads, a query per table, the rows of every one of ats not read
// yet: snapshot records, submodules and verdicts of each, the negatives of
// their repositories. A failed read leaves those to their first lookup.
func (s *Session) Load(ctx context.Context, ats []RepoAt) {
	if s == nil {
		return
	}
	remotes := make([]string, len(ats))
	for i, at := range ats {
		remotes[i] = at.Remote
	}
	// One query after another, on the connection open already: side by
	// side, each on a pooled connection of its own, they opened two more
	// (a file, pragmas, the schema parsed), which cost a warm 300-entry
	// re-plan more than the queries (issue 24).
	s.snaps.load(ctx, &s.mu, ats)
	s.subs.load(ctx, &s.mu, ats)
	s.verdicts.load(ctx, &s.mu, ats)
	s.negs.load(ctx, &s.mu, remotes)
}

// snapshot returns the record of key for at (snapshots.go says what keys
// are).
func (s *Session) snapshot(ctx context.Context, at RepoAt, key string) (string, bool) {
	if s == nil {
		return "", false
	}
	s.mu.Lock()
	d, written := s.w.snaps[at][key]
	s.mu.Unlock()
	if written {
		return d, true
	}
	d, ok := s.snaps.get(ctx, &s.mu, at)[key]
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
	read := s.subs.get(ctx, &s.mu, at)
	s.mu.Lock()
	defer s.mu.Unlock()
	return MergeSubmodules(read, s.w.subs[at])
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
	v := s.verdicts.get(ctx, &s.mu, RepoAt{remote, sha})
	return v, v.Remote != "", ctx.Err()
}

// PutVerdict implements MetaStore.
func (s *Session) PutVerdict(_ context.Context, v Verdict) error {
	if v.Remote == "" || v.SHA == "" {
		return fmt.Errorf("cache: put verdict: remote and sha are required")
	}
	if s != nil {
		s.mu.Lock()
		s.w.verdicts[RepoAt{v.Remote, v.SHA}] = v
		s.verdicts.m[RepoAt{v.Remote, v.SHA}] = v // it replaces whatever is stored
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
	read := s.negs.get(ctx, &s.mu, remote)
	s.mu.Lock()
	negs := slices.DeleteFunc(slices.Clone(read), func(n Negative) bool {
		_, replaced := s.w.negs[n.id()]
		return replaced
	})
	for _, n := range s.w.negs {
		negs = append(negs, n)
	}
	s.mu.Unlock()
	n, found := FirstOf(negs, remote, now, keys)
	return n, found, ctx.Err()
}

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
	doc, ok, err := s.db.marketplace(ctx, remote, sha)
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

// A nil Session's ref methods find none and keep none, as its other
// lookups and writes.

// GetRef implements MetaStore: the resolution this Session keeps, else the
// database's.
func (s *Session) GetRef(ctx context.Context, remote, ref string) (Ref, bool, error) {
	if s == nil {
		return Ref{}, false, nil
	}
	s.mu.Lock()
	r, ok := s.w.refs[[2]string{remote, ref}]
	s.mu.Unlock()
	if ok {
		return r, true, nil
	}
	return s.db.GetRef(ctx, remote, ref)
}

// PutRef implements MetaStore: the resolution is kept for Commit (a warm
// re-plan's one write before it, which cost a transaction of its own).
func (s *Session) PutRef(_ context.Context, r Ref) error {
	if s == nil {
		return nil
	}
	if err := r.check(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.refs[[2]string{r.Remote, r.Ref}] = r
	return nil
}

// ListRefs implements MetaStore.
func (s *Session) ListRefs(ctx context.Context, remote string) ([]Ref, error) {
	if s == nil {
		return nil, nil
	}
	if err := s.putRefsOf(ctx, remote); err != nil {
		return nil, err
	}
	return s.db.ListRefs(ctx, remote)
}

// ReplaceRefs implements MetaStore.
func (s *Session) ReplaceRefs(ctx context.Context, remote string, commits map[string]string, at time.Time) error {
	if s == nil {
		return nil
	}
	if err := s.putRefsOf(ctx, remote); err != nil {
		return err
	}
	return s.db.ReplaceRefs(ctx, remote, commits, at)
}

// putRefsOf writes the resolutions kept of remote's refs now, before a
// listing of them is read or replaced.
func (s *Session) putRefsOf(ctx context.Context, remote string) error {
	s.mu.Lock()
	var refs []Ref
	for k, r := range s.w.refs {
		if k[0] == remote {
			refs = append(refs, r)
			delete(s.w.refs, k)
		}
	}
	s.mu.Unlock()
	for _, r := range refs {
		if err := s.db.PutRef(ctx, r); err != nil {
			return err
		}
	}
	return nil
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

// CommitLater is Commit off the caller's path: it returns at once and
// hands a failure to failed. A Session started later waits for it, as do
// Stats, SnapshotUses, Failures and Close, so what one resolve learnt is
// read, and a failure counted, as before; a warm re-plan's commit (its
// hits, snapshot uses and ref, 1 to 2 ms) overlaps the plan made from it
// instead of delaying it (issue 24).
func (s *Session) CommitLater(ctx context.Context, failed func(error)) {
	if s == nil {
		return
	}
	s.db.committing.RLock()
	go func() {
		defer s.db.committing.RUnlock()
		if err := s.Commit(ctx); err != nil {
			failed(err)
		}
	}()
}

// settle waits for the commits in flight (see CommitLater).
func (db *DB) settle() {
	db.committing.Lock()
	defer db.committing.Unlock()
}

// fold makes what w wrote part of what the Session read, as the database
// will hold it. s.mu held.
func (s *Session) fold(w sessionWrites) {
	for at, recs := range w.snaps {
		if read, ok := s.snaps.m[at]; ok {
			merged := map[string]string{}
			maps.Copy(merged, read)
			maps.Copy(merged, recs)
			s.snaps.m[at] = merged
		}
	}
	for at, list := range w.subs {
		if read, ok := s.subs.m[at]; ok {
			s.subs.m[at] = MergeSubmodules(read, list)
		}
	}
	for id, n := range w.negs {
		if read, ok := s.negs.m[id.Remote]; ok {
			s.negs.m[id.Remote] = append(slices.DeleteFunc(read, func(o Negative) bool { return o.id() == id }), n)
		}
	}
}

func (w *sessionWrites) empty() bool {
	return len(w.snaps)+len(w.subs)+len(w.verdicts)+len(w.negs)+len(w.markets)+len(w.invs)+len(w.refs)+len(w.counts)+len(w.touched) == 0
}
