package manifest

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsondoc"
)

// The marketplace entry as a manifest, read as Claude Code reads it:
//   - without a plugin.json the entry is the manifest (metadata and
//     components), strict or not, and the conventional folders still
//     count;
//   - beside a plugin.json, the plugin.json is the manifest and the entry's
//     component files (commands, agents, skills, hooks, output styles,
//     themes) are added to it — unless the entry is strict: false and
//     declares them, which Claude Code refuses ("conflicting manifests").
//     Its other components (mcpServers, lspServers…) Claude Code reads
//     only where the entry is the manifest: beside a plugin.json they are
//     ignored, and the plan says so.

const entryLabel = "marketplace entry"

// conflictingManifests is Claude Code's refusal of a strict: false entry
// that declares components beside a plugin.json.
const conflictingManifests = "conflicting manifests: both " + ClaudeManifest + " and the marketplace entry (strict: false) specify components, and Claude Code refuses to load such a plugin; set \"strict\": true in the entry, or remove the component specs from one of them"

// declaresComponents reports whether an entry names component files of its
// own (the fields whose row Declares, and experimental.themes), as Claude
// Code judges a strict: false entry beside a plugin.json.
func declaresComponents(entry *node) bool {
	declares := func(r jsondoc.Row) bool { return r.Traits&jsondoc.Declares != 0 && !entry.Get(r.Key).IsEmpty() }
	return slices.ContainsFunc(ClaudePlugin().Rows, declares) || !entry.Get("experimental").Get("themes").IsEmpty()
}

// addsBeside reports whether an entry's field r is added to the plugin.json
// beside it: the component files Claude Code's loader adds (the rows that
// Declare, and experimental for its themes — the fields a strict: false
// entry may not declare there either), and dependencies, which Reasonix
// plans for the entry wherever they are written.
func addsBeside(r jsondoc.Row) bool {
	return r.Traits&jsondoc.Declares != 0 || r.Key == "experimental" || r.Key == "dependencies"
}

// entryDoc is a plugin.json document made of an entry's fields: its name,
// and its manifest fields (withMeta) or only what it adds beside a
// plugin.json (addsBeside).
func entryDoc(entry *node, name string, withMeta bool) *node {
	doc := &node{Kind: jsondoc.Object}
	doc.Put("name", jsondoc.Text(name))
	for _, r := range ClaudePlugin().Rows {
		if r.Key == "name" || r.Role == jsondoc.EntryOnly || (!withMeta && !addsBeside(r)) {
			continue
		}
		if v := entry.Get(r.Key); v != nil {
			doc.Put(r.Key, *v)
		}
	}
	return doc
}

// ignoredBeside names the component fields an entry sets that are not
// added to the plugin.json beside it (addsBeside), which Claude Code
// ignores there.
func ignoredBeside(entry *node) []string {
	var out []string
	for _, r := range ClaudePlugin().Rows {
		if (r.Role == jsondoc.Component || r.Role == jsondoc.Unsupported) && !addsBeside(r) && !entry.Get(r.Key).IsEmpty() {
			out = append(out, r.Key)
		}
	}
	return out
}

// entryReading is how a package with a marketplace entry is read.
type entryReading struct {
	in compatInput
	// source says where the manifest came from (Package.ManifestSource).
	source string
	// conflict: Claude Code refuses the plugin (conflictingManifests).
	conflict bool
	notes    []string
}

// readEntry decides how the folder's manifest (kind at rel; "" when none)
// and the marketplace entry combine.
func readEntry(t *tree, kind Kind, rel string, opts LoadOptions) (*entryReading, error) {
	entry, err := parseJSON(entryLabel, opts.Entry.Doc)
	if err != nil || entry.Kind != jsondoc.Object {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "the marketplace entry's fields are not a JSON object")
	}
	name := cmp.Or(opts.Name, opts.Implied)
	var own *node
	if rel != "" {
		data, err := t.readFile(rel, maxJSONBytes)
		if err != nil {
			return nil, coded(plugind.CodeSourceUnreadable, "read %s: %w", rel, err)
		}
		if own, err = parseJSON(rel, data); err != nil {
			return nil, err
		}
	}
	atRoot := opts.Entry.Root
	switch {
	case own == nil || (kind == KindCodex && !opts.Entry.Strict):
		// No plugin.json: the entry is the manifest. (A Codex manifest is
		// none to Claude Code; with strict: false the entry replaces it.)
		source := entryLabel
		if !opts.Entry.Strict {
			source += " (strict: false)"
		}
		return &entryReading{in: compatInput{kind: KindClaude, entry: entryDoc(entry, name, true), atRoot: atRoot}, source: source}, nil
	case kind == KindCodex:
		r := &entryReading{in: compatInput{kind: KindCodex, own: own, ownLabel: rel}, source: rel}
		if len(entryDoc(entry, name, false).Fields) > 1 {
			r.notes = append(r.notes, "the marketplace entry's component fields are not merged into a Codex manifest ("+rel+"); they are ignored")
		}
		return r, nil
	}
	r := &entryReading{in: compatInput{kind: KindClaude, own: own, ownLabel: rel, atRoot: atRoot}, source: rel}
	if !opts.Entry.Strict && declaresComponents(entry) {
		r.conflict = true
		return r, nil
	}
	if adds := entryDoc(entry, name, false); len(adds.Fields) > 1 {
		r.in.entry = adds
		r.source = rel + " + " + entryLabel
	}
	if ignored := ignoredBeside(entry); len(ignored) > 0 {
		r.notes = append(r.notes, fmt.Sprintf("the marketplace entry's fields %s are ignored beside %s, as Claude Code ignores them there (it reads them only from an entry that is the whole manifest)",
			strings.Join(ignored, ", "), rel))
	}
	return r, nil
}

// loadWithEntry reads a package whose marketplace entry has manifest
// fields of its own. kind and rel are what the folder holds ("" when
// nothing).
func loadWithEntry(t *tree, kind Kind, rel string, opts LoadOptions) (*Package, error) {
	r, err := readEntry(t, kind, rel, opts)
	if err != nil {
		return nil, err
	}
	opts.Name = cmp.Or(opts.Name, opts.Implied)
	pkg, err := t.readCompat(opts, r.in)
	if err != nil {
		return nil, err
	}
	pkg.ManifestSource = r.source
	pkg.Warnings = append(r.notes, pkg.Warnings...)
	if r.conflict {
		pkg.Blocked, pkg.BlockReason, pkg.Compatibility = true, conflictingManifests, CompatNone
	}
	return pkg, nil
}

// EntryDocument is the .claude-plugin/plugin.json that reads a package the
// way Load reads it with its marketplace entry (opts.Entry): the entry as
// the manifest, or the plugin's own with the entry's components added.
// Where the entry adds to a conventional folder that a declaration in
// plugin.json would replace (commands/, agents/), the folder is declared
// too. ok is false when the entry changes nothing (no entry, or a native
// or Codex manifest wins): the folder's own manifest stands. Export writes
// it, so an exported package installs the same on its own.
func EntryDocument(root string, opts LoadOptions) (doc []byte, ok bool, err error) {
	if opts.Entry == nil {
		return nil, false, nil
	}
	t, err := openTree(root)
	if err != nil {
		return nil, false, err
	}
	kind, rel, err := t.detect(root, opts.Prefer)
	if err != nil && !errors.Is(err, ErrNoManifest) {
		return nil, false, err
	}
	if kind == KindReasonix {
		return nil, false, nil
	}
	r, err := readEntry(t, kind, rel, opts)
	if err != nil {
		return nil, false, err
	}
	if r.in.kind == KindCodex || r.in.entry == nil {
		return nil, false, nil
	}
	// Without a plugin.json the entry's fields (its name too) are added to
	// nothing.
	out := node{Kind: jsondoc.Object}
	if r.in.own != nil {
		out = *r.in.own
		out.Fields = append([]jsondoc.Field{}, out.Fields...)
	}
	for _, f := range r.in.entry.Fields {
		mine := out.Get(f.Key)
		switch {
		case f.Key == "name" && r.in.own != nil:
		case mine.IsEmpty() && (f.Key == "commands" || f.Key == "agents"):
			out.Put(f.Key, t.withConventional(f.Key, &f.Val))
		case mine.IsEmpty():
			out.Put(f.Key, f.Val)
		default:
			out.Put(f.Key, jsondoc.Node{Kind: jsondoc.Array, Items: append(append([]jsondoc.Node{}, mine.ListOf()...), f.Val.ListOf()...)})
		}
	}
	return out.Marshal(), true, nil
}

// withConventional is v, a commands or agents declaration that adds to the
// conventional folder, as a declaration that also names what the folder
// holds (a declaration in plugin.json replaces the folder). Claude's schema
// takes agents file by file only, so agents/ is written as its files: one
// in a folder below it keeps its front matter's name but, declared on its
// own, loses its folders' prefix (sub:custom becomes custom).
func (t *tree) withConventional(field string, v *node) node {
	if !t.isDir(field) || v.Kind == jsondoc.Object {
		return *v
	}
	var items []node
	if field == "commands" {
		items = append(items, jsondoc.Text("./commands"))
	} else {
		_, real, _ := t.resolve(field)
		b := newBuilder(t, &Package{})
		for _, f := range b.mdFiles(field, real, "", field) {
			items = append(items, jsondoc.Text("./"+path.Clean(f.rel)))
		}
	}
	return node{Kind: jsondoc.Array, Items: append(items, v.ListOf()...)}
}
