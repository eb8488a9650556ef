package host

import (
	"context"
	"sync"
	"time"

	"reasonix.io/plugind/cache"
)

// memMeta is a MetaStore in memory: what the Cached layer remembers, open
// to the test's eyes. It keeps the cache's rules that Cached relies on (a
// ref listing replaces the last one, an unchanged ref keeps its ETag, the
// first unexpired negative of the keys wins, by cache.FirstOf) and nothing
// else. failWrites makes every write fail, as a full disk would.
type memMeta struct {
	mu         sync.Mutex
	refs       map[[2]string]cache.Ref
	verdicts   map[[2]string]cache.Verdict
	negatives  []cache.Negative
	counts     map[string]int // "ref hit", "verdict miss"…
	writes     int
	failWrites error
}

func newMemMeta() *memMeta {
	return &memMeta{refs: map[[2]string]cache.Ref{}, verdicts: map[[2]string]cache.Verdict{}, counts: map[string]int{}}
}

func (m *memMeta) write() error {
	m.writes++
	return m.failWrites
}

func (m *memMeta) GetRef(_ context.Context, remote, ref string) (cache.Ref, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.refs[[2]string{remote, ref}]
	return r, ok, nil
}

func (m *memMeta) PutRef(_ context.Context, r cache.Ref) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.write(); err != nil {
		return err
	}
	m.refs[[2]string{r.Remote, r.Ref}] = r
	return nil
}

func (m *memMeta) ListRefs(_ context.Context, remote string) ([]cache.Ref, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []cache.Ref
	for k, r := range m.refs {
		if k[0] == remote {
			out = append(out, r)
		}
	}
	return out, nil
}

func (m *memMeta) ReplaceRefs(_ context.Context, remote string, commits map[string]string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.write(); err != nil {
		return err
	}
	for k := range m.refs {
		if _, ok := commits[k[1]]; k[0] == remote && !ok {
			delete(m.refs, k)
		}
	}
	for ref, sha := range commits {
		k := [2]string{remote, ref}
		if m.refs[k].SHA != sha {
			m.refs[k] = cache.Ref{Remote: remote, Ref: ref, SHA: sha, ResolvedAt: at}
		}
	}
	return nil
}

func (m *memMeta) GetVerdict(_ context.Context, remote, sha string) (cache.Verdict, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.verdicts[[2]string{remote, sha}]
	return v, ok, nil
}

func (m *memMeta) PutVerdict(_ context.Context, v cache.Verdict) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.write(); err != nil {
		return err
	}
	m.verdicts[[2]string{v.Remote, v.SHA}] = v
	return nil
}

func (m *memMeta) FirstNegative(_ context.Context, remote string, now time.Time, keys ...cache.NegativeKey) (cache.Negative, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := cache.FirstOf(m.negatives, remote, now, keys)
	return n, ok, nil
}

func (m *memMeta) PutNegative(_ context.Context, n cache.Negative) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.write(); err != nil {
		return err
	}
	for i, old := range m.negatives {
		if old.Kind == n.Kind && old.Remote == n.Remote && old.SHA == n.SHA && old.Path == n.Path {
			m.negatives[i] = n
			return nil
		}
	}
	m.negatives = append(m.negatives, n)
	return nil
}

func (m *memMeta) Count(_ context.Context, kind string, hit bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	word := " miss"
	if hit {
		word = " hit"
	}
	m.counts[kind+word]++
	return nil
}

// Negatives returns the remembered negatives.
func (m *memMeta) Negatives() []cache.Negative {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]cache.Negative(nil), m.negatives...)
}

func (m *memMeta) Verdict(remote, sha string) (cache.Verdict, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.verdicts[[2]string{remote, sha}]
	return v, ok
}

func (m *memMeta) Ref(remote, ref string) (cache.Ref, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.refs[[2]string{remote, ref}]
	return r, ok
}

func (m *memMeta) Counts(kind string) (hit, miss int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts[kind+" hit"], m.counts[kind+" miss"]
}

// testClock is a test's time, moved by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *testClock { return &testClock{now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
