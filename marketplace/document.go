package marketplace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"reasonix.io/plugind"
)

// format is what differs between the Claude and the Codex document.
type format struct {
	file        string // how messages name the document
	topFields   set
	entryFields set
	codex       bool // "local" sources, policy.installation, no pluginRoot/strict
}

type set map[string]bool

func newSet(keys ...string) set {
	s := make(set, len(keys))
	for _, k := range keys {
		s[k] = true
	}
	return s
}

// The Claude field sets are the SchemaStore schema's (corpus/_schemas), plus
// "renames" and "displayName", which Claude Code's own official marketplace
// uses; warning about them there would be noise.
var (
	claudeFormat = format{
		file: ".claude-plugin/marketplace.json",
		topFields: newSet("$schema", "name", "version", "description", "owner", "plugins",
			"forceRemoveDeletedPlugins", "metadata", "allowCrossMarketplaceDependenciesOn", "renames"),
		entryFields: newSet("$schema", "name", "version", "description", "author", "homepage",
			"repository", "license", "keywords", "dependencies", "hooks", "commands", "agents",
			"skills", "outputStyles", "themes", "channels", "mcpServers", "lspServers", "monitors",
			"settings", "userConfig", "source", "category", "tags", "strict", "displayName"),
	}
	// Codex's format as its real marketplaces spell it (corpus
	// codex-marketplace.json files).
	codexFormat = format{
		file:        ".agents/plugins/marketplace.json",
		topFields:   newSet("$schema", "name", "interface", "plugins"),
		entryFields: newSet("name", "description", "version", "source", "policy", "category", "interface"),
		codex:       true,
	}
	metadataFields = newSet("pluginRoot", "version", "description")
	ownerFields    = newSet("name", "email", "url")
)

// parser carries one document's state through classification.
type parser struct {
	f        format
	opts     Options
	m        *Marketplace
	rootErr  string // why metadata.pluginRoot is unusable; "" when fine
	hasRoot  bool
	warnings []string
}

func parse(data []byte, opts Options, f format) (*Marketplace, error) {
	bad := func(format string, args ...any) error {
		return plugind.Errorf(plugind.CodeInvalidSource, "%s: %s", f.file, fmt.Sprintf(format, args...))
	}
	// Editors on Windows like to write a byte-order mark; JSON forbids it
	// but it carries no meaning, so it is dropped rather than refused.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		if !json.Valid(data) {
			return nil, bad("not valid JSON: %v", err)
		}
		return nil, bad("expected a JSON object with a \"plugins\" array, found %s", describeType(jsonType(data)))
	}
	rawPlugins, ok := top["plugins"]
	if !ok {
		return nil, bad("%s", missingPlugins(top))
	}
	if t := jsonType(rawPlugins); t != "array" {
		return nil, bad("expected \"plugins\" to be an array of entries, found %s", describeType(t))
	}
	var plugins []json.RawMessage
	if err := json.Unmarshal(rawPlugins, &plugins); err != nil {
		return nil, bad("\"plugins\": %v", err)
	}
	if len(plugins) > MaxEntries {
		return nil, bad("lists %d plugin entries; the limit is %d", len(plugins), MaxEntries)
	}

	p := &parser{f: f, opts: opts, m: &Marketplace{}}
	p.unknown("", top, f.topFields)
	p.m.Name, _ = p.optString("name", top["name"])
	p.m.Description, _ = p.optString("description", top["description"])
	if raw, ok := top["owner"]; ok && !f.codex {
		p.object("owner", raw, ownerFields)
	}
	if raw, ok := top["metadata"]; ok && !f.codex {
		p.metadata(raw)
	}
	if raw, ok := top["allowCrossMarketplaceDependenciesOn"]; ok && !f.codex {
		p.m.AllowCrossMarketplaceDependenciesOn = p.optStrings("allowCrossMarketplaceDependenciesOn", raw)
	}
	if !f.codex {
		p.m.Renames = parseRenames(top["renames"])
	}

	entries := make([]entryState, len(plugins))
	for i, raw := range plugins {
		entries[i] = p.entry(i, raw)
		p.claudeEntryRules(&entries[i], raw)
	}
	markDuplicates(entries)
	p.m.Entries = make([]Entry, len(entries))
	for i := range entries {
		p.m.Entries[i] = entries[i].finish()
	}
	p.m.Warnings = p.warnings
	return p.m, nil
}

// missingPlugins explains a document without a "plugins" field, naming what
// was found instead so the author can tell which format they wrote.
func missingPlugins(top map[string]json.RawMessage) string {
	keys := sortedKeys(top)
	found := "an empty object"
	if len(keys) > 0 {
		found = "top-level fields " + strings.Join(quoteAll(keys), ", ")
	}
	msg := fmt.Sprintf("expected a top-level \"plugins\" array, found no \"plugins\" field (%s)", found)
	for _, k := range keys {
		var inner map[string]json.RawMessage
		if jsonType(top[k]) != "object" || json.Unmarshal(top[k], &inner) != nil {
			continue
		}
		if _, ok := inner["plugins"]; ok {
			msg += fmt.Sprintf("; the plugins are wrapped in a %q object, which is not the Claude Code or Codex marketplace format (\"plugins\" must be at the top level, each entry with a \"source\")", k)
			break
		}
	}
	return msg
}

func (p *parser) metadata(raw json.RawMessage) {
	var md map[string]json.RawMessage
	if jsonType(raw) != "object" || json.Unmarshal(raw, &md) != nil {
		p.warn("metadata: expected an object, found %s; ignored", describeType(jsonType(raw)))
		return
	}
	p.unknown("metadata", md, metadataFields)
	if p.m.Description == "" {
		p.m.Description, _ = p.optString("metadata.description", md["description"])
	}
	rootRaw, ok := md["pluginRoot"]
	if !ok {
		return
	}
	p.hasRoot = true
	if t := jsonType(rootRaw); t != "string" {
		p.rootErr = fmt.Sprintf("metadata.pluginRoot must be a string, found %s", describeType(t))
		p.warn("%s; entries with bare-name sources cannot be placed", p.rootErr)
		return
	}
	var root string
	_ = json.Unmarshal(rootRaw, &root)
	clean, err := cleanPath("metadata.pluginRoot", root)
	if err != nil {
		p.rootErr = err.Error()
		p.warn("%s; entries with bare-name sources cannot be placed", p.rootErr)
		return
	}
	if clean != "." {
		p.m.PluginRoot = clean
	}
}

// object warns about unknown fields of a nested object at path.
func (p *parser) object(path string, raw json.RawMessage, known set) {
	var o map[string]json.RawMessage
	if jsonType(raw) != "object" || json.Unmarshal(raw, &o) != nil {
		p.warn("%s: expected an object, found %s; ignored", path, describeType(jsonType(raw)))
		return
	}
	p.unknown(path, o, known)
}

// unknown records one warning per field of o not in known, by JSON path.
func (p *parser) unknown(path string, o map[string]json.RawMessage, known set) {
	for _, k := range sortedKeys(o) {
		if known[k] {
			continue
		}
		hint := ""
		if path == "" && k == "pluginRoot" && !p.f.codex {
			hint = " (Claude Code reads metadata.pluginRoot)"
		}
		p.warn("%s: unknown field, ignored%s", joinPath(path, k), hint)
	}
}

// optString reads an optional string field; a wrong type is a warning and
// the field is ignored.
func (p *parser) optString(path string, raw json.RawMessage) (string, bool) {
	if raw == nil {
		return "", false
	}
	t := jsonType(raw)
	if t == "null" {
		return "", false
	}
	if t != "string" {
		p.warn("%s: expected a string, found %s; ignored", path, describeType(t))
		return "", false
	}
	if s, ok := plainString(raw); ok {
		return s, true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// optStrings reads an optional list of strings; anything else is a
// warning and reads as none.
func (p *parser) optStrings(path string, raw json.RawMessage) []string {
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		p.warn("%s: expected an array of strings, found %s; ignored", path, describeType(jsonType(raw)))
		return nil
	}
	return list
}

func (p *parser) warn(format string, args ...any) {
	p.warnings = append(p.warnings, fmt.Sprintf(format, args...))
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys(o map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// jsonType names the JSON type of a valid value by its first byte.
func jsonType(raw []byte) string {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return "object"
		case '[':
			return "array"
		case '"':
			return "string"
		case 't', 'f':
			return "boolean"
		case 'n':
			return "null"
		default:
			return "number"
		}
	}
	return "nothing"
}

func describeType(t string) string {
	switch t {
	case "object", "array":
		return "an " + t
	case "null", "nothing":
		return t
	default:
		return "a " + t
	}
}
