package installer

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io/fs"
	"iter"
	"os"
	"slices"
	"sort"

	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/google/renameio/v2"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
)

// The home's JSON state files, the registry (plugin-packages.json) and the
// known marketplaces (marketplaces.json, "written like the registry", SPEC
// §4), are read and published by one rule: a missing file is an empty
// one; a corrupt one fails closed with registry.unreadable and is never
// rewritten; a save is a synced temporary file renamed over the old one,
// private to the user.

// stateDoc is the whole of a state file: a version, and items each named
// once, by a valid plugin name.
type stateDoc interface {
	// state says how the file is spoken of and which version it must have.
	state() stateFile
	// version is the document's version field.
	version() *int
	// names are its items' names.
	names() iter.Seq[string]
}

// stateFile is what a state file is called in errors, and the version this
// reasonix reads and writes.
type stateFile struct {
	what    string // "registry", "known marketplaces"
	plural  bool   // what takes a plural verb
	current int
}

// verb picks the form of a verb that agrees with what.
func (f stateFile) verb(one, many string) string {
	if f.plural {
		return many
	}
	return one
}

// namesOf yields the name of each of items, for a stateDoc's names.
func namesOf[T any](items []T, name func(*T) string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for i := range items {
			if !yield(name(&items[i])) {
				return
			}
		}
	}
}

// findNamed returns the item of items named name.
func findNamed[T any](items []T, name func(*T) string, want string) (*T, bool) {
	// Saved files are sorted by name, so a binary search finds it at once
	// (a warm re-plan of 1,000 entries looks each up three times: scans
	// were 8 ms of its CPU). Names are unique, so its hit is the one; a
	// miss, or items out of order (appended since the load, hand-edited),
	// still gets the scan.
	if i := sort.Search(len(items), func(i int) bool { return name(&items[i]) >= want }); i < len(items) && name(&items[i]) == want {
		return &items[i], true
	}
	for i := range items {
		if name(&items[i]) == want {
			return &items[i], true
		}
	}
	return nil, false
}

// deleteNamed removes the item named want from items.
func deleteNamed[T any](items []T, name func(*T) string, want string) []T {
	return slices.DeleteFunc(items, func(it T) bool { return name(&it) == want })
}

// loadState reads the state file at path, a document D; a missing file is
// an empty one at the current version. With decoded (the daemon's, for
// planning), the same *D comes back while the file's bytes stay the same:
// its callers only read it.
func loadState[D any, P interface {
	*D
	stateDoc
}](path string, decoded *cache.Decoded) (*D, error) {
	doc := P(new(D))
	f := doc.state()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		*doc.version() = f.current
		return doc, nil
	}
	if err != nil {
		return nil, plugind.Errorf(plugind.CodeRegistryUnreadable, "read %s %s: %w", f.what, path, err)
	}
	return cache.Remember(decoded, func() string {
		sum := sha256.Sum256(data)
		return f.what + "\x00" + string(sum[:])
	}, func() (*D, error) { return parseState[D, P](path, data) })
}

// parseState decodes data, read from path, as a document D: strictly (no
// unknown field), at the current version, every item's name valid and
// used once.
func parseState[D any, P interface {
	*D
	stateDoc
}](path string, data []byte) (*D, error) {
	doc := P(new(D))
	f := doc.state()
	// encoding/json's API and errors on the v2 engine: a 1,000-entry
	// registry decodes in 3.7 ms instead of 12 (issue 24).
	dec := jsonv1.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(doc); err != nil {
		return nil, plugind.Errorf(plugind.CodeRegistryUnreadable, "%s %s %s corrupt (%v); the file was left untouched, repair or move it aside", f.what, path, f.verb("is", "are"), err)
	}
	if v := *doc.version(); v != f.current {
		return nil, plugind.Errorf(plugind.CodeRegistryUnreadable, "%s %s %s version %d; this reasonix reads version %d", f.what, path, f.verb("has", "have"), v, f.current)
	}
	seen := map[string]bool{}
	for name := range doc.names() {
		if err := plugind.ValidateName(name); err != nil {
			return nil, plugind.Errorf(plugind.CodeRegistryUnreadable, "%s %s: %v", f.what, path, err)
		}
		if seen[name] {
			return nil, plugind.Errorf(plugind.CodeRegistryUnreadable, "%s %s %s %q twice", f.what, path, f.verb("lists", "list"), name)
		}
		seen[name] = true
	}
	return doc, nil
}

// saveState publishes doc at path. A rename that fails (EXDEV from a
// filter driver, a lock) fails closed; the old file is never truncated or
// copied over.
func saveState(path string, doc stateDoc) error {
	return writePrivateJSON(path, doc, "publish "+doc.state().what+" "+path)
}

// writePrivateJSON writes v to path as indented JSON and a newline: a
// synced temporary file in the same folder, renamed over the old one,
// readable by the user alone. A failed write is publication.failed,
// prefixed with what.
func writePrivateJSON(path string, v any, what string) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := renameio.WriteFile(path, append(data, '\n'), plugind.PrivateFileMode); err != nil {
		return plugind.Errorf(plugind.CodePublicationFailed, "%s: %w", what, err)
	}
	return nil
}
