package manifest

import (
	"errors"
	"fmt"

	"reasonix.io/plugind"
)

// The marketplace entry as a manifest (Claude's strict semantics).

// componentKeys are the plugin.json fields that contribute something; an
// entry's own are merged into (strict) or replace (not strict) the
// plugin's.
var componentKeys = []string{"commands", "agents", "skills", "hooks", "mcpServers", "lspServers", "outputStyles", "themes", "channels", "monitors", "settings", "userConfig"}

// metaKeys are the entry's metadata that a strict: false entry supplies as
// a manifest would.
var metaKeys = []string{"version", "description", "author", "homepage", "repository", "license", "keywords", "dependencies"}

const entryLabel = "marketplace entry"

// EntryDocument is the .claude-plugin/plugin.json that reads a package the
// way Load reads it with its marketplace entry (opts.Entry): the entry's
// manifest (strict: false) or the plugin's own with the entry's components
// merged in. ok is false when the entry changes nothing (no entry, or a
// native or Codex manifest wins): the folder's own manifest stands. Export
// writes it, so an exported package installs the same on its own.
func EntryDocument(root string, opts LoadOptions) (doc []byte, ok bool, err error) {
	if opts.Entry == nil {
		return nil, false, nil
	}
	kind, rel, err := DetectPrefer(root, opts.Prefer)
	if err != nil && !errors.Is(err, ErrNoManifest) {
		return nil, false, err
	}
	if kind == KindReasonix || (kind == KindCodex && opts.Entry.Strict) {
		return nil, false, nil
	}
	d, _, _, err := entryManifestDoc(root, kind, rel, opts)
	if err != nil {
		return nil, false, err
	}
	return d.marshal(), true, nil
}

// loadWithEntry reads a package whose marketplace entry has manifest
// fields of its own. kind and rel are what the folder holds ("" when
// nothing).
func loadWithEntry(root string, kind Kind, rel string, opts LoadOptions) (*Package, error) {
	doc, source, notes, err := entryManifestDoc(root, kind, rel, opts)
	if err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = opts.Implied
	}
	label := rel
	if source == entryLabel || source == entryLabel+" (strict: false)" {
		kind, label = KindClaude, entryLabel
	}
	pkg, err := parseCompat(kind, label, doc.marshal(), root, opts)
	if err != nil {
		return nil, err
	}
	pkg.ManifestSource = source
	if label == entryLabel {
		pkg.ManifestPath = ""
	}
	pkg.Warnings = append(notes, pkg.Warnings...)
	return pkg, nil
}

// entryManifestDoc combines the folder's manifest (kind at rel, "" when
// none) with the marketplace entry, saying where the result came from.
func entryManifestDoc(root string, kind Kind, rel string, opts LoadOptions) (*node, string, []string, error) {
	entry, err := parseJSON(entryLabel, opts.Entry.Doc)
	if err != nil || entry.kind != kindObject {
		return nil, "", nil, plugind.Errorf(plugind.CodeInvalidSource, "the marketplace entry's fields are not a JSON object")
	}
	var own *node
	if rel != "" {
		t, err := opts.treeFor(root)
		if err != nil {
			return nil, "", nil, err
		}
		data, err := t.readFile(rel, maxJSONBytes)
		if err != nil {
			return nil, "", nil, coded(plugind.CodeSourceUnreadable, "read %s: %w", rel, err)
		}
		if own, err = parseJSON(rel, data); err != nil {
			return nil, "", nil, plugind.WithCode(plugind.CodeInvalidSource, err)
		}
		if own.kind != kindObject {
			return nil, "", nil, plugind.Errorf(plugind.CodeInvalidSource, "%s must hold a JSON object, not %s", rel, own.kind)
		}
	}
	name := opts.Name
	if name == "" {
		name = opts.Implied
	}
	var notes []string
	switch {
	case !opts.Entry.Strict:
		// The entry is the manifest; the folder's own, if any, is not read
		// for components.
		if own != nil && hasComponents(own) {
			notes = append(notes, fmt.Sprintf("the marketplace entry is strict: false, so it supplies the manifest; the components %s declares are not read", rel))
		}
		return entryDoc(entry, name, true), entryLabel + " (strict: false)", notes, nil
	case own == nil:
		// No manifest: the entry's fields supplement the conventions.
		return entryDoc(entry, name, false), entryLabel, nil, nil
	case kind == KindCodex:
		if hasComponents(entry) {
			notes = append(notes, fmt.Sprintf("the marketplace entry's component fields are not merged into a Codex manifest (%s); they are ignored", rel))
		}
		return own, rel, notes, nil
	}
	source := rel
	if hasComponents(entry) || !entry.get("dependencies").isEmpty() {
		source = rel + " + " + entryLabel
	}
	return mergeComponents(own, entry), source, nil, nil
}

// entryDoc builds a plugin.json document from an entry: its name, and its
// metadata when it is the manifest.
func entryDoc(entry *node, name string, withMeta bool) *node {
	doc := &node{kind: kindObject}
	doc.put("name", &node{kind: kindString, str: name})
	keys := componentKeys
	if withMeta {
		keys = append(append([]string{}, metaKeys...), componentKeys...)
	}
	for _, k := range keys {
		if v := entry.get(k); v != nil {
			doc.put(k, v)
		}
	}
	return doc
}

func hasComponents(doc *node) bool {
	for _, k := range componentKeys {
		if v := doc.get(k); v != nil && !v.isEmpty() {
			return true
		}
	}
	return false
}

// mergeComponents is the plugin's own manifest with the entry's component
// fields and dependencies added (Claude's strict: true): a field only the
// entry has is taken as is; one both have keeps both, as a list (paths,
// hook sets, MCP and LSP server maps are read from lists; dependencies
// are their union). The plugin's other metadata stands.
func mergeComponents(own, entry *node) *node {
	out := &node{kind: kindObject, keys: append([]string{}, own.keys...), vals: append([]*node{}, own.vals...)}
	for _, k := range append(componentKeys[:len(componentKeys):len(componentKeys)], "dependencies") {
		ev := entry.get(k)
		if ev == nil || ev.isEmpty() {
			continue
		}
		ov := out.get(k)
		if ov == nil || ov.isEmpty() {
			out.put(k, ev)
			continue
		}
		out.put(k, &node{kind: kindArray, items: append(items(ov), items(ev)...)})
	}
	return out
}

func items(n *node) []*node {
	if n.kind == kindArray {
		return n.items
	}
	return []*node{n}
}
