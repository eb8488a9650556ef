package marketplace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"reasonix.io/plugind"
	"reasonix.io/plugind/manifest"
)

// This file is `reasonix plugin validate` for marketplace documents: the
// structural rules of Claude Code's `claude plugin validate` for
// .claude-plugin/marketplace.json (so an author gets the same verdict from
// both tools), then what Reasonix itself makes of each entry, as warnings.
// Claude's reserved-name policy for marketplace names (official-looking,
// non-ASCII, and its internal "inline", "builtin", "skills-dir") is Claude's
// own and deliberately not copied.

// Ref is one entry as validation read it, for following its source.
type Ref struct {
	Index int
	At    string // "plugins[3]"
	Name  string
	// Local is the folder of a relative entry ("./x" cleaned to "x", "."
	// for the root) when the entry passed the checks; "" otherwise.
	Local   string
	Version string
	// Remote is true for url, github and git-subdir entries, whose folder
	// is in another repository.
	Remote bool
	// Valid reports that the entry has no error of its own.
	Valid bool
}

var (
	marketFields = []string{"$schema", "name", "version", "description", "owner", "plugins",
		"forceRemoveDeletedPlugins", "metadata", "allowCrossMarketplaceDependenciesOn", "renames"}
	pluginNameRE = plugind.LazyRegexp(`^[A-Za-z0-9][-A-Za-z0-9._]*$`)
	npmNameRE    = plugind.LazyRegexp(`^(@[a-z0-9][a-z0-9-._]*/)?[a-z0-9][a-z0-9-._]*$`)
	npmSchemeRE  = plugind.LazyRegexp(`(?i)^(?:file|https?|git(?:\+https?|\+ssh)?|ssh|github|gitlab|bitbucket):`)
	hostnameRE   = plugind.LazyRegexp(`^[a-z0-9.-]+$`)
)

// CheckDocument checks a Claude marketplace document (the structure alone)
// and returns the entries it lists.
func CheckDocument(data []byte) (manifest.Report, []Ref) {
	var r manifest.Report
	if strings.HasPrefix(string(data), "\xef\xbb\xbf") {
		r.Errorf("", "the file starts with a UTF-8 byte-order mark, which Claude Code's JSON parser rejects; save it without one (Reasonix reads it)")
		return r, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		if !json.Valid(data) {
			r.Errorf("", "not valid JSON: %v", err)
		} else {
			r.Errorf("", "a marketplace must be a JSON object, found %s", describeType(jsonType(data)))
		}
		return r, nil
	}
	v := &docCheck{r: &r}
	keys := orderedKeys(data)
	for _, k := range keys {
		if !contains(marketFields, k) {
			hint := ""
			if k == "pluginRoot" {
				hint = " (Claude Code reads metadata.pluginRoot)"
			}
			r.Warnf(k, "unknown field %q; Claude Code and Reasonix ignore it%s", k, hint)
		}
	}
	v.marketName(top["name"])
	v.owner(top["owner"])
	for _, k := range []string{"$schema", "version", "description"} {
		if raw, ok := top[k]; ok {
			v.str(k, raw)
		}
	}
	if raw, ok := top["forceRemoveDeletedPlugins"]; ok {
		v.boolean("forceRemoveDeletedPlugins", raw)
	}
	if raw, ok := top["allowCrossMarketplaceDependenciesOn"]; ok {
		v.strList("allowCrossMarketplaceDependenciesOn", raw)
	}
	v.metadata(top["metadata"])
	refs := v.plugins(top["plugins"])
	v.renames(top["renames"], refs)
	if !r.OK() {
		// Claude Code gives its advice only on a document its schema accepts.
	} else if !describes(top) {
		r.Warnf("description", "no marketplace description: say what this marketplace offers")
	}
	if reasonix, err := Parse(data, Options{}); err == nil {
		reasonixVerdicts(&r, refs, reasonix)
	}
	return r, refs
}

// describes reports whether the document has a description at the top
// level or under metadata.
func describes(top map[string]json.RawMessage) bool {
	var d string
	if json.Unmarshal(top["description"], &d) == nil && d != "" {
		return true
	}
	var md struct {
		Description string `json:"description"`
	}
	return json.Unmarshal(top["metadata"], &md) == nil && md.Description != ""
}

// reasonixVerdicts adds, as warnings, the entries Reasonix would skip or
// refuse for reasons of its own (no sha pin, a name it cannot install
// under, a case-only duplicate…), when the Claude rules found nothing
// wrong with them.
func reasonixVerdicts(r *manifest.Report, refs []Ref, m *Marketplace) {
	for i, ref := range refs {
		if !ref.Valid || i >= len(m.Entries) {
			continue
		}
		e := m.Entries[i]
		switch e.Status {
		case StatusSkipped:
			r.Warnf(ref.At, "Reasonix skips this entry in a bulk install: %s", strings.TrimPrefix(e.Reason, entryLabel(i, ref.Name)+": "))
		case StatusError:
			r.Warnf(ref.At, "Reasonix cannot install this entry: %s", strings.TrimPrefix(e.Reason, entryLabel(i, ref.Name)+": "))
		}
	}
}

func entryLabel(i int, name string) string {
	if name != "" {
		return fmt.Sprintf("marketplace entry %q (plugins[%d])", name, i)
	}
	return fmt.Sprintf("marketplace entry plugins[%d]", i)
}

// docCheck records the document's findings.
type docCheck struct {
	r *manifest.Report
	// bareRelative accepts a relative source without "./" (the install
	// path: SPEC §7 reads it under metadata.pluginRoot, which Claude Code
	// does not).
	bareRelative bool
	// decoded holds objects already decoded by the install parser, keyed
	// by their bytes (read-only): a bulk plan parses each entry once.
	decoded map[string]map[string]json.RawMessage
}

func (v *docCheck) want(at, what string, raw json.RawMessage) {
	v.r.Errorf(at, "must be %s, found %s", what, describeType(jsonType(raw)))
}

func (v *docCheck) str(at string, raw json.RawMessage) (string, bool) {
	if jsonType(raw) != "string" {
		v.want(at, "a string", raw)
		return "", false
	}
	return decodeString(raw), true
}

func (v *docCheck) boolean(at string, raw json.RawMessage) {
	if jsonType(raw) != "boolean" {
		v.want(at, "true or false", raw)
	}
}

func (v *docCheck) strList(at string, raw json.RawMessage) {
	var items []json.RawMessage
	if jsonType(raw) != "array" || json.Unmarshal(raw, &items) != nil {
		v.want(at, "an array of strings", raw)
		return
	}
	for i, it := range items {
		v.str(fmt.Sprintf("%s[%d]", at, i), it)
	}
}

func (v *docCheck) object(at string, raw json.RawMessage) (map[string]json.RawMessage, bool) {
	if o, ok := v.decoded[string(raw)]; ok {
		return o, true
	}
	var o map[string]json.RawMessage
	if jsonType(raw) != "object" || json.Unmarshal(raw, &o) != nil {
		v.want(at, "an object", raw)
		return nil, false
	}
	return o, true
}

func (v *docCheck) marketName(raw json.RawMessage) {
	if raw == nil {
		v.r.Errorf("name", "required: the marketplace's name (kebab-case, e.g. \"my-marketplace\")")
		return
	}
	s, ok := v.str("name", raw)
	switch {
	case !ok:
	case s == "":
		v.r.Errorf("name", "must not be empty")
	case strings.Contains(s, " "):
		v.r.Errorf("name", "marketplace name %q must not contain spaces (use kebab-case, e.g. \"my-marketplace\")", s)
	case strings.ContainsAny(s, `/\`) || strings.Contains(s, "..") || s == ".":
		v.r.Errorf("name", "marketplace name %q must not contain '/', '\\' or \"..\", nor be \".\"", s)
	}
}

func (v *docCheck) owner(raw json.RawMessage) {
	if raw == nil {
		v.r.Errorf("owner", "required: who maintains the marketplace, as {\"name\": …, \"email\"?: …}")
		return
	}
	o, ok := v.object("owner", raw)
	if !ok {
		return
	}
	if n, present := o["name"]; !present {
		v.r.Errorf("owner.name", "required")
	} else if s, ok := v.str("owner.name", n); ok && s == "" {
		v.r.Errorf("owner.name", "must not be empty")
	}
	for _, k := range []string{"email", "url"} {
		if raw, present := o[k]; present {
			v.str("owner."+k, raw)
		}
	}
}

func (v *docCheck) metadata(raw json.RawMessage) {
	if raw == nil {
		return
	}
	o, ok := v.object("metadata", raw)
	if !ok {
		return
	}
	for _, k := range orderedKeys(raw) {
		switch k {
		case "pluginRoot", "version", "description":
			v.str("metadata."+k, o[k])
		default:
			v.r.Warnf("metadata."+k, "unknown field %q; Claude Code and Reasonix ignore it", k)
		}
	}
}

func (v *docCheck) plugins(raw json.RawMessage) []Ref {
	if raw == nil {
		v.r.Errorf("plugins", "required: the array of plugin entries")
		return nil
	}
	var items []json.RawMessage
	if jsonType(raw) != "array" || json.Unmarshal(raw, &items) != nil {
		v.want("plugins", "an array of plugin entries", raw)
		return nil
	}
	refs := make([]Ref, len(items))
	for i, it := range items {
		refs[i] = v.entry(i, it)
	}
	if len(items) == 0 {
		v.r.Warnf("plugins", "the marketplace lists no plugins")
	}
	v.duplicates(refs)
	return refs
}

// duplicates: Claude refuses names used twice; Reasonix also refuses two
// names that differ only in case (they collide as folder names on
// case-insensitive file systems), which is a warning here.
func (v *docCheck) duplicates(refs []Ref) {
	exact, folded := map[string]int{}, map[string][]int{}
	for i, ref := range refs {
		if ref.Name == "" {
			continue
		}
		exact[ref.Name]++
		k := strings.ToLower(ref.Name)
		folded[k] = append(folded[k], i)
	}
	for i := range refs {
		ref := &refs[i]
		if ref.Name == "" {
			continue
		}
		if exact[ref.Name] > 1 {
			v.r.Errorf(ref.At+".name", "duplicate plugin name %q: another entry uses it too", ref.Name)
			ref.Valid = false
			continue
		}
		if idx := folded[strings.ToLower(ref.Name)]; len(idx) > 1 {
			others := []string{}
			for _, j := range idx {
				if j != i {
					others = append(others, fmt.Sprintf("plugins[%d] %q", j, refs[j].Name))
				}
			}
			v.r.Warnf(ref.At+".name", "name %q differs only in case from %s: Reasonix refuses both (they collide as folder names on case-insensitive file systems)", ref.Name, strings.Join(others, ", "))
		}
	}
}

// entry checks one entry: its own fields, its source, and the plugin
// manifest fields it may carry.
func (v *docCheck) entry(i int, raw json.RawMessage) Ref {
	at := fmt.Sprintf("plugins[%d]", i)
	ref := Ref{Index: i, At: at}
	before := len(v.r.Errors)
	o, ok := v.object(at, raw)
	if !ok {
		return ref
	}
	var sub manifest.Report
	for _, k := range orderedKeys(raw) {
		p := at + "." + k
		switch k {
		case "name":
			if s, ok := v.str(p, o[k]); ok {
				ref.Name = s
				switch {
				case s == "":
					v.r.Errorf(p, "must not be empty")
				case strings.Contains(s, " "):
					v.r.Errorf(p, "plugin name %q must not contain spaces (use kebab-case, e.g. \"my-plugin\")", s)
				}
			}
		case "source":
			ref.Local, ref.Remote = v.source(p, o[k])
		case "category":
			v.str(p, o[k])
		case "tags":
			v.strList(p, o[k])
		case "strict":
			v.boolean(p, o[k])
		case "relevance":
			v.relevance(p, o[k])
		default:
			if !manifest.CheckClaudeField(k, o[k], p, &sub) {
				v.r.Warnf(p, "unknown field %q; Claude Code and Reasonix ignore it", k)
			}
		}
	}
	v.r.Errors = append(v.r.Errors, sub.Errors...)
	v.r.Warnings = append(v.r.Warnings, sub.Warnings...)
	if _, ok := o["name"]; !ok {
		v.r.Errorf(at+".name", "required")
	}
	if _, ok := o["source"]; !ok {
		v.r.Errorf(at+".source", "required: where the plugin is (\"./path\" or a source object)")
	}
	if s, ok := o["version"]; ok && jsonType(s) == "string" {
		_ = json.Unmarshal(s, &ref.Version)
	}
	ref.Valid = len(v.r.Errors) == before
	if !ref.Valid {
		ref.Local = ""
	}
	return ref
}

// source checks an entry's source and returns the relative folder it names
// (cleaned; "" when not relative) and whether it is a remote repository.
func (v *docCheck) source(at string, raw json.RawMessage) (string, bool) {
	switch jsonType(raw) {
	case "string":
		var s string
		_ = json.Unmarshal(raw, &s)
		return v.stringSource(at, s), false
	case "object":
	default:
		v.want(at, "a \"./path\" or a source object", raw)
		return "", false
	}
	o, _ := v.object(at, raw)
	// Claude's traversal check runs on any string "path", before the shape.
	if p, ok := o["path"]; ok && jsonType(p) == "string" {
		var s string
		_ = json.Unmarshal(p, &s)
		if strings.Contains(s, "..") {
			v.r.Errorf(at+".path", "path %q contains \"..\"", s)
		}
	}
	typRaw, ok := o["source"]
	if !ok {
		v.r.Errorf(at+".source", "required: the source type (\"url\", \"github\", \"git-subdir\" or \"npm\")")
		return "", false
	}
	typ, ok := v.str(at+".source", typRaw)
	if !ok {
		return "", false
	}
	required := func(k string) (string, bool) {
		raw, present := o[k]
		if !present {
			v.r.Errorf(at+"."+k, "required for a %q source", typ)
			return "", false
		}
		return v.str(at+"."+k, raw)
	}
	optStr := func(keys ...string) {
		for _, k := range keys {
			if raw, present := o[k]; present {
				v.str(at+"."+k, raw)
			}
		}
	}
	sha := func() {
		raw, present := o["sha"]
		if !present {
			return
		}
		if s, ok := v.str(at+".sha", raw); ok && !fullSHAPin.MatchString(s) {
			v.r.Errorf(at+".sha", "%q is not a full 40-character lowercase hex commit SHA", truncate(s, 50))
		}
	}
	known := map[string][]string{
		"url":        {"source", "url", "ref", "sha", "path"},
		"github":     {"source", "repo", "ref", "sha", "path"},
		"git-subdir": {"source", "url", "path", "ref", "sha"},
		"npm":        {"source", "package", "version", "registry"},
	}
	if fields, ok := known[typ]; ok {
		for _, k := range orderedKeys(raw) {
			if !contains(fields, k) {
				hint := ""
				if k == "commit" {
					hint = " (the pin is \"sha\")"
				}
				v.r.Warnf(at+"."+k, "unknown field %q of a %q source; ignored%s", k, typ, hint)
			}
		}
	}
	switch typ {
	case "url":
		required("url")
		optStr("ref")
		sha()
		return "", true
	case "github":
		required("repo")
		optStr("ref")
		sha()
		return "", true
	case "git-subdir":
		required("url")
		if p, ok := required("path"); ok && p == "" {
			v.r.Errorf(at+".path", "must not be empty")
		}
		optStr("ref")
		sha()
		return "", true
	case "npm":
		if p, ok := required("package"); ok && !npmNameRE.MatchString(p) && strings.Contains(p, "..") && !npmSchemeRE.MatchString(p) {
			v.r.Errorf(at+".package", "package %q must not contain \"..\"", truncate(p, 80))
		}
		optStr("version")
		if raw, present := o["registry"]; present {
			if s, ok := v.str(at+".registry", raw); ok && !manifest.IsURL(s) {
				v.r.Errorf(at+".registry", "%q is not a valid URL", truncate(s, 80))
			}
		}
		return "", false
	case "unsupported":
		v.r.Errorf(at+".source", "\"unsupported\" is a placeholder Claude Code uses internally and cannot be written in a marketplace")
	default:
		hint := ""
		switch typ {
		case "local":
			hint = "; a local plugin is a path string such as \"./plugins/NAME\" (\"local\" is Codex's format)"
		case "git":
			hint = "; a git repository is {\"source\": \"url\", \"url\": …}"
		}
		v.r.Errorf(at+".source", "unknown source type %q (known: \"url\", \"github\", \"git-subdir\", \"npm\")%s", truncate(typ, 40), hint)
	}
	return "", false
}

var fullSHAPin = plugind.LazyRegexp(`^[a-f0-9]{40}$`)

// stringSource: Claude Code takes a string source as a path inside the
// marketplace only when it starts with "./" ("." is the root). It does not
// apply metadata.pluginRoot, and a URL string is not a source.
func (v *docCheck) stringSource(at, s string) string {
	if strings.Contains(s, "..") {
		v.r.Errorf(at, "path %q contains \"..\": plugin sources are relative to the marketplace root (the folder holding .claude-plugin/), not to marketplace.json, and must stay inside it", truncate(s, 80))
		return ""
	}
	if s == "." {
		s = "./"
	}
	if !strings.HasPrefix(s, "./") {
		switch {
		case v.bareRelative && !isExternal(s):
			return ""
		case isExternal(s):
			v.r.Errorf(at, "%q is not a plugin source: a path string must start with \"./\"; a repository is an object such as {\"source\": \"url\", \"url\": \"https://github.com/OWNER/REPO\", \"sha\": \"<40-hex commit>\"}", truncate(s, 80))
		default:
			v.r.Errorf(at, "path %q must start with \"./\" (Claude Code does not apply metadata.pluginRoot; Reasonix does, but write \"./…\" for both)", truncate(s, 80))
		}
		return ""
	}
	clean, err := cleanPath("source", s)
	if err != nil {
		v.r.Errorf(at, "%v", err)
		return ""
	}
	return clean
}

// relevance is Claude Code's discovery hint: anything but an object is
// ignored (a warning); an object must be well formed.
func (v *docCheck) relevance(at string, raw json.RawMessage) {
	var o map[string]json.RawMessage
	if jsonType(raw) != "object" || json.Unmarshal(raw, &o) != nil {
		v.r.Warnf(at, "must be an object with \"topic\" and \"signals\", found %s; ignored", describeType(jsonType(raw)))
		return
	}
	for _, k := range orderedKeys(raw) {
		switch k {
		case "topic":
			if s, ok := v.str(at+".topic", o[k]); ok && (s == "" || len(s) > 64) {
				v.r.Errorf(at+".topic", "must be 1 to 64 characters")
			}
		case "signals":
			v.signals(at+".signals", o[k])
		default:
			v.r.Warnf(at+"."+k, "unknown field %q; ignored", k)
		}
	}
}

func (v *docCheck) signals(at string, raw json.RawMessage) {
	o, ok := v.object(at, raw)
	if !ok {
		return
	}
	limits := map[string]struct{ items, length int }{
		"cli": {10, 64}, "hosts": {20, 128}, "filesRead": {10, 256}, "cwd": {10, 256},
	}
	declared := 0
	for _, k := range orderedKeys(raw) {
		p := at + "." + k
		if k == "manifestDeps" {
			declared += v.manifestDeps(p, o[k])
			continue
		}
		lim, known := limits[k]
		if !known {
			v.r.Warnf(p, "unknown signal %q; ignored", k)
			continue
		}
		var items []json.RawMessage
		if jsonType(o[k]) != "array" || json.Unmarshal(o[k], &items) != nil {
			v.want(p, "an array of strings", o[k])
			continue
		}
		declared += len(items)
		if len(items) > lim.items {
			v.r.Errorf(p, "at most %d entries", lim.items)
		}
		for i, it := range items {
			ip := fmt.Sprintf("%s[%d]", p, i)
			s, ok := v.str(ip, it)
			switch {
			case !ok:
			case s == "" || len(s) > lim.length:
				v.r.Errorf(ip, "must be 1 to %d characters", lim.length)
			case k == "hosts" && !hostnameRE.MatchString(s):
				v.r.Errorf(ip, "%q must be a lowercase bare hostname (no scheme, port or path)", truncate(s, 80))
			case (k == "filesRead" || k == "cwd") && strings.Contains(s, `\`):
				v.r.Errorf(ip, "%q must use forward slashes", truncate(s, 80))
			}
		}
	}
	if declared == 0 {
		v.r.Errorf(at, "must declare at least one signal (cli, hosts, filesRead, manifestDeps or cwd)")
	}
}

func (v *docCheck) manifestDeps(at string, raw json.RawMessage) int {
	var items []json.RawMessage
	if jsonType(raw) != "array" || json.Unmarshal(raw, &items) != nil {
		v.want(at, "an array of {\"file\", \"pattern\"} objects", raw)
		return 0
	}
	if len(items) == 0 || len(items) > 10 {
		v.r.Errorf(at, "must hold 1 to 10 entries")
	}
	for i, it := range items {
		ip := fmt.Sprintf("%s[%d]", at, i)
		o, ok := v.object(ip, it)
		if !ok {
			continue
		}
		for _, k := range []string{"file", "pattern"} {
			raw, present := o[k]
			if !present {
				v.r.Errorf(ip+"."+k, "required")
				continue
			}
			s, ok := v.str(ip+"."+k, raw)
			if !ok {
				continue
			}
			if s == "" || len(s) > 256 {
				v.r.Errorf(ip+"."+k, "must be 1 to 256 characters")
			} else if _, err := regexp.Compile(s); err != nil {
				v.r.Errorf(ip+"."+k, "must be a valid regular expression: %v", err)
			}
		}
	}
	return len(items)
}

// renames maps old plugin names to new ones (or null: removed). Each chain
// must end at a listed plugin or at null.
func (v *docCheck) renames(raw json.RawMessage, refs []Ref) {
	if raw == nil {
		return
	}
	o, ok := v.object("renames", raw)
	if !ok {
		return
	}
	targets := map[string]*string{}
	for _, k := range orderedKeys(raw) {
		val := o[k]
		switch jsonType(val) {
		case "null":
			targets[k] = nil
		case "string":
			var s string
			_ = json.Unmarshal(val, &s)
			targets[k] = &s
		default:
			v.want("renames."+k, "a plugin name or null", val)
			return
		}
	}
	names := map[string]bool{}
	for _, ref := range refs {
		names[ref.Name] = true
	}
	listed := func(n string) bool { return names[n] }
	for _, k := range orderedKeys(raw) {
		switch r := Renames(targets).Follow(k, listed); r.Kind {
		case Renamed:
			if !pluginNameRE.MatchString(r.To) {
				v.r.Errorf("renames."+k, "target %q is not a valid plugin name", r.To)
			}
		case RenameUnresolved:
			v.r.Errorf("renames."+k, "the rename chain does not resolve (%s): each target must be a name in plugins, a key of renames, or null", r.Reason)
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ValidateOptions adjust ValidateLocal.
type ValidateOptions struct {
	// Deep validates each relative entry's folder in full
	// (manifest.ValidatePluginDir): a folder or source was given. Without
	// it, as for a marketplace.json file, only what Claude Code's
	// validator reads is checked: the .claude-plugin/plugin.json of each
	// relative entry, where there is one.
	Deep bool
}

// MarketplaceRoot is the folder a marketplace document's relative sources
// start from: the parent of .claude-plugin/ (Codex: of .agents/plugins/),
// else the document's own folder.
func MarketplaceRoot(docPath string) string {
	dir := filepath.Dir(docPath)
	switch {
	case filepath.Base(dir) == ".claude-plugin":
		return filepath.Dir(dir)
	case filepath.Base(dir) == "plugins" && filepath.Base(filepath.Dir(dir)) == ".agents":
		return filepath.Dir(filepath.Dir(dir))
	}
	return dir
}

// ValidateLocal validates the marketplace document at docPath and follows
// its relative entries on disk (see ValidateOptions). Remote entries are
// checked as written and listed in Checked as not fetched; the caller may
// fetch them. Findings name their file relative to the marketplace root.
func ValidateLocal(docPath string, opts ValidateOptions) (manifest.Report, []Ref) {
	var r manifest.Report
	root := MarketplaceRoot(docPath)
	rel, err := filepath.Rel(root, docPath)
	if err != nil {
		rel = filepath.Base(docPath)
	}
	rel = filepath.ToSlash(rel)
	data, err := manifest.ReadFile(root, rel, manifest.MaxMarketplaceBytes)
	if err != nil {
		r.Errors = append(r.Errors, manifest.Finding{File: rel, Message: "the marketplace " + manifest.Unreadable(err)})
		return r, nil
	}
	r.Checked = append(r.Checked, manifest.Checked{Kind: "marketplace", File: rel})
	var doc manifest.Report
	var refs []Ref
	if isCodexPath(docPath) {
		doc, refs = CheckCodexDocument(data)
	} else {
		doc, refs = CheckDocument(data)
	}
	r.Merge(doc, "", rel)
	for _, ref := range refs {
		followLocal(&r, root, ref, opts)
	}
	return r, refs
}

func isCodexPath(docPath string) bool {
	return strings.HasSuffix(filepath.ToSlash(docPath), manifest.CodexMarketplace)
}

// followLocal checks what a relative entry points at.
func followLocal(r *manifest.Report, root string, ref Ref, opts ValidateOptions) {
	name := ref.Name
	switch {
	case ref.Remote:
		r.Checked = append(r.Checked, manifest.Checked{Kind: "entry", Entry: ref.At, Name: name, Note: "remote entry: checked as written, not fetched"})
		return
	case ref.Local == "":
		if ref.Valid {
			r.Checked = append(r.Checked, manifest.Checked{Kind: "entry", Entry: ref.At, Name: name, Note: "not a folder of this marketplace"})
		}
		return
	}
	dir := filepath.Join(root, filepath.FromSlash(ref.Local))
	if ok, escapes := within(root, dir); !ok {
		r.Errors = append(r.Errors, manifest.Finding{Entry: ref.At, Path: ref.At + ".source", Message: fmt.Sprintf("folder %q %s", "./"+ref.Local, escapes)})
		return
	}
	manifestFile := path.Join(ref.Local, manifest.ClaudeManifest)
	crossCheckVersion(r, root, ref, manifestFile)
	if !opts.Deep {
		data, err := readManifest(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			return // Claude checks only a manifest that is there
		case err != nil:
			r.Errors = append(r.Errors, manifest.Finding{Entry: ref.At, File: manifestFile, Message: manifest.Unreadable(err)})
			return
		}
		r.Checked = append(r.Checked, manifest.Checked{Kind: "manifest", Entry: ref.At, Name: name, File: manifestFile})
		r.Merge(manifest.CheckClaudeManifest(data, dir), ref.At, manifestFile)
		return
	}
	info, err := os.Stat(dir)
	if err != nil || !info.IsDir() {
		r.Errors = append(r.Errors, manifest.Finding{Entry: ref.At, Path: ref.At + ".source", Message: fmt.Sprintf("folder %q does not exist in the marketplace", "./"+ref.Local)})
		return
	}
	r.Checked = append(r.Checked, manifest.Checked{Kind: "plugin", Entry: ref.At, Name: name, File: ref.Local})
	r.Merge(manifest.ValidatePluginDir(dir, manifest.ValidateOptions{Implied: name, ContentAsWarnings: true}), ref.At, ref.Local)
}

// readManifest reads the .claude-plugin/plugin.json of a relative entry's
// folder as install reads it: confined to that folder.
func readManifest(dir string) ([]byte, error) {
	return manifest.ReadFile(dir, manifest.ClaudeManifest, manifest.MaxManifestBytes)
}

// within reports whether dir, symlinks resolved, stays inside root.
func within(root, dir string) (bool, string) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return true, ""
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return true, "" // missing: reported where it matters
	}
	if !plugind.Within(realRoot, realDir) {
		return false, "leaves the marketplace folder through a symlink"
	}
	return true, ""
}

// crossCheckVersion warns when an entry's version differs from its
// plugin.json's: the manifest's wins at install.
func crossCheckVersion(r *manifest.Report, root string, ref Ref, manifestFile string) {
	if ref.Version == "" {
		return
	}
	data, err := readManifest(filepath.Join(root, filepath.FromSlash(ref.Local)))
	if err != nil {
		return // reported where the manifest is checked
	}
	var m struct {
		Version any `json:"version"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		r.Warnings = append(r.Warnings, manifest.Finding{Entry: ref.At, Path: ref.At + ".source", Message: fmt.Sprintf("cannot parse %s to compare versions: %v", manifestFile, err)})
		return
	}
	if v, ok := m.Version.(string); ok && v != ref.Version {
		r.Warnings = append(r.Warnings, manifest.Finding{Entry: ref.At, Path: ref.At + ".version", Message: fmt.Sprintf("the entry says version %q but %s says %q; the plugin's own version wins at install, so update the entry", ref.Version, manifestFile, v)})
	}
}

// CheckCodexDocument checks a Codex .agents/plugins/marketplace.json by
// Reasonix's reading of it (Claude Code has no validator for this format):
// what Parse refuses is an error, what it warns about a warning.
func CheckCodexDocument(data []byte) (manifest.Report, []Ref) {
	var r manifest.Report
	m, err := ParseCodex(data, Options{})
	if err != nil {
		r.Errorf("", "%s", strings.TrimPrefix(err.Error(), codexFormat.file+": "))
		return r, nil
	}
	for _, w := range m.Warnings {
		at, msg, ok := strings.Cut(w, ": ")
		if !ok || strings.ContainsAny(at, " \"") {
			at, msg = "", w
		}
		r.Warnf(at, "%s", msg)
	}
	refs := make([]Ref, len(m.Entries))
	for i, e := range m.Entries {
		at := fmt.Sprintf("plugins[%d]", i)
		ref := Ref{Index: i, At: at, Name: e.Name, Version: e.Version, Valid: e.Status != StatusError}
		reason := strings.TrimPrefix(e.Reason, entryLabel(i, e.Name)+": ")
		switch e.Status {
		case StatusReady:
			ref.Local = e.Path
		case StatusSkipped:
			r.Warnf(at, "skipped: %s", reason)
		case StatusError:
			r.Errorf(at, "%s", reason)
		}
		refs[i] = ref
	}
	return r, refs
}
