// Package lockfile is the document of SPEC §16, reasonix.lock.json: the
// marketplaces a home knows and the plugins it has installed, each pinned
// to a commit and a content digest, so that another machine can be made
// the same (reasonix sync). It knows the document only: how a lock is
// built from a home and how a home is planned to match one is the
// installer's.
package lockfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/source"
)

// Version is the format version this reasonix reads and writes.
const Version = 1

// FileName is the lock's name in a folder.
const FileName = "reasonix.lock.json"

// MaxBytes bounds a lock read from a file or a request: a thousand
// plugins take some 500 KB, so this leaves room and still refuses a
// document built to exhaust memory.
const MaxBytes = 16 << 20

// MaxPlugins bounds the plugins of one lock (SPEC §7 plans marketplaces
// of up to 1,000 entries; a home may hold several).
const MaxPlugins = 10_000

// Lock is the whole of reasonix.lock.json. Its fields, and those of its
// items, are written in the order declared here, its lists sorted by name
// and its maps by key (encoding/json sorts them), so a lock of the same
// home is the same bytes and a diff of two shows what moved.
type Lock struct {
	Version      int           `json:"version"`
	Marketplaces []Marketplace `json:"marketplaces"`
	Plugins      []Plugin      `json:"plugins"`
}

// Marketplace is a known marketplace: where it is read from (its branch,
// as marketplaces.json records it) and the commit it is read at.
type Marketplace struct {
	Name   string        `json:"name"`
	Source source.Source `json:"source"`
	// Subdir is the folder recorded beside Source on hosts whose source
	// text cannot carry one.
	Subdir string `json:"subdir,omitempty"`
	// Commit is where a sync reads it; "" (a hand-written lock) means
	// its branch head, which --frozen refuses.
	Commit string `json:"commit,omitempty"`
}

// Plugin is an installed plugin, pinned.
type Plugin struct {
	Name string `json:"name"`
	// Marketplace names the lock's marketplace the plugin is planned
	// through (its entry says how the plugin is read: strict: false, the
	// components it lists); "" for a plugin installed from its own source.
	Marketplace string `json:"marketplace,omitempty"`
	// MarketplaceCommit is the commit of its marketplace the plugin's
	// entry is read at, when it is not the marketplace's locked commit (a
	// plugin living in the marketplace's repository, installed before the
	// marketplace was read again).
	MarketplaceCommit string        `json:"marketplaceCommit,omitempty"`
	Source            source.Source `json:"source"`
	Commit            string        `json:"commit,omitempty"`
	Subdir            string        `json:"subdir,omitempty"`
	ContentDigest     string        `json:"contentDigest,omitempty"`
	Enabled           bool          `json:"enabled"`
	// Dependency marks a plugin installed only because others need it.
	Dependency bool `json:"dependency,omitempty"`
	// Config are its non-sensitive userConfig values; sensitive ones are
	// never in a lock (they live in each home's config/).
	Config map[string]manifest.Value `json:"config,omitempty"`
}

// Pinned reports whether p says exactly what to install: a commit and a
// content digest (--frozen needs both).
func (p *Plugin) Pinned() bool { return p.Commit != "" && p.ContentDigest != "" }

// Parse reads a lock strictly: one JSON object of this format version or
// an older one, no unknown field at any depth (the rule of the home's
// state files), every name a valid plugin name used once, every plugin's
// marketplace in the lock, every commit 40 hex, every digest sha256 and
// every subfolder inside its repository. A refusal says what was wrong;
// sources are masked as the source grammar masks them.
func Parse(data []byte) (*Lock, error) {
	if len(data) > MaxBytes {
		return nil, refuse("the lock is %d bytes; the limit is %d", len(data), MaxBytes)
	}
	var probe struct {
		Version *int `json:"version"`
	}
	// The version first: a newer format may have fields this one would
	// call unknown, and the reason to give is the version. (This decode
	// also refuses anything after the object.)
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, refuse("not a lock (%v)", err)
	}
	switch {
	case probe.Version == nil:
		return nil, refuse(`no "version"`)
	case *probe.Version > Version:
		return nil, refuse("format version %d was written by a newer reasonix (this one reads version %d); upgrade reasonix", *probe.Version, Version)
	case *probe.Version < 1:
		return nil, refuse("format version %d is not a version (this reasonix reads version %d)", *probe.Version, Version)
	}
	if err := repeatedKey(data); err != nil {
		return nil, refuse("%v", err)
	}
	l := &Lock{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode((*plain)(l)); err != nil {
		return nil, refuse("%v", err)
	}
	if err := l.Check(); err != nil {
		return nil, err
	}
	return l, nil
}

// plain is a Lock without its methods, so decoding one does not call
// Lock.UnmarshalJSON again.
type plain Lock

// UnmarshalJSON reads a lock inside another document (the daemon's POST
// /sync body) by Parse's rules.
func (l *Lock) UnmarshalJSON(data []byte) error {
	parsed, err := Parse(data)
	if err != nil {
		return err
	}
	*l = *parsed
	return nil
}

// Check verifies what Parse verifies after decoding; a lock built in
// memory (from a home) passes it.
func (l *Lock) Check() error {
	if l.Version != Version {
		return refuse("format version %d; this reasonix writes version %d", l.Version, Version)
	}
	if len(l.Plugins) > MaxPlugins {
		return refuse("%d plugins; the limit is %d", len(l.Plugins), MaxPlugins)
	}
	markets := map[string]bool{}
	for i := range l.Marketplaces {
		m := &l.Marketplaces[i]
		if err := checkName("marketplace", m.Name, markets); err != nil {
			return err
		}
		if err := checkRemote("marketplace "+m.Name, m.Source); err != nil {
			return err
		}
		if err := checkPin("marketplace "+m.Name, m.Commit, m.Subdir, ""); err != nil {
			return err
		}
	}
	plugins := map[string]bool{}
	for i := range l.Plugins {
		p := &l.Plugins[i]
		if err := checkName("plugin", p.Name, plugins); err != nil {
			return err
		}
		what := "plugin " + p.Name
		if p.Marketplace != "" && !markets[p.Marketplace] {
			return refuse("%s names marketplace %q, which the lock does not list", what, p.Marketplace)
		}
		if p.MarketplaceCommit != "" && p.Marketplace == "" {
			return refuse("%s has a marketplaceCommit but no marketplace", what)
		}
		if err := checkRemote(what, p.Source); err != nil {
			return err
		}
		if err := checkPin(what, p.Commit, p.Subdir, p.ContentDigest); err != nil {
			return err
		}
		if p.MarketplaceCommit != "" && !plugind.IsCommitID(p.MarketplaceCommit) {
			return refuse("%s: marketplaceCommit %q is not a commit (40 lower-case hex digits)", what, clip(p.MarketplaceCommit))
		}
		for k := range p.Config {
			if !manifest.IsOptionKey(k) {
				return refuse("%s: config key %q is not an option key (letters, digits and _, not starting with a digit)", what, clip(k))
			}
		}
	}
	return nil
}

// checkName refuses a name that is not a valid plugin name or is used
// twice among seen.
func checkName(kind, name string, seen map[string]bool) error {
	if err := plugind.ValidateName(name); err != nil {
		return refuse("a %s's name: %v", kind, err)
	}
	if seen[name] {
		return refuse("two %ss are named %q", kind, name)
	}
	seen[name] = true
	return nil
}

// checkRemote refuses a source a lock cannot carry: none, or one that is
// not a remote repository. A folder or a zip names something on the
// machine that wrote the lock, and NAME@MARKET is what the lock's
// marketplace field says already.
func checkRemote(what string, s source.Source) error {
	if s.IsZero() {
		return refuse("%s has no source", what)
	}
	if !s.IsRemote() {
		return refuse("%s: %s is a %s source; a lock holds remote repositories only", what, s, s.Kind)
	}
	return nil
}

// checkPin refuses a commit that is not 40 hex, a subfolder that leaves
// its repository, and a digest that is not sha256.
func checkPin(what, commit, subdir, digest string) error {
	if commit != "" && !plugind.IsCommitID(commit) {
		return refuse("%s: commit %q is not a commit (40 lower-case hex digits)", what, clip(commit))
	}
	if subdir != "" {
		clean, err := plugind.CleanEntryName(subdir, true)
		if err != nil {
			return refuse("%s: subdir %q: %v", what, clip(subdir), err)
		}
		if clean != subdir {
			return refuse("%s: subdir %q is not a clean relative folder (say %q)", what, clip(subdir), clean)
		}
	}
	if digest != "" && !IsDigest(digest) {
		return refuse("%s: contentDigest %q is not a digest (sha256: and 64 lower-case hex digits)", what, clip(digest))
	}
	return nil
}

// IsDigest reports whether d is a content digest as plans write it.
func IsDigest(d string) bool {
	hex, ok := strings.CutPrefix(d, "sha256:")
	return ok && len(hex) == 64 && strings.Trim(hex, "0123456789abcdef") == ""
}

// clip shortens what a refusal quotes from a hostile document.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func refuse(format string, args ...any) error {
	return plugind.Errorf(plugind.CodeInvalidSource, "lock: "+format, args...)
}

// Marshal writes the lock as its file holds it: sorted, two-space
// indented, with a trailing newline. It checks the lock first, so what it
// writes parses again.
func (l *Lock) Marshal() ([]byte, error) {
	out := *l
	out.Marketplaces = slices.SortedFunc(slices.Values(l.Marketplaces), func(a, b Marketplace) int { return strings.Compare(a.Name, b.Name) })
	out.Plugins = slices.SortedFunc(slices.Values(l.Plugins), func(a, b Plugin) int { return strings.Compare(a.Name, b.Name) })
	if out.Marketplaces == nil {
		out.Marketplaces = []Marketplace{}
	}
	if out.Plugins == nil {
		out.Plugins = []Plugin{}
	}
	if err := out.Check(); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent((*plain)(&out), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the lock: %w", err)
	}
	return append(data, '\n'), nil
}

// FindMarketplace returns the lock's marketplace named name.
func (l *Lock) FindMarketplace(name string) (*Marketplace, bool) {
	i := slices.IndexFunc(l.Marketplaces, func(m Marketplace) bool { return m.Name == name })
	if i < 0 {
		return nil, false
	}
	return &l.Marketplaces[i], true
}

// FindPlugin returns the lock's plugin named name.
func (l *Lock) FindPlugin(name string) (*Plugin, bool) {
	i := slices.IndexFunc(l.Plugins, func(p Plugin) bool { return p.Name == name })
	if i < 0 {
		return nil, false
	}
	return &l.Plugins[i], true
}

// Names are the lock's plugin names, sorted.
func (l *Lock) Names() []string {
	set := map[string]bool{}
	for _, p := range l.Plugins {
		set[p.Name] = true
	}
	return slices.Sorted(maps.Keys(set))
}
