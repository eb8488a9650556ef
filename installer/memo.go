package installer

import (
	"crypto/sha256"
	"encoding/json"
	"sync"

	"reasonix.io/plugind/manifest"
)

// planMemo keeps, for the life of an Installer, what planning decodes
// again and again from bytes that did not change: the registry (keyed by
// its bytes) and cached manifests (keyed by their content-addressed cache
// key). The daemon re-plans the same marketplace over and over; for a
// thousand entries these decodes were half of a warm plan. What it hands
// out is shared between plans and must only be read.
type planMemo struct {
	mu        sync.Mutex
	regSum    [32]byte
	reg       *Registry
	manifests map[string]*manifest.Package
}

// maxMemoManifests bounds the manifests kept (a few KiB each): more than a
// 1,000-entry marketplace needs, and the map starts over when full.
const maxMemoManifests = 2048

// plannedRegistry is LoadRegistry for planning: with a memo, the same
// *Registry while the file's bytes stay the same. Callers only read it;
// apply, remove and the rest load their own under the home lock.
func (in *Installer) plannedRegistry() (*Registry, error) {
	path := in.home.RegistryPath()
	if in.memo == nil {
		return LoadRegistry(path)
	}
	data, found, err := readState(new(Registry).state(), path)
	if err != nil {
		return nil, err
	}
	if !found {
		return &Registry{Version: registryVersion}, nil
	}
	sum := sha256.Sum256(data)
	m := in.memo
	m.mu.Lock()
	if m.reg != nil && m.regSum == sum {
		reg := m.reg
		m.mu.Unlock()
		return reg, nil
	}
	m.mu.Unlock()
	reg, err := parseState[Registry](path, data)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.regSum, m.reg = sum, reg
	m.mu.Unlock()
	return reg, nil
}

// memoManifest returns the manifest decoded before under key.
func (in *Installer) memoManifest(key string) (*manifest.Package, bool) {
	if in.memo == nil {
		return nil, false
	}
	in.memo.mu.Lock()
	defer in.memo.mu.Unlock()
	pkg, ok := in.memo.manifests[key]
	return pkg, ok
}

// memoized reports a manifest decoded before under key.
func (in *Installer) memoized(key string) bool {
	_, ok := in.memoManifest(key)
	return ok
}

// decodeManifest decodes a cached manifest and remembers it under key.
func (in *Installer) decodeManifest(key string, body []byte) (*manifest.Package, bool) {
	var pkg manifest.Package
	if json.Unmarshal(body, &pkg) != nil {
		return nil, false
	}
	in.rememberManifest(key, &pkg)
	return &pkg, true
}

func (in *Installer) rememberManifest(key string, pkg *manifest.Package) {
	m := in.memo
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.manifests == nil || len(m.manifests) >= maxMemoManifests {
		m.manifests = map[string]*manifest.Package{}
	}
	m.manifests[key] = pkg
}
