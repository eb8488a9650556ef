package installer

import (
	"iter"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/source"
	"sort"
	"time"
)

// KnownMarketplace is one marketplace the home knows (SPEC §7), in
// marketplaces.json: by the name its document gives itself, where it is
// read from, and which commit it was last read at.
type KnownMarketplace struct {
	Name   string        `json:"name"`
	Source source.Source `json:"source"`
	// Subdir is recorded beside Source on hosts whose source cannot carry a
	// folder.
	Subdir      string    `json:"subdir,omitempty"`
	Description string    `json:"description,omitempty"`
	Commit      string    `json:"commit,omitempty"` // "" for a local folder
	ReadAt      time.Time `json:"readAt"`
	AddedAt     time.Time `json:"addedAt"`
}

// Marketplaces is the whole of marketplaces.json.
type Marketplaces struct {
	Version      int                `json:"version"`
	Marketplaces []KnownMarketplace `json:"marketplaces"`
}

const marketplacesVersion = 1

func (m *Marketplaces) state() stateFile {
	return stateFile{what: "known marketplaces", plural: true, current: marketplacesVersion}
}
func (m *Marketplaces) version() *int           { return &m.Version }
func (m *Marketplaces) names() iter.Seq[string] { return namesOf(m.Marketplaces, knownName) }
func knownName(k *KnownMarketplace) string      { return k.Name }

// LoadMarketplaces reads marketplaces.json. A missing file knows none; a
// corrupt one fails closed, like the registry.
func LoadMarketplaces(path string) (*Marketplaces, error) {
	return loadState[Marketplaces](path, nil)
}

// Save publishes the file as the registry is published (saveState), the
// marketplaces sorted by name and an empty list written as [].
func (m *Marketplaces) Save(path string) error {
	sort.Slice(m.Marketplaces, func(i, j int) bool { return m.Marketplaces[i].Name < m.Marketplaces[j].Name })
	m.Marketplaces = manifest.NonNil(m.Marketplaces)
	return saveState(path, m)
}

// Find returns the marketplace named name.
func (m *Marketplaces) Find(name string) (*KnownMarketplace, bool) {
	return findNamed(m.Marketplaces, knownName, name)
}

// Delete removes name.
func (m *Marketplaces) Delete(name string) {
	m.Marketplaces = deleteNamed(m.Marketplaces, knownName, name)
}
