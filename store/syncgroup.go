package store

import "sync"

// syncGroup coalesces syncfs(2) calls on one filesystem (group commit).
// Committing many snapshots at once (a bulk install fetches dozens of
// repositories concurrently) would otherwise queue one whole-filesystem
// flush per snapshot, each waiting on the one before. A caller arriving
// while a flush runs cannot rely on it — the flush may have begun before
// the caller's writes — so it waits for the next one, which it shares
// with everyone else who arrived meanwhile. Every caller therefore
// returns only after a flush that started after it was called: its
// writes are durable, as an unshared syncfs would have made them.
type syncGroup struct {
	mu      sync.Mutex
	flushed sync.Cond // broadcast when a flush ends
	running bool
	started uint64 // flushes begun
	ended   uint64 // the number of the last flush that ended
	err     error  // that flush's result
	flush   func(root string) error
}

func newSyncGroup(flush func(root string) error) *syncGroup {
	g := &syncGroup{flush: flush}
	g.flushed.L = &g.mu
	return g
}

// sync flushes the filesystem holding root, sharing the flush with
// concurrent callers. All roots given to one group must be on one
// filesystem (the leader's root is the one flushed).
func (g *syncGroup) sync(root string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	// A flush numbered need or later starts after this moment.
	need := g.started + 1
	for g.ended < need {
		if g.running {
			g.flushed.Wait()
			continue
		}
		g.running = true
		g.started++
		n := g.started
		g.mu.Unlock()
		err := g.flush(root)
		g.mu.Lock()
		g.running, g.ended, g.err = false, n, err
		g.flushed.Broadcast()
	}
	return g.err
}
