package installer

import (
	"runtime"
	"sync"

	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/resolver"
)

// manifestPreload reads the manifests of a bulk plan's entries while the
// resolver still downloads the others (resolver.Request.Ready): on a cold
// install of 300 entries the downloads leave a core idle for a third of a
// second, and reading the 300 manifests after them was a fifth of the
// install (issue 24). loadManifest takes what it finds here instead of
// reading the folder again; the inventory cache is written as before.
type manifestPreload struct {
	slots chan struct{} // bounds the reads running at once
	wg    sync.WaitGroup
	mu    sync.Mutex
	byKey map[string]*preloaded
}

type preloaded struct {
	done chan struct{} // closed when pkg and err are set
	pkg  *manifest.Package
	err  error
}

func newManifestPreload() *manifestPreload {
	return &manifestPreload{slots: make(chan struct{}, runtime.GOMAXPROCS(0)), byKey: map[string]*preloaded{}}
}

// ready starts reading c's manifest as a marketplace entry's (not single:
// see loadOptions), unless c came from the store: a tree fetched before
// most likely has its inventory cached, and a warm re-plan reads nothing.
func (p *manifestPreload) ready(c resolver.Candidate) {
	if c.Digest == "" || c.Transport == "store" {
		return
	}
	opts := loadOptions(Request{}, c, false)
	key := manifestKey(c, opts)
	p.mu.Lock()
	if _, ok := p.byKey[key]; ok {
		p.mu.Unlock()
		return
	}
	pl := &preloaded{done: make(chan struct{})}
	p.byKey[key] = pl
	p.mu.Unlock()
	p.wg.Go(func() {
		p.slots <- struct{}{}
		pl.pkg, pl.err = manifest.Load(c.Dir, opts)
		<-p.slots
		close(pl.done)
	})
}

// take returns what Load made of the tree key names, waiting for a read
// under way; ok is false when none was started.
func (p *manifestPreload) take(key string) (pkg *manifest.Package, err error, ok bool) {
	if p == nil {
		return nil, nil, false
	}
	p.mu.Lock()
	pl, ok := p.byKey[key]
	p.mu.Unlock()
	if !ok {
		return nil, nil, false
	}
	<-pl.done
	return pl.pkg, pl.err, true
}

// wait returns when every read started has ended, so none outlives its plan.
func (p *manifestPreload) wait() { p.wg.Wait() }
