package lockfile

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/source"
)

// ProjectFile is where a project says what it wants, under its root
// (SPEC §4): the lock it is synced by sits beside the .reasonix folder,
// as package-lock.json sits beside package.json.
const ProjectFile = ".reasonix/plugins.json"

// Project is a project's .reasonix/plugins.json (SPEC §16): the
// marketplaces it uses, each at its branch (or a ref), and the plugins it
// wants from them. Its shape is Claude Code's project settings'
// (extraKnownMarketplaces, enabledPlugins) in short:
//
//	{
//	  "marketplaces": {"acme": {"source": "git@git.acme.test:tools/market.git", "ref": "stable"}},
//	  "plugins": {"fmt@acme": true, "lint@acme": false}
//	}
//
// A plugin's value is the enabled state it is installed with.
type Project struct {
	// Dir is the project's root, the folder holding .reasonix/.
	Dir          string
	Marketplaces []ProjectMarketplace // sorted by name
	Plugins      []Wanted             // sorted by marketplace, then name
}

// ProjectMarketplace is a marketplace a project uses: Source at Ref ("" for
// its default branch), known by Name, the name its document gives itself.
type ProjectMarketplace struct {
	Name   string
	Source source.Source
}

// Wanted is a plugin a project wants: entry Name of marketplace Market.
type Wanted struct {
	Name, Market string
	Enabled      bool
}

// String is the plugin as the project file names it, NAME@MARKET.
func (w Wanted) String() string { return w.Name + "@" + w.Market }

// LockPath is where the project's lock lives.
func (p *Project) LockPath() string { return filepath.Join(p.Dir, FileName) }

// Marketplace returns the project's marketplace named name.
func (p *Project) Marketplace(name string) (*ProjectMarketplace, bool) {
	i := slices.IndexFunc(p.Marketplaces, func(m ProjectMarketplace) bool { return m.Name == name })
	if i < 0 {
		return nil, false
	}
	return &p.Marketplaces[i], true
}

// Want returns what the project wants of the plugin named name.
func (p *Project) Want(name string) (Wanted, bool) {
	i := slices.IndexFunc(p.Plugins, func(w Wanted) bool { return w.Name == name })
	if i < 0 {
		return Wanted{}, false
	}
	return p.Plugins[i], true
}

// Unlocked are the plugins the project wants that l does not pin through
// the marketplace the project names (a lock written before the project
// file last changed): sync leaves them to lock --update.
func (p *Project) Unlocked(l *Lock) []Wanted {
	var out []Wanted
	for _, w := range p.Plugins {
		if lp, ok := l.FindPlugin(w.Name); !ok || lp.Marketplace != w.Market {
			out = append(out, w)
		}
	}
	return out
}

// FindProject looks for .reasonix/plugins.json in dir and each folder above
// it, up to the root of the git repository dir is in (the first folder
// holding .git) or of the file system, and reads the first it finds.
func FindProject(dir string) (*Project, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for at := dir; ; {
		p, err := ReadProject(at)
		if !errors.Is(err, fs.ErrNotExist) {
			return p, err
		}
		if _, err := os.Lstat(filepath.Join(at, ".git")); err == nil {
			return nil, plugind.Errorf(plugind.CodeNotFound, "no %s in %s or above it up to the repository's root %s (write one, or give sync a lock file)", ProjectFile, dir, at)
		}
		up := filepath.Dir(at)
		if up == at {
			return nil, plugind.Errorf(plugind.CodeNotFound, "no %s in %s or any folder above it (write one, or give sync a lock file)", ProjectFile, dir)
		}
		at = up
	}
}

// ReadProject reads dir's .reasonix/plugins.json. A missing file is an
// error wrapping fs.ErrNotExist.
func ReadProject(dir string) (*Project, error) {
	path := filepath.Join(dir, filepath.FromSlash(ProjectFile))
	data, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	p, err := ParseProject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p.Dir = dir
	return p, nil
}

// projectDoc is the file as written.
type projectDoc struct {
	Marketplaces map[string]struct {
		Source string `json:"source"`
		Ref    string `json:"ref"`
	} `json:"marketplaces"`
	Plugins map[string]bool `json:"plugins"`
}

// ParseProject reads a project file strictly, like a lock: no unknown
// field, no key given twice, every marketplace a remote repository (a lock
// pins it), every plugin NAME@MARKET of a marketplace the file lists.
func ParseProject(data []byte) (*Project, error) {
	if len(data) > MaxBytes {
		return nil, refuseProject("it is %d bytes; the limit is %d", len(data), MaxBytes)
	}
	if err := repeatedKey(data); err != nil {
		return nil, refuseProject("%v", err)
	}
	var doc projectDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, refuseProject("%v", err)
	}
	p := &Project{}
	for name, m := range doc.Marketplaces {
		if err := plugind.ValidateName(name); err != nil {
			return nil, refuseProject("a marketplace's name: %v", err)
		}
		src, err := source.FromText(m.Source)
		switch {
		case err != nil:
			return nil, refuseProject("marketplace %s: %v", name, err)
		case src.IsZero():
			return nil, refuseProject("marketplace %s has no source", name)
		case !src.IsRemote():
			return nil, refuseProject("marketplace %s: %s is a %s source; a project's marketplaces are remote repositories, so that its lock can pin them", name, src, src.Kind)
		}
		if m.Ref != "" {
			if src.Ref != "" {
				return nil, refuseProject("marketplace %s names a ref twice: %q in its source and %q in ref", name, src.Ref, m.Ref)
			}
			if !source.IsSHA(m.Ref) {
				if err := source.CheckRef(m.Ref); err != nil {
					return nil, refuseProject("marketplace %s: ref %q: %v", name, clip(m.Ref), err)
				}
			}
			src = src.At(m.Ref)
		}
		p.Marketplaces = append(p.Marketplaces, ProjectMarketplace{Name: name, Source: src})
	}
	for key, enabled := range doc.Plugins {
		name, market, ok := strings.Cut(key, "@")
		if !ok {
			return nil, refuseProject("plugin %q: say NAME@MARKETPLACE", clip(key))
		}
		if err := plugind.ValidateName(name); err != nil {
			return nil, refuseProject("plugin %q: %v", clip(key), err)
		}
		if _, ok := doc.Marketplaces[market]; !ok {
			return nil, refuseProject("plugin %s names marketplace %q, which the file's marketplaces do not list", name, clip(market))
		}
		p.Plugins = append(p.Plugins, Wanted{Name: name, Market: market, Enabled: enabled})
	}
	slices.SortFunc(p.Marketplaces, func(a, b ProjectMarketplace) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(p.Plugins, func(a, b Wanted) int {
		return cmp.Or(strings.Compare(a.Market, b.Market), strings.Compare(a.Name, b.Name))
	})
	// One installed name per plugin: two marketplaces offering the same
	// name cannot both be installed.
	from := map[string]string{}
	for _, w := range p.Plugins {
		if m, ok := from[w.Name]; ok {
			return nil, refuseProject("plugin %s is wanted from two marketplaces, %s and %s; a home installs one plugin of a name", w.Name, m, w.Market)
		}
		from[w.Name] = w.Market
	}
	return p, nil
}

// repeatedKey refuses a document that gives a key twice in one object:
// encoding/json keeps the last, and a lock or project that says a thing
// twice means one of them, which is not ours to guess.
func repeatedKey(data []byte) error {
	_, dups, err := jsondoc.Parse(data)
	if err != nil {
		return err
	}
	for _, d := range dups {
		if !d.Folded {
			return fmt.Errorf("%q is given twice in %s", clip(d.Key), cmp.Or(d.Object, "the document"))
		}
	}
	return nil
}

func refuseProject(format string, args ...any) error {
	return plugind.Errorf(plugind.CodeInvalidSource, ProjectFile+": "+format, args...)
}
