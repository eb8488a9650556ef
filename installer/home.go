// Package installer plans, approves, applies and publishes plugin packages
// into a Reasonix home (SPEC §9), and manages what is installed there.
package installer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"reasonix.io/plugind"
)

// Home is the layout of $REASONIX_HOME (SPEC §4).
type Home struct {
	Dir string
}

// DefaultHome is the home at $REASONIX_HOME, or ~/.reasonix.
func DefaultHome(getenv func(string) string) (Home, error) {
	if h := getenv("REASONIX_HOME"); h != "" {
		dir, err := filepath.Abs(h)
		return Home{Dir: dir}, err
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return Home{}, fmt.Errorf("find home directory (set REASONIX_HOME): %w", err)
	}
	return Home{Dir: filepath.Join(u, ".reasonix")}, nil
}

func (h Home) RegistryPath() string { return filepath.Join(h.Dir, "plugin-packages.json") }
func (h Home) PluginsDir() string   { return filepath.Join(h.Dir, "plugins") }
func (h Home) CacheDir() string     { return filepath.Join(h.Dir, "cache") }
func (h Home) CachePath() string    { return filepath.Join(h.Dir, "cache", "cache.db") }
func (h Home) StoreDir() string     { return filepath.Join(h.Dir, "store") }
func (h Home) TokenPath() string    { return filepath.Join(h.Dir, "serve.token") }
func (h Home) LockPath() string     { return filepath.Join(h.Dir, ".lock") }

// MarketplacesPath is marketplaces.json, the known marketplaces (SPEC §7).
func (h Home) MarketplacesPath() string { return filepath.Join(h.Dir, "marketplaces.json") }

// MirrorPolicyPath is mirror/policy.json, the team mirror's runtime rule
// as last read, which plans that cannot ask it apply (SPEC §15, §17).
func (h Home) MirrorPolicyPath() string { return filepath.Join(h.Dir, "mirror", "policy.json") }

// PluginRoot is the canonical root of an installed copy.
func (h Home) PluginRoot(name string) string { return filepath.Join(h.PluginsDir(), name) }

// AddrPath is serve.addr, where a running daemon writes the address it
// listens on; LogPath is serve.log, the log of a daemon `reasonix studio`
// started.
func (h Home) AddrPath() string { return filepath.Join(h.Dir, "serve.addr") }
func (h Home) LogPath() string  { return filepath.Join(h.Dir, "serve.log") }

// Secure makes an existing home private to its user (plugind.Tighten):
// the home itself, the folders reasonix makes in it and its own files.
// A home that other users can reach exposes serve.addr, the cache and the
// registry, and one they can write lets them replace any of it. It is made
// private rather than only warned about because nothing in it is meant for
// anyone else; tightening the home alone already closes everything beneath
// it, and the rest stays private if the home is loosened again. The cache
// file is the cache's own (cache.Open); serve.token is not tightened but
// refused when loose (server.LoadOrCreateToken), since others may have read
// it already. It returns a note naming what it changed, "" when nothing.
func (h Home) Secure() (string, error) {
	var changed []string
	dir := h.Dir
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real // a home that is a link to a folder: the folder
	}
	folders := []string{dir, h.CacheDir(), h.StoreDir(), h.PluginsDir(), h.ConfigDir()}
	for i, p := range append(folders, h.RegistryPath(), h.MarketplacesPath(), h.AddrPath(), h.LogPath(), h.LockPath()) {
		was, ok, err := plugind.Tighten(p, i < len(folders))
		if err != nil {
			return "", fmt.Errorf("the Reasonix home is not private to you: %w", err)
		}
		if ok {
			changed = append(changed, fmt.Sprintf("%s (was %#o)", p, was))
		}
	}
	if len(changed) == 0 {
		return "", nil
	}
	return "other users could reach the Reasonix home; made private to you: " + strings.Join(changed, ", "), nil
}
