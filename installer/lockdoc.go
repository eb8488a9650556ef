package installer

import (
	"context"
	"fmt"
	"maps"

	"reasonix.io/plugind/lockfile"
)

// LockHomeDocument builds the lock of this home (SPEC §16) from its
// registry and its known marketplaces. What a lock cannot carry is left
// out, each with a warning naming it: a linked or local plugin (a folder
// on this machine, no commit to pin), a local marketplace, and a plugin
// whose marketplace entry decides how it is read but whose marketplace
// cannot be locked.
func (in *Installer) LockHomeDocument(context.Context) (*lockfile.Lock, []string, error) {
	reg, err := LoadRegistry(in.Home.RegistryPath())
	if err != nil {
		return nil, nil, err
	}
	known, err := LoadMarketplaces(in.Home.MarketplacesPath())
	if err != nil {
		return nil, nil, err
	}
	lock, warnings := LockOf(reg, known)
	return lock, warnings, nil
}

// LockOf is the lock of a registry and the known marketplaces beside it
// (see LockHomeDocument), sorted as its file has it.
func LockOf(reg *Registry, known *Marketplaces) (*lockfile.Lock, []string) {
	lock := &lockfile.Lock{Version: lockfile.Version, Marketplaces: []lockfile.Marketplace{}, Plugins: []lockfile.Plugin{}}
	warnings := []string{}
	markets := map[string]*KnownMarketplace{}
	for i := range known.Marketplaces {
		k := &known.Marketplaces[i]
		if !k.Source.IsRemote() {
			warnings = append(warnings, fmt.Sprintf("marketplace %s is not locked: %s is a folder on this machine, which another cannot read", k.Name, k.Source))
			continue
		}
		markets[k.Name] = k
		lock.Marketplaces = append(lock.Marketplaces, lockfile.Marketplace{Name: k.Name, Source: k.Source, Subdir: k.Subdir, Commit: k.Commit})
	}
	for _, e := range reg.Plugins {
		if e.Link || !e.Source.IsRemote() {
			how := "installed from a folder"
			if e.Link {
				how = "linked"
			}
			warnings = append(warnings, fmt.Sprintf("plugin %s is not locked: it is %s on this machine (%s), with no commit to pin", e.Name, how, e.Source))
			continue
		}
		l := lockfile.Plugin{
			Name: e.Name, Source: e.Source, Commit: e.Commit, Subdir: e.Subdir, ContentDigest: e.ContentDigest,
			Enabled: e.Enabled, Dependency: e.Dependency,
		}
		if len(e.Config) > 0 {
			// Entry.Config holds the non-sensitive values only; the
			// sensitive ones are in config/ and never leave it.
			l.Config = maps.Clone(e.Config)
		}
		k, ok := markets[e.MarketplaceName]
		switch {
		case ok:
			l.Marketplace = k.Name
			l.MarketplaceCommit = entryCommit(e, k)
		case e.EntryManifest != nil:
			warnings = append(warnings, fmt.Sprintf("plugin %s is not locked: its marketplace entry says how it is read, and its marketplace %s is not one this home knows by a remote source", e.Name, describeSource(e.Marketplace)))
			continue
		}
		lock.Plugins = append(lock.Plugins, l)
	}
	return lock, warnings
}

// entryCommit is the commit of marketplace k at which e's entry is read
// again, when it is not the one k was last read at: the commit the
// registry entry says its entry was read at; for an entry recorded before
// it said so, the commit of its pinned marketplace source, or, for a
// plugin that lives in the marketplace's own repository, the plugin's
// commit (the marketplace was read there when it was installed).
func entryCommit(e Entry, k *KnownMarketplace) string {
	at := ""
	switch {
	case e.MarketplaceCommit != "":
		at = e.MarketplaceCommit
	case e.Marketplace.Pinned():
		at = e.Marketplace.Ref
	case e.Source.Key() == k.Source.Key() && e.Commit != "":
		at = e.Commit
	}
	if at == k.Commit {
		return ""
	}
	return at
}
