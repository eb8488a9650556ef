package installer

import (
	"iter"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/source"
)

// Entry is one installed plugin in plugin-packages.json (SPEC §9).
type Entry struct {
	Name string `json:"name"`
	// DisplayName is the name the manifest shows (displayName), when it
	// gives one; Name stays what commands and invocations use.
	DisplayName   string        `json:"displayName,omitempty"`
	Source        source.Source `json:"source"`
	Root          string        `json:"root"`
	Version       string        `json:"version,omitempty"`
	Description   string        `json:"description,omitempty"`
	ManifestKind  string        `json:"manifestKind"`
	Enabled       bool          `json:"enabled"`
	Commit        string        `json:"commit,omitempty"`
	ContentDigest string        `json:"contentDigest,omitempty"`
	InstalledAt   time.Time     `json:"installedAt"`
	Status        string        `json:"status"`
	StatusReason  string        `json:"statusReason,omitempty"`
	// Link marks a --link install: Root is the user's own directory, which
	// is never copied, deleted or digest-checked.
	Link bool `json:"link,omitempty"`
	// Marketplace is the marketplace source an entry was planned from, and
	// MarketplaceName the name it is known by (marketplaces.json): update
	// re-reads it to follow the entry's pin.
	Marketplace     source.Source `json:"marketplace,omitzero"`
	MarketplaceName string        `json:"marketplaceName,omitempty"`
	// MarketplaceCommit is the commit of its marketplace its entry was
	// read at when it was installed or last moved: a lock reads the entry
	// there again, whatever commit the marketplace was read at since.
	MarketplaceCommit string `json:"marketplaceCommit,omitempty"`
	// Subdir is the plugin's folder in its repository, recorded beside a
	// source on a host whose pinned form cannot carry it (SPEC §7).
	Subdir string `json:"subdir,omitempty"`
	// EntryManifest is what its marketplace entry said about the plugin
	// (strict: false: its whole manifest), and ManifestPrefer the
	// marketplace's format: the installed copy is read with them again.
	EntryManifest  *manifest.EntryManifest `json:"entryManifest,omitempty"`
	ManifestPrefer manifest.Kind           `json:"manifestPrefer,omitempty"`
	// Dependencies are the installed plugins this one needs; Dependency
	// marks one installed only because others needed it (prune removes it
	// once none does).
	Dependencies []string `json:"dependencies,omitempty"`
	Dependency   bool     `json:"dependency,omitempty"`
	// Tag is the release tag a dependency's range took it at, and
	// ResolvedVersion that tag's version (Claude Code's resolvedVersion):
	// dependents' ranges are checked against it.
	Tag             string `json:"tag,omitempty"`
	ResolvedVersion string `json:"resolvedVersion,omitempty"`
	// Config are its non-sensitive userConfig values, by option key;
	// ConfigFile names the file of config/ that holds its sensitive ones
	// (secrets.go). Defaults are not recorded: they are the manifest's.
	Config     map[string]manifest.Value `json:"config,omitempty"`
	ConfigFile string                    `json:"configFile,omitempty"`
}

// Registry is the whole of plugin-packages.json, the only authority on what
// is installed.
type Registry struct {
	Version int     `json:"version"`
	Plugins []Entry `json:"plugins"`
}

const registryVersion = 1

func (r *Registry) state() stateFile        { return stateFile{what: "registry", current: registryVersion} }
func (r *Registry) version() *int           { return &r.Version }
func (r *Registry) names() iter.Seq[string] { return namesOf(r.Plugins, entryName) }
func entryName(e *Entry) string             { return e.Name }

// LoadRegistry reads the registry. A missing file is an empty registry; a
// corrupt one fails closed with registry.unreadable and is never rewritten.
func LoadRegistry(path string) (*Registry, error) {
	return loadState[Registry](path, nil)
}

// plannedRegistry is LoadRegistry for planning: with the daemon's Decoded,
// the same *Registry while the file's bytes stay the same. Callers only
// read it; apply, remove and the rest load their own under the home lock.
func (in *Installer) plannedRegistry() (*Registry, error) {
	return loadState[Registry](in.Home.RegistryPath(), in.Decoded)
}

// Save publishes the registry, its plugins sorted by name (saveState).
func (r *Registry) Save(path string) error {
	sort.Slice(r.Plugins, func(i, j int) bool { return r.Plugins[i].Name < r.Plugins[j].Name })
	return saveState(path, r)
}

// renameDependency makes every plugin that needs from need to instead.
func (r *Registry) renameDependency(from, to string) {
	for i := range r.Plugins {
		deps := r.Plugins[i].Dependencies
		if slices.Contains(deps, from) {
			deps = append(slices.DeleteFunc(slices.Clone(deps), func(d string) bool { return d == from }), to)
			slices.Sort(deps)
			r.Plugins[i].Dependencies = slices.Compact(deps)
		}
	}
}

// Find returns the entry named name.
func (r *Registry) Find(name string) (*Entry, bool) { return findNamed(r.Plugins, entryName, name) }

// Put adds or replaces e.
func (r *Registry) Put(e Entry) {
	if old, ok := r.Find(e.Name); ok {
		*old = e
		return
	}
	r.Plugins = append(r.Plugins, e)
}

// Delete removes name.
func (r *Registry) Delete(name string) { r.Plugins = deleteNamed(r.Plugins, entryName, name) }

// Dependents are the installed plugins that need name, sorted.
func (r *Registry) Dependents(name string) []string {
	var out []string
	for _, e := range r.Plugins {
		if e.Name != name && slices.Contains(e.Dependencies, name) {
			out = append(out, e.Name)
		}
	}
	sort.Strings(out)
	return out
}

func notInstalled(name string) error {
	return plugind.Errorf(plugind.CodeNotFound, "plugin %q is not installed", name)
}

// usesRoot reports whether an entry names root, however it spells it (a
// hand-edited "plugins/q/" still holds plugins/q: it is not free).
func (r *Registry) usesRoot(root string) bool {
	return slices.ContainsFunc(r.Plugins, func(e Entry) bool { return filepath.Clean(e.Root) == root })
}

// loadOptions read the installed copy as it was read when planned.
func (e *Entry) loadOptions() manifest.LoadOptions {
	return manifest.LoadOptions{Name: e.Name, Implied: e.Name, Entry: e.EntryManifest, Prefer: e.ManifestPrefer}
}
