package installer

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/google/renameio/v2"

	"reasonix.io/plugind"
)

// KnownMarketplace is one marketplace the home knows (SPEC §7), in
// marketplaces.json: by the name its document gives itself, where it is
// read from, and which commit it was last read at.
type KnownMarketplace struct {
	Name   string `json:"name"`
	Source string `json:"source"`
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

// LoadMarketplaces reads marketplaces.json. A missing file knows none; a
// corrupt one fails closed, like the registry.
func LoadMarketplaces(path string) (*Marketplaces, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Marketplaces{Version: marketplacesVersion}, nil
	}
	if err != nil {
		return nil, plugind.Errorf(plugind.CodeRegistryUnreadable, "read known marketplaces %s: %w", path, err)
	}
	var m Marketplaces
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, plugind.Errorf(plugind.CodeRegistryUnreadable, "known marketplaces %s are corrupt (%v); the file was left untouched, repair or move it aside", path, err)
	}
	if m.Version != marketplacesVersion {
		return nil, plugind.Errorf(plugind.CodeRegistryUnreadable, "known marketplaces %s have version %d; this reasonix reads version %d", path, m.Version, marketplacesVersion)
	}
	seen := map[string]bool{}
	for _, k := range m.Marketplaces {
		if err := plugind.ValidateName(k.Name); err != nil {
			return nil, plugind.Errorf(plugind.CodeRegistryUnreadable, "known marketplaces %s: %v", path, err)
		}
		if seen[k.Name] {
			return nil, plugind.Errorf(plugind.CodeRegistryUnreadable, "known marketplaces %s list %q twice", path, k.Name)
		}
		seen[k.Name] = true
	}
	return &m, nil
}

// Save publishes the file as the registry is published: a synced temporary
// file renamed over the old one.
func (m *Marketplaces) Save(path string) error {
	sort.Slice(m.Marketplaces, func(i, j int) bool { return m.Marketplaces[i].Name < m.Marketplaces[j].Name })
	if m.Marketplaces == nil {
		m.Marketplaces = []KnownMarketplace{}
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := renameio.WriteFile(path, append(data, '\n'), plugind.PrivateFileMode); err != nil {
		return plugind.Errorf(plugind.CodePublicationFailed, "publish known marketplaces %s: %w", path, err)
	}
	return nil
}

// Find returns the marketplace named name.
func (m *Marketplaces) Find(name string) (*KnownMarketplace, bool) {
	for i := range m.Marketplaces {
		if m.Marketplaces[i].Name == name {
			return &m.Marketplaces[i], true
		}
	}
	return nil, false
}

// BySource returns the marketplace read from source (and subdir).
func (m *Marketplaces) BySource(source, subdir string) (*KnownMarketplace, bool) {
	for i := range m.Marketplaces {
		if m.Marketplaces[i].Source == source && m.Marketplaces[i].Subdir == subdir {
			return &m.Marketplaces[i], true
		}
	}
	return nil, false
}

// Delete removes name and reports whether it was there.
func (m *Marketplaces) Delete(name string) bool {
	for i := range m.Marketplaces {
		if m.Marketplaces[i].Name == name {
			m.Marketplaces = append(m.Marketplaces[:i], m.Marketplaces[i+1:]...)
			return true
		}
	}
	return false
}
