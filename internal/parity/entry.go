package parity

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Entry is one marketplace entry as the parity tools need it: its name and
// where its source points. It is read loosely (a malformed entry is still
// an entry, with Kind "?"): the tools describe marketplaces, they do not
// judge them.
type Entry struct {
	Name string
	// Kind is "relative" for a string source, else the source object's
	// "source" (github, url, git-subdir, npm…), "?" when neither.
	Kind string
	// Repo is the repository (OWNER/NAME on GitHub, else the URL) or
	// package a non-relative source names; Path its "path", SHA its "sha".
	Repo, Path, SHA string
	// Strict is false only for an entry that says "strict": false.
	Strict bool
	// Raw is the entry as the marketplace writes it.
	Raw json.RawMessage
}

// Unpinned reports whether a url, github or git-subdir entry names no sha.
func (e Entry) Unpinned() bool {
	return e.SHA == "" && (e.Kind == "url" || e.Kind == "github" || e.Kind == "git-subdir")
}

// ReadMarketplace reads a marketplace.json's name and entries.
func ReadMarketplace(path string) (string, []Entry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, fmt.Errorf("read marketplace: %w", err)
	}
	return ParseMarketplace(path, data)
}

// ParseMarketplace reads a marketplace document's name and entries; where
// names the document in errors.
func ParseMarketplace(where string, data []byte) (string, []Entry, error) {
	var doc struct {
		Name    string            `json:"name"`
		Plugins []json.RawMessage `json:"plugins"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return "", nil, fmt.Errorf("marketplace %s: %w", where, err)
	}
	type entryDoc struct {
		Name   string          `json:"name"`
		Source json.RawMessage `json:"source"`
		Strict *bool           `json:"strict"`
		Raw    json.RawMessage `json:"-"`
	}
	plugins := make([]entryDoc, len(doc.Plugins))
	for i, raw := range doc.Plugins {
		// A malformed entry is still an entry (Kind "?").
		_ = json.Unmarshal(raw, &plugins[i])
		plugins[i].Raw = raw
	}
	if doc.Name == "" {
		return "", nil, fmt.Errorf("marketplace %s: no name", where)
	}
	out := make([]Entry, 0, len(doc.Plugins))
	for _, p := range plugins {
		e := Entry{Name: p.Name, Kind: "?", Strict: p.Strict == nil || *p.Strict, Raw: p.Raw}
		var rel string
		var obj struct {
			Source string `json:"source"`
			Repo   string `json:"repo"`
			URL    string `json:"url"`
			Path   string `json:"path"`
			SHA    string `json:"sha"`
			Pkg    string `json:"package"`
		}
		switch {
		case json.Unmarshal(p.Source, &rel) == nil:
			e.Kind, e.Path = "relative", rel
		case json.Unmarshal(p.Source, &obj) == nil:
			e.Kind, e.Path, e.SHA = obj.Source, obj.Path, obj.SHA
			e.Repo = obj.Repo + obj.URL + obj.Pkg
			e.Repo = strings.TrimSuffix(strings.TrimPrefix(e.Repo, "https://github.com/"), ".git")
		}
		out = append(out, e)
	}
	return doc.Name, out, nil
}
