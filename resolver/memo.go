package resolver

import (
	"context"
	"sync"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
)

// memo is the resolver's view of the cache: nil-safe (no cache, nothing
// remembered) and forgiving (a failed write is reported once and the
// operation goes on), so no call site has to check either.
type memo struct {
	db      *cache.DB
	onError func(error)
	uses    *useLog
}

func (s *Sources) memo() memo {
	return memo{db: s.cfg.Cache, onError: s.cacheWriteFailed, uses: &s.uses}
}

// useLog gathers lookup counts and snapshot uses, which change nothing a
// plan reads, to write them in one transaction when a Resolve ends
// (flushUses) instead of one transaction per lookup.
type useLog struct {
	mu      sync.Mutex
	counts  map[string]cache.HitMiss
	touched map[string]time.Time
}

func (u *useLog) count(kind string, hit bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.counts == nil {
		u.counts = map[string]cache.HitMiss{}
	}
	c := u.counts[kind]
	if hit {
		c.Hits++
	} else {
		c.Misses++
	}
	u.counts[kind] = c
}

func (u *useLog) touch(digest string, at time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.touched == nil {
		u.touched = map[string]time.Time{}
	}
	if at.After(u.touched[digest]) {
		u.touched[digest] = at
	}
}

func (u *useLog) take() (map[string]cache.HitMiss, map[string]time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	c, t := u.counts, u.touched
	u.counts, u.touched = nil, nil
	return c, t
}

// flushUses writes what the useLog gathered.
func (s *Sources) flushUses(ctx context.Context) {
	counts, touched := s.uses.take()
	if s.cfg.Cache == nil {
		return
	}
	// Written even when ctx was cancelled: the uses happened, and GC
	// reads snapshot uses.
	if err := s.cfg.Cache.RecordUses(context.WithoutCancel(ctx), counts, touched); err != nil {
		s.cacheWriteFailed(err)
	}
}

func (m memo) wrote(err error) {
	if err != nil {
		m.onError(err)
	}
}

func (m memo) snapshot(ctx context.Context, remote, sha, key string) (string, bool) {
	if m.db == nil {
		return "", false
	}
	if rows, ok := ctx.Value(snapRowsKey{}).(*snapRows); ok {
		return rows.get(ctx, m.db, remote, sha, key)
	}
	d, ok, err := m.db.GetSnapshot(ctx, remote, sha, key)
	return d, err == nil && ok
}

func (m memo) putSnapshot(ctx context.Context, remote, sha, key, digest string) {
	m.putSnapshots(ctx, []cache.SnapshotRecord{{Remote: remote, SHA: sha, Subdir: key, Digest: digest}})
}

// putSnapshots records recs: in one transaction, or with the context's
// snapWrites, later with the rest (flushSnapWrites). The Resolve's
// snapRows hear of them at once either way.
func (m memo) putSnapshots(ctx context.Context, recs []cache.SnapshotRecord) {
	if m.db == nil {
		return
	}
	if w, ok := ctx.Value(snapWritesKey{}).(*snapWrites); ok {
		w.mu.Lock()
		w.recs = append(w.recs, recs...)
		w.mu.Unlock()
	} else {
		m.wrote(m.db.PutSnapshots(ctx, recs))
	}
	if rows, ok := ctx.Value(snapRowsKey{}).(*snapRows); ok {
		for _, r := range recs {
			rows.put(r.Remote, r.SHA, r.Subdir, r.Digest)
		}
	}
}

// snapWrites gathers snapshot records for one transaction: a bulk plan
// records a folder digest per entry, one after another.
type snapWrites struct {
	mu   sync.Mutex
	recs []cache.SnapshotRecord
}

type snapWritesKey struct{}

func withSnapWrites(ctx context.Context) context.Context {
	return context.WithValue(ctx, snapWritesKey{}, &snapWrites{})
}

// flushSnapWrites writes what ctx's snapWrites gathered.
func (m memo) flushSnapWrites(ctx context.Context) {
	w, ok := ctx.Value(snapWritesKey{}).(*snapWrites)
	if !ok || m.db == nil {
		return
	}
	w.mu.Lock()
	recs := w.recs
	w.recs = nil
	w.mu.Unlock()
	if len(recs) > 0 {
		// Written even when ctx was cancelled: the digests are true.
		m.wrote(m.db.PutSnapshots(context.WithoutCancel(ctx), recs))
	}
}

// snapRows holds, for one Resolve, the snapshot records of each (remote,
// SHA) it asked about, read in one query (cache.GetSnapshots) the first
// time: a bulk plan looks up the whole tree, each folder's snapshot and
// each folder's digest of every entry. It lives in the Resolve's context
// only, so records forgotten by another process (a quarantined snapshot)
// are read afresh by the next Resolve.
type snapRows struct {
	mu   sync.Mutex
	byAt map[string]map[string]string // remote+"@"+sha → subdir key → digest
	// subs are the submodules recorded for each (remote, SHA) read.
	subs map[string][]plugind.Submodule
}

type snapRowsKey struct{}

func withSnapRows(ctx context.Context) context.Context {
	if _, ok := ctx.Value(snapRowsKey{}).(*snapRows); ok {
		return ctx
	}
	return context.WithValue(ctx, snapRowsKey{}, &snapRows{byAt: map[string]map[string]string{}, subs: map[string][]plugind.Submodule{}})
}

func (r *snapRows) get(ctx context.Context, db *cache.DB, remote, sha, key string) (string, bool) {
	at := remote + "@" + sha
	r.mu.Lock()
	rows, ok := r.byAt[at]
	r.mu.Unlock()
	if !ok {
		got, err := db.GetSnapshots(ctx, remote, sha)
		if err != nil {
			return "", false // not remembered: a read failure is a miss
		}
		r.mu.Lock()
		if cur, raced := r.byAt[at]; raced {
			for k, d := range got {
				if _, ok := cur[k]; !ok {
					cur[k] = d
				}
			}
			got = cur
		}
		r.byAt[at] = got
		rows = got
		d, ok := rows[key]
		r.mu.Unlock()
		return d, ok
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := rows[key]
	return d, ok
}

// preload reads the records of every (remote, SHA) in ats not read yet,
// in one query: a bulk plan's locate step otherwise asks once per
// repository. A failed read leaves them to get, one by one.
func (r *snapRows) preload(ctx context.Context, db *cache.DB, ats []cache.RepoAt) {
	var want []cache.RepoAt
	r.mu.Lock()
	for _, at := range ats {
		if _, ok := r.byAt[at.Remote+"@"+at.SHA]; !ok {
			want = append(want, at)
		}
	}
	r.mu.Unlock()
	if len(want) < 2 {
		return
	}
	got, err := db.GetSnapshotsOf(ctx, want)
	if err != nil {
		return
	}
	subs, serr := db.GetSubmodulesOf(ctx, want)
	r.mu.Lock()
	defer r.mu.Unlock()
	for at, rows := range got {
		if _, raced := r.byAt[at.Remote+"@"+at.SHA]; !raced {
			r.byAt[at.Remote+"@"+at.SHA] = rows
		}
	}
	if serr != nil {
		return
	}
	for at, list := range subs {
		if _, raced := r.subs[at.Remote+"@"+at.SHA]; !raced {
			r.subs[at.Remote+"@"+at.SHA] = list
		}
	}
}

// submodules returns the submodules recorded for remote@sha, read once per
// Resolve.
func (r *snapRows) submodules(ctx context.Context, db *cache.DB, remote, sha string) []plugind.Submodule {
	at := remote + "@" + sha
	r.mu.Lock()
	list, ok := r.subs[at]
	r.mu.Unlock()
	if ok {
		return list
	}
	got, err := db.GetSubmodulesOf(ctx, []cache.RepoAt{{Remote: remote, SHA: sha}})
	if err != nil {
		return nil // not remembered: a read failure is a miss
	}
	list = got[cache.RepoAt{Remote: remote, SHA: sha}]
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, raced := r.subs[at]; raced {
		return cur
	}
	r.subs[at] = list
	return list
}

func (r *snapRows) putSubmodules(remote, sha string, list []plugind.Submodule) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := remote + "@" + sha
	if cur, ok := r.subs[at]; ok {
		r.subs[at] = mergeSubmodules(cur, list)
	}
}

func (r *snapRows) put(remote, sha, key, digest string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rows, ok := r.byAt[remote+"@"+sha]; ok {
		rows[key] = digest
	}
}

// submodules are those recorded for remote@sha.
func (m memo) submodules(ctx context.Context, remote, sha string) []plugind.Submodule {
	if m.db == nil {
		return nil
	}
	if rows, ok := ctx.Value(snapRowsKey{}).(*snapRows); ok {
		return rows.submodules(ctx, m.db, remote, sha)
	}
	got, err := m.db.GetSubmodulesOf(ctx, []cache.RepoAt{{Remote: remote, SHA: sha}})
	if err != nil {
		return nil
	}
	return got[cache.RepoAt{Remote: remote, SHA: sha}]
}

// putSubmodules records what a fetch of remote@sha found.
func (m memo) putSubmodules(ctx context.Context, remote, sha string, list []plugind.Submodule) {
	if m.db == nil || len(list) == 0 {
		return
	}
	m.wrote(m.db.PutSubmodules(ctx, remote, sha, list))
	if rows, ok := ctx.Value(snapRowsKey{}).(*snapRows); ok {
		rows.putSubmodules(remote, sha, list)
	}
}

func (m memo) touch(_ context.Context, digest string, now time.Time) {
	if m.db != nil {
		m.uses.touch(digest, now)
	}
}

func (m memo) count(_ context.Context, kind string, hit bool) {
	if m.db != nil {
		m.uses.count(kind, hit)
	}
}

func (m memo) marketplace(ctx context.Context, remote, sha string) ([]byte, bool) {
	if m.db == nil {
		return nil, false
	}
	doc, ok, err := m.db.GetMarketplace(ctx, remote, sha)
	return doc, err == nil && ok
}

func (m memo) putMarketplace(ctx context.Context, remote, sha string, doc []byte) {
	if m.db != nil {
		m.wrote(m.db.PutMarketplace(ctx, remote, sha, doc))
	}
}
