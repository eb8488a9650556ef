package marketplace

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/manifest"
)

// Where a marketplace's document lives and how large it may be, answered
// once for the resolver, validate, marketplace add and the mirror (SPEC
// §7): Claude Code's .claude-plugin/marketplace.json first, then Codex's
// .agents/plugins/marketplace.json, at the marketplace's root.

// Document is one marketplace document kind.
type Document struct {
	// Path is where it lives, relative to the marketplace's root.
	Path string
	// Format is the manifest format its plugins are read in first (SPEC
	// §10: Claude for Claude's marketplace, Codex for Codex's).
	Format manifest.Kind
	f      format
}

var (
	ClaudeDocument = Document{Path: claudeFormat.file, Format: manifest.KindClaude, f: claudeFormat}
	CodexDocument  = Document{Path: codexFormat.file, Format: manifest.KindCodex, f: codexFormat}
	// Documents are the document kinds in the order they are looked for.
	Documents = []Document{ClaudeDocument, CodexDocument}
)

// MaxDocumentBytes bounds a marketplace document; the largest in the
// corpus is well under 1 MiB.
const MaxDocumentBytes = 8 << 20

// Folders are the folders that hold the documents (a repository too large
// to store whole keeps these).
func Folders() []string {
	out := make([]string, len(Documents))
	for i, d := range Documents {
		out[i] = path.Dir(d.Path)
	}
	return out
}

// DocumentAt is the document kind whose Path is rel, if any.
func DocumentAt(rel string) (Document, bool) {
	if i := slices.IndexFunc(Documents, func(d Document) bool { return d.Path == rel }); i >= 0 {
		return Documents[i], true
	}
	return Document{}, false
}

// Found is the document a marketplace root holds, and the other kind when
// it holds both (Also: it is not read).
type Found struct {
	Document
	Also []Document
}

// Note says, when the root holds both kinds, which one is read.
func (f Found) Note() string {
	if len(f.Also) == 0 {
		return ""
	}
	return fmt.Sprintf("this marketplace also has %s, which is not read: %s comes first (SPEC §7)", f.Also[0].Path, f.Path)
}

// Find returns the marketplace document of the folder root: the first kind
// present as a regular file inside it (a link out of the folder does not
// count). ok is false when root holds none.
func Find(root string) (Found, bool) {
	present := slices.DeleteFunc(slices.Clone(Documents), func(d Document) bool { return !manifest.IsFile(root, d.Path) })
	if len(present) == 0 {
		return Found{}, false
	}
	return Found{Document: present[0], Also: present[1:]}, true
}

// Has reports whether root holds a marketplace document.
func Has(root string) bool {
	_, ok := Find(root)
	return ok
}

// Read reads the document d of the marketplace at root, confined to root
// and bounded by MaxDocumentBytes.
func (d Document) Read(root string) ([]byte, error) {
	data, err := manifest.ReadFile(root, d.Path, MaxDocumentBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, plugind.WithCode(plugind.CodeSourceUnreadable, fmt.Errorf("%s: %w", d.Path, err))
	}
	return data, err
}

// Parse parses data as a document of kind d. It fails only when the
// document as a whole is unusable, or breaks Claude Code's rules outside
// its entries; every per-entry problem is that entry's status.
func (d Document) Parse(data []byte, opts Options) (*Marketplace, error) {
	m, _, err := read(data, opts, d.f, jsondoc.Install)
	return m, err
}

// RootOf is the folder a marketplace document's relative sources start
// from: the marketplace root its Path is under, else the document's own
// folder (a marketplace.json given alone). It also says which kind the
// document is: a file at Codex's path is Codex's, any other Claude's.
func RootOf(docPath string) (string, Document) {
	slash := filepath.ToSlash(docPath)
	for _, d := range Documents {
		if strings.HasSuffix(slash, "/"+d.Path) || slash == d.Path {
			return cmp.Or(filepath.FromSlash(strings.TrimSuffix(strings.TrimSuffix(slash, d.Path), "/")), "."), d
		}
	}
	return filepath.Dir(docPath), ClaudeDocument
}
