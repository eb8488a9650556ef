// Package marketplace parses Claude Code (.claude-plugin/marketplace.json)
// and Codex (.agents/plugins/marketplace.json) marketplace documents and
// classifies every entry as ready, skipped or error (SPEC §7). It is pure:
// bytes in, classified entries out. Fetching is the resolver's business.
package marketplace

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/source"
)

// MaxEntries is the most entries one marketplace may list. SPEC §7 allows
// every count below 1,000; beyond that a document is refused whole rather
// than silently truncated.
const MaxEntries = 1000

// Kind is the source kind of an entry.
type Kind string

const (
	KindRelative  Kind = "relative"   // a path inside the marketplace
	KindURL       Kind = "url"        // {"source":"url"} on any git host
	KindGitHub    Kind = "github"     // {"source":"github","repo":"o/r"}
	KindGitSubdir Kind = "git-subdir" // {"source":"git-subdir"}
	KindNPM       Kind = "npm"
	KindPip       Kind = "pip"
	KindExternal  Kind = "external" // a string naming something outside the marketplace
	KindUnknown   Kind = "unknown"  // a source type this product does not know, or none
)

// Status is an entry's classification.
type Status string

const (
	StatusReady   Status = "ready"
	StatusSkipped Status = "skipped" // unsupported or unpinned: a warning in bulk, an error by name
	StatusError   Status = "error"   // malformed: the entry is refused
)

// Entry is one classified plugin entry.
type Entry struct {
	Name   string
	Kind   Kind
	Status Status
	// Reason says why the entry is skipped or refused, naming the entry;
	// empty when ready.
	Reason string
	// Code is the error code a by-name selection of this entry fails with;
	// empty when ready.
	Code plugind.Code
	// Path: for relative entries the cleaned slash path inside the
	// marketplace root ("." for the root itself, metadata.pluginRoot applied
	// to bare names); for url/github/git-subdir the subdirectory inside the
	// repository ("" for its root).
	Path string
	// Remote is the repository of a url, github or git-subdir entry, on
	// GitHub or any other git host (its Ref and Subdir are not set: SHA,
	// Ref and Path say those).
	Remote source.Source
	SHA    string // the 40-hex pin, when given (it wins over Ref)
	Ref    string // the ref, when given
	// Unpinned marks a url/github entry without a sha that is ready only
	// because Options.AllowUnpinned was set: the resolver resolves Ref (""
	// meaning the default branch) and pins that commit.
	Unpinned    bool
	Version     string
	Description string
	// Strict is the entry's strict field: nil (Claude's default, true) or
	// true keeps the plugin's own manifest authoritative, with Manifest's
	// component fields supplementing it; false makes Manifest the plugin's
	// manifest.
	Strict *bool
	// Manifest is the entry's manifest fields (metadata and components) as
	// a JSON object; nil when it has none.
	Manifest json.RawMessage
	// AtRoot: the entry's source is the marketplace's root ("." or "./"),
	// where Claude Code gives an entry that lists skills those skills only.
	AtRoot bool
	// Warnings say where Reasonix reads the entry differently from Claude
	// Code on purpose (a bare path under metadata.pluginRoot, "path" on a
	// url or github source).
	Warnings []string
}

// IsStrict reports the entry's strictness (true unless it says false).
func (e *Entry) IsStrict() bool { return e.Strict == nil || *e.Strict }

// Err is nil for a ready entry and otherwise the coded error a by-name
// selection reports.
func (e *Entry) Err() error {
	if e.Status == StatusReady {
		return nil
	}
	return plugind.Errorf(cmp.Or(e.Code, plugind.CodeInvalidSource), "%s", e.Reason)
}

// Marketplace is a parsed marketplace document.
type Marketplace struct {
	Name        string
	Description string
	// PluginRoot is metadata.pluginRoot cleaned ("plugins" for
	// "./plugins"); "" when unset or unusable.
	PluginRoot string
	// AllowCrossMarketplaceDependenciesOn names the other marketplaces its
	// plugins may pull dependencies from (Claude's allowlist; only the
	// marketplace a plan starts from counts).
	AllowCrossMarketplaceDependenciesOn []string
	// Renames is the document's renames map (nil when it has none, or
	// one that is not a map of names and nulls).
	Renames  Renames
	Entries  []Entry  // document order
	Warnings []string // what the document's rules warn about, by JSON path
}

// Options tune classification.
type Options struct {
	// AllowUnpinned makes url/github entries without a sha ready (with
	// Entry.Unpinned set) instead of skipped (--allow-unpinned).
	AllowUnpinned bool
}

// ManifestFor is what the entry says about its plugin as a plugin.json
// (manifest.LoadOptions.Entry): nil when it says nothing and is strict.
func (e *Entry) ManifestFor() *manifest.EntryManifest {
	if e.Manifest == nil && e.IsStrict() {
		return nil
	}
	doc := e.Manifest
	if doc == nil {
		doc = []byte("{}")
	}
	return &manifest.EntryManifest{Doc: doc, Strict: e.IsStrict(), Root: e.AtRoot}
}

// Counts tallies the entries by status.
func (m *Marketplace) Counts() (ready, skipped, errored int) {
	for i := range m.Entries {
		switch m.Entries[i].Status {
		case StatusReady:
			ready++
		case StatusSkipped:
			skipped++
		default:
			errored++
		}
	}
	return ready, skipped, errored
}

// Select returns the entry named name (--name). A skipped or refused entry
// is an error carrying its reason: what a bulk install only warns about is
// fatal when asked for by name. The returned entry is a copy.
func (m *Marketplace) Select(name string) (*Entry, error) {
	switch {
	case m == nil:
		return nil, plugind.Errorf(plugind.CodeNotFound, "no plugin named %q: no marketplace", name)
	case name == "":
		// Unnamed entries carry Name ""; an empty selection must not pick one.
		return nil, plugind.Errorf(plugind.CodeNotFound, "no plugin name given to select from marketplace %s", m.label())
	}
	for i := range m.Entries {
		if m.Entries[i].Name != name {
			continue
		}
		e := m.Entries[i]
		if err := e.Err(); err != nil {
			return nil, plugind.Errorf(plugind.CodeOf(err), "cannot install plugin %q from marketplace %s: %w", name, m.label(), err)
		}
		return &e, nil
	}
	hint := ""
	if i := slices.IndexFunc(m.Entries, func(e Entry) bool { return e.Name != "" && strings.EqualFold(e.Name, name) }); i >= 0 {
		hint = fmt.Sprintf(" (did you mean %q?)", m.Entries[i].Name)
	}
	listed := m.Listed()
	switch r := m.Renames.Follow(name, func(n string) bool { return listed[n] }); r.Kind {
	case Renamed:
		hint = fmt.Sprintf(" (it renamed %q to %q)", name, r.To)
	case RenameRemoved:
		hint = fmt.Sprintf(" (its renames map says %q was removed)", name)
	}
	return nil, plugind.Errorf(plugind.CodeNotFound, "no plugin named %q in marketplace %s, which lists %d entries%s", name, m.label(), len(m.Entries), hint)
}

// Listed is the set of names its entries have.
func (m *Marketplace) Listed() map[string]bool {
	out := make(map[string]bool, len(m.Entries))
	for i := range m.Entries {
		if n := m.Entries[i].Name; n != "" {
			out[n] = true
		}
	}
	return out
}

func (m *Marketplace) label() string {
	if m.Name == "" {
		return "(unnamed)"
	}
	return fmt.Sprintf("%q", m.Name)
}

// Narrow returns the entries named in names, in document order, whatever
// their status (a bulk plan reports each). A name the marketplace does not
// list is an error naming it.
func (m *Marketplace) Narrow(names []string) ([]Entry, error) {
	out, missing := m.NarrowKeep(names)
	if len(missing) > 0 {
		return nil, plugind.Errorf(plugind.CodeNotFound, "marketplace %s lists no plugin named %s", m.label(), strings.Join(jsondoc.QuoteEach(missing), ", "))
	}
	return out, nil
}

// NarrowKeep is Narrow that returns the names it does not list (sorted)
// instead of failing.
func (m *Marketplace) NarrowKeep(names []string) ([]Entry, []string) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []Entry
	for _, e := range m.Entries {
		if want[e.Name] {
			out = append(out, e)
			delete(want, e.Name)
		}
	}
	return out, slices.Sorted(maps.Keys(want))
}
