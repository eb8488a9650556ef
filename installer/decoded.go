package installer

import (
	"crypto/sha256"

	"reasonix.io/plugind/cache"
)

// plannedRegistry is LoadRegistry for planning: with the daemon's Decoded,
// the same *Registry while the file's bytes stay the same. Callers only
// read it; apply, remove and the rest load their own under the home lock.
func (in *Installer) plannedRegistry() (*Registry, error) {
	path := in.home.RegistryPath()
	if in.decoded == nil {
		return LoadRegistry(path)
	}
	data, found, err := readState(new(Registry).state(), path)
	if err != nil {
		return nil, err
	}
	if !found {
		return &Registry{Version: registryVersion}, nil
	}
	return cache.Remember(in.decoded, func() string {
		sum := sha256.Sum256(data)
		return "registry\x00" + string(sum[:])
	}, func() (*Registry, error) { return parseState[Registry](path, data) })
}
