package cache

import (
	lru "github.com/hashicorp/golang-lru/v2"
)

// Decoded keeps, for the life of a daemon, what planning decoded from
// bytes that did not change: marketplace documents (by their bytes, format
// and options), the registry (by its bytes) and cached manifests (by the
// content-addressed key of their store tree). The daemon re-plans the same
// marketplaces over and over, and these decodes were most of a warm plan
// of a thousand entries. What it hands out is shared between plans and
// must only be read. One instance serves the resolver and the installer;
// a nil *Decoded (the CLI, which plans once) keeps nothing.
type Decoded struct {
	lru *lru.Cache[string, any]
}

// DecodedEntries bounds Decoded by count, not bytes: its entries are a few
// KiB each (a manifest) up to a few hundred KiB (a thousand-entry
// marketplace), and what it must hold is a number of them — a warm
// re-plan of the largest marketplace we plan against (1,000 entries) needs
// every one of its manifests, its document and the registry, and an LRU
// smaller than what a plan walks through misses on every entry. 2,048
// holds two such marketplaces at once, a few MiB in all.
const DecodedEntries = 2048

// NewDecoded returns an empty Decoded holding at most n entries.
func NewDecoded(n int) *Decoded {
	c, err := lru.New[string, any](n)
	if err != nil {
		panic(err) // only for n <= 0, a programming error
	}
	return &Decoded{lru: c}
}

// Remember returns what decode made of the bytes key names: remembered,
// or decoded now and remembered. Errors are not remembered (they are
// cheap to find again). key must say everything the result depends on; it
// is asked for only when d keeps anything (hashing a large document is
// not free).
func Remember[T any](d *Decoded, key func() string, decode func() (T, error)) (T, error) {
	if d == nil {
		return decode()
	}
	k := key()
	if v, ok := d.lru.Get(k); ok {
		if t, ok := v.(T); ok {
			return t, nil
		}
	}
	t, err := decode()
	if err == nil {
		d.lru.Add(k, t)
	}
	return t, err
}

// Has reports whether key is remembered.
func (d *Decoded) Has(key string) bool {
	return d != nil && d.lru.Contains(key)
}
