// Package installer plans, approves, applies and publishes plugin packages
// into a Reasonix home (SPEC §9), and manages what is installed there.
package installer

import (
	"fmt"
	"os"
	"path/filepath"

	"reasonix.io/plugind"
)

// Home is the layout of $REASONIX_HOME (SPEC §4).
type Home struct {
	Dir string
}

// DefaultHomeDir returns $REASONIX_HOME, or ~/.reasonix.
func DefaultHomeDir(getenv func(string) string) (string, error) {
	if h := getenv("REASONIX_HOME"); h != "" {
		return filepath.Abs(h)
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find home directory (set REASONIX_HOME): %w", err)
	}
	return filepath.Join(u, ".reasonix"), nil
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

// PluginRoot is the canonical root of an installed copy.
func (h Home) PluginRoot(name string) string { return filepath.Join(h.PluginsDir(), name) }

// Secure makes an existing home private to its user (plugind.TightenDir):
// a home that other users can reach exposes serve.addr, the cache and the
// registry, and one they can write lets them replace any of it. It is made
// private rather than only warned about because nothing in it is meant for
// anyone else, and tightening the folder itself closes everything beneath
// it at once. It returns a note when it changed the mode.
func (h Home) Secure() (string, error) {
	return plugind.TightenDir(h.Dir, "the Reasonix home")
}
