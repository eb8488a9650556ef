package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"sync"

	"golang.org/x/sync/singleflight"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/jsonout"
)

// listView is what GET /plugins serves: the installed plugins as `plugin
// list --json` prints them, loaded from the registry and kept until the
// registry's bytes change (every mutation, by the daemon or the CLI,
// replaces the file) or POST /extensions/reload asks for a fresh look
// (which also re-verifies every installed root against its digest, catching
// hand edits). Loading it reads every root, so a burst of clients shares one
// load; no read ever takes the home lock.
type listView struct {
	in     *installer.Installer
	life   context.Context // loads are shared, so not bound to one request
	flight singleflight.Group

	mu    sync.Mutex
	key   [32]byte
	body  []byte
	valid bool
}

// get returns the current listing, encoded.
func (v *listView) get(ctx context.Context) ([]byte, error) {
	key, keyed := v.registryKey()
	if keyed {
		v.mu.Lock()
		if v.valid && v.key == key {
			body := v.body
			v.mu.Unlock()
			return body, nil
		}
		v.mu.Unlock()
	}
	ch := v.flight.DoChan(string(key[:]), func() (any, error) { return v.load(v.life, key, keyed) })
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.([]byte), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// reload loads the listing afresh, whatever the registry's bytes. An error
// (a corrupt or unreadable registry) leaves the last good listing in place.
func (v *listView) reload(ctx context.Context) error {
	key, keyed := v.registryKey()
	_, err := v.load(ctx, key, keyed)
	return err
}

// load lists the installed plugins and remembers the result under key, the
// hash of the registry bytes read before listing: if the registry changed in
// between, the next request sees a different key and loads again.
func (v *listView) load(ctx context.Context, key [32]byte, keyed bool) ([]byte, error) {
	infos, err := v.in.List(ctx)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := jsonout.Write(&buf, map[string]any{"plugins": infos}); err != nil {
		return nil, err
	}
	body := buf.Bytes()
	if keyed {
		v.mu.Lock()
		v.key, v.body, v.valid = key, body, true
		v.mu.Unlock()
	}
	return body, nil
}

// registryKey hashes the registry file; a missing registry has the hash of
// nothing (it lists as empty). keyed is false when the file cannot be read,
// so the caller loads (and reports the read error) instead of caching.
func (v *listView) registryKey() (key [32]byte, keyed bool) {
	data, err := os.ReadFile(v.in.Home.RegistryPath())
	if err != nil && !os.IsNotExist(err) {
		return key, false
	}
	return sha256.Sum256(data), true
}
