package manifest

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"

	"reasonix.io/plugind"
)

// This file is `reasonix plugin validate` for Claude plugin manifests
// (.claude-plugin/plugin.json): the structural rules of Claude Code's own
// `claude plugin validate`, so that an author gets the same verdict from
// both tools. Claude Code's plugin reference defines the fields; where the
// reference is silent its validator decides (required fields, types, the
// "./" prefix of component paths, `.md` agent files, hook events, MCP and
// LSP server shapes). Unknown fields are warnings, as they are for Claude.
// Claude's reserved-name policy (official-looking and non-ASCII names) is
// Claude's own and deliberately not copied.

// Finding is one problem validation found. Path is the JSON path of the
// field it names ("commands[0]", "plugins[3].source.sha"; "" for the
// document as a whole). File, when set, is the file the finding is about,
// relative to what was validated; Entry names the marketplace entry
// ("plugins[3]") whose plugin the file belongs to.
type Finding struct {
	Entry   string `json:"entry,omitempty"`
	File    string `json:"file,omitempty"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Report is what validating a document or a folder found. Errors are what
// Claude Code's validator (and Reasonix's install path) refuses; warnings
// are what both tolerate.
type Report struct {
	Errors   []Finding `json:"errors"`
	Warnings []Finding `json:"warnings"`
	// Checked lists what was read, in order, and what was not (Note).
	Checked []Checked `json:"checked"`
}

// Checked is one document or folder validation looked at, or left alone.
type Checked struct {
	// Kind is "marketplace", "manifest" (a plugin manifest document),
	// "plugin" (a plugin folder) or "entry" (an entry that was not
	// followed; Note says why).
	Kind  string `json:"kind"`
	Entry string `json:"entry,omitempty"`
	Name  string `json:"name,omitempty"`
	File  string `json:"file,omitempty"`
	Note  string `json:"note,omitempty"`
}

// OK reports whether there are no errors.
func (r *Report) OK() bool { return len(r.Errors) == 0 }

// Errorf records an error at path.
func (r *Report) Errorf(path, format string, args ...any) {
	r.Errors = append(r.Errors, Finding{Path: path, Message: fmt.Sprintf(format, args...)})
}

// Warnf records a warning at path.
func (r *Report) Warnf(path, format string, args ...any) {
	r.Warnings = append(r.Warnings, Finding{Path: path, Message: fmt.Sprintf(format, args...)})
}

// Merge appends other's findings. Those that name no entry get entry; when
// dir is not "", each finding's file is taken as relative to dir (a plugin
// folder inside what was validated) and made relative to the whole.
func (r *Report) Merge(other Report, entry, dir string) {
	fill := func(f Finding) Finding {
		if f.Entry == "" {
			f.Entry = entry
		}
		if dir != "" {
			f.File = path.Join(dir, f.File)
		}
		return f
	}
	for _, f := range other.Errors {
		r.Errors = append(r.Errors, fill(f))
	}
	for _, f := range other.Warnings {
		r.Warnings = append(r.Warnings, fill(f))
	}
	for _, c := range other.Checked {
		if c.Entry == "" {
			c.Entry = entry
		}
		if dir != "" {
			c.File = path.Join(dir, c.File)
		}
		r.Checked = append(r.Checked, c)
	}
}

// Demote turns every error into a warning, each saying what Claude Code's
// validator would make of it when run on the file itself: a marketplace's
// validation does not read its plugins' content files, so neither verdict
// counts them there.
func (r *Report) Demote(why string) {
	for _, f := range r.Errors {
		f.Message += " (" + why + ")"
		r.Warnings = append(r.Warnings, f)
	}
	r.Errors = nil
}

// Summary is the first few errors as one line, for an install refusal.
func (r *Report) Summary(limit int) string {
	parts := make([]string, 0, min(limit, len(r.Errors))+1)
	for i, f := range r.Errors {
		if i == limit {
			parts = append(parts, fmt.Sprintf("and %d more (run: reasonix plugin validate)", len(r.Errors)-limit))
			break
		}
		if f.Path == "" {
			parts = append(parts, f.Message)
		} else {
			parts = append(parts, f.Path+": "+f.Message)
		}
	}
	return strings.Join(parts, "; ")
}

// claudeManifestFields are the fields of Claude Code's plugin manifest, in
// the order its reference lists them.
var claudeManifestFields = []string{
	"$schema", "name", "displayName", "version", "description", "author", "homepage",
	"repository", "license", "keywords", "defaultEnabled", "dependencies", "hooks", "commands",
	"agents", "skills", "outputStyles", "themes", "workflows", "channels", "mcpServers",
	"lspServers", "monitors", "settings", "userConfig", "binaries", "experimental",
}

// entryOnlyFields belong in a marketplace entry, not in plugin.json.
var entryOnlyFields = map[string]bool{"category": true, "source": true, "tags": true, "strict": true, "id": true, "relevance": true}

// IsClaudeManifestField reports whether key is a field of Claude Code's
// plugin manifest (marketplace entries may carry every one of them).
func IsClaudeManifestField(key string) bool {
	for _, k := range claudeManifestFields {
		if k == key {
			return true
		}
	}
	return false
}

// CheckClaudeManifest checks a .claude-plugin/plugin.json document. When
// root is not "", it is the plugin folder, and the component paths the
// document declares must exist in it, as Claude's validator requires.
func CheckClaudeManifest(data []byte, root string) Report {
	var r Report
	doc, ok := parseForCheck(data, &r)
	if !ok {
		return r
	}
	checkClaudeDoc(doc, root, &r)
	return r
}

// parseForCheck decodes a JSON document the way Claude Code reads it: a
// byte-order mark is a syntax error there, so it is one here (Reasonix's
// installer reads such a file; Claude Code cannot).
func parseForCheck(data []byte, r *Report) (*node, bool) {
	if strings.HasPrefix(string(data), "\xef\xbb\xbf") {
		r.Errorf("", "the file starts with a UTF-8 byte-order mark, which Claude Code's JSON parser rejects; save it without one")
		return nil, false
	}
	doc, err := parseJSON("the document", data)
	if err != nil {
		r.Errorf("", "%v", err)
		return nil, false
	}
	return doc, true
}

func checkClaudeDoc(doc *node, root string, r *Report) {
	if doc.kind != kindObject {
		r.Errorf("", "a plugin manifest must be a JSON object, found %s", describe(doc))
		return
	}
	c := &checker{r: r}
	if doc.get("name") == nil {
		r.Errorf("name", "required: the plugin's name (kebab-case, e.g. \"my-plugin\")")
	}
	for i, k := range doc.keys {
		if !c.field(k, doc.vals[i], k) {
			r.Warnf(k, "%s", unknownFieldMessage(k, entryOnlyFields[k]))
		}
	}
	for _, k := range []string{"monitors", "themes"} {
		if doc.get(k) != nil {
			r.Warnf(k, "%q is an experimental component: declare it under \"experimental.%s\" (top-level still loads in Claude Code but is going away)", k, k)
		}
	}
	// Claude Code gives this advice only on a manifest its schema accepts.
	schemaOK := r.OK()
	if root != "" {
		checkDeclaredPaths(doc, root, r)
	}
	if !schemaOK {
		return
	}
	if n := doc.get("version"); n == nil || (n.kind == kindString && n.str == "") {
		r.Warnf("version", "no version: add one following semver, e.g. \"1.0.0\"")
	}
	if n := doc.get("description"); n == nil || (n.kind == kindString && n.str == "") {
		r.Warnf("description", "no description: say what the plugin does")
	}
	if n := doc.get("author"); n == nil {
		r.Warnf("author", "no author: add {\"name\": …} for attribution")
	}
}

// unknownFieldMessage explains a field Claude Code does not read.
func unknownFieldMessage(k string, entryOnly bool) string {
	if entryOnly {
		return fmt.Sprintf("%q belongs in the marketplace entry, not in plugin.json; ignored here", k)
	}
	if s := closest(k, claudeManifestFields); s != "" {
		return fmt.Sprintf("unknown field %q (did you mean %q?); Claude Code and Reasonix ignore it", k, s)
	}
	return fmt.Sprintf("unknown field %q; Claude Code and Reasonix ignore it", k)
}

// closest is the known name within a small edit distance of k, if any.
func closest(k string, known []string) string {
	best, bestD := "", 3
	if len(k) <= 3 {
		bestD = 2
	}
	for _, c := range known {
		if strings.EqualFold(c, k) {
			return c
		}
		if d := editDistance(strings.ToLower(k), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// CheckClaudeField checks one plugin-manifest field of a marketplace entry
// (whose component fields are a plugin manifest's) at path at. It returns
// false when key is not a plugin-manifest field, leaving the caller to
// judge it.
func CheckClaudeField(key string, raw json.RawMessage, at string, r *Report) bool {
	if !IsClaudeManifestField(key) {
		return false
	}
	n, err := parseJSON(at, raw)
	if err != nil {
		r.Errorf(at, "%v", err)
		return true
	}
	return (&checker{r: r}).field(key, n, at)
}

// checker applies the field rules, recording into r.
type checker struct{ r *Report }

func (c *checker) fail(at, format string, args ...any) { c.r.Errorf(at, format, args...) }

// describe names a value's JSON type for messages.
func describe(n *node) string {
	switch n.kind {
	case kindObject:
		return "an object"
	case kindArray:
		return "an array"
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	}
	return fmt.Sprintf("the string %q", truncate(n.str, 60))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// want reports a type mismatch. Claude Code's schema does not accept null
// for an optional field: absent is the way to leave one out.
func (c *checker) want(at, what string, n *node) {
	c.fail(at, "must be %s, found %s", what, describe(n))
}

func (c *checker) str(at string, n *node) bool {
	if n.kind != kindString {
		c.want(at, "a string", n)
		return false
	}
	return true
}

func (c *checker) nonEmptyStr(at string, n *node) bool {
	if !c.str(at, n) {
		return false
	}
	if n.str == "" {
		c.fail(at, "must not be empty")
		return false
	}
	return true
}

func (c *checker) boolean(at string, n *node) {
	if n.kind != kindBool {
		c.want(at, "true or false", n)
	}
}

func (c *checker) strList(at string, n *node) {
	if n.kind != kindArray {
		c.want(at, "an array of strings", n)
		return
	}
	for i, it := range n.items {
		c.str(fmt.Sprintf("%s[%d]", at, i), it)
	}
}

func (c *checker) strRecord(at string, n *node) {
	if n.kind != kindObject {
		c.want(at, "an object of strings", n)
		return
	}
	for i, k := range n.keys {
		c.str(join(at, k), n.vals[i])
	}
}

// number checks a JSON number; integer and positive narrow it.
func (c *checker) number(at string, n *node, integer, positive, nonNegative bool) {
	if n.kind != kindNumber {
		c.want(at, "a number", n)
		return
	}
	var f float64
	if _, err := fmt.Sscan(n.str, &f); err != nil {
		c.fail(at, "is not a usable number: %s", n.str)
		return
	}
	switch {
	case integer && f != float64(int64(f)):
		c.fail(at, "must be a whole number, found %s", n.str)
	case positive && f <= 0:
		c.fail(at, "must be greater than 0, found %s", n.str)
	case nonNegative && f < 0:
		c.fail(at, "must not be negative, found %s", n.str)
	}
}

// object checks that n is an object and that its required keys are there.
func (c *checker) object(at string, n *node, required ...string) bool {
	if n.kind != kindObject {
		c.want(at, "an object", n)
		return false
	}
	ok := true
	for _, k := range required {
		if n.get(k) == nil {
			c.fail(join(at, k), "required")
			ok = false
		}
	}
	return ok
}

// strict refuses keys of n outside allowed, as Claude's strict objects do.
func (c *checker) strict(at string, n *node, allowed ...string) {
	for _, k := range n.keys {
		found := false
		for _, a := range allowed {
			if a == k {
				found = true
				break
			}
		}
		if !found {
			c.fail(join(at, k), "unknown field %q: this object allows only %s", k, strings.Join(allowed, ", "))
		}
	}
}

// A component path is relative to the plugin root and starts with "./".
func (c *checker) relPath(at string, n *node, suffix ...string) {
	if !c.str(at, n) {
		return
	}
	if !strings.HasPrefix(n.str, "./") {
		c.fail(at, "path %q must start with \"./\" (relative to the plugin root)", truncate(n.str, 80))
		return
	}
	if len(suffix) == 0 {
		return
	}
	for _, s := range suffix {
		if strings.HasSuffix(n.str, s) {
			return
		}
	}
	if len(suffix) == 1 && suffix[0] == ".md" {
		c.fail(at, "path %q must name a .md file: agents are declared file by file (the agents/ folder is read without being declared)", truncate(n.str, 80))
		return
	}
	c.fail(at, "path %q must name a %s file", truncate(n.str, 80), strings.Join(suffix, " or "))
}

// pathOrList is a "./" path or an array of them.
func (c *checker) pathOrList(at string, n *node, suffix ...string) {
	if n.kind == kindArray {
		for i, it := range n.items {
			c.relPath(fmt.Sprintf("%s[%d]", at, i), it, suffix...)
		}
		return
	}
	if n.kind != kindString {
		c.want(at, "a \"./\" path or an array of them", n)
		return
	}
	c.relPath(at, n, suffix...)
}

// IsURL follows the WHATWG URL parser (which Claude Code's schema uses)
// closely enough for the fields validated as URLs: a scheme; for the web
// schemes, a host with no space or forbidden character and a numeric port.
// Slashes after the scheme are optional there ("https:x.com" parses), and
// the path is free ("%zz" and spaces are kept, percent-encoded).
func IsURL(s string) bool {
	s = strings.TrimSpace(s)
	scheme := urlScheme.FindString(s)
	if scheme == "" {
		return false
	}
	rest := s[len(scheme):]
	switch strings.ToLower(strings.TrimSuffix(scheme, ":")) {
	case "http", "https", "ws", "wss", "ftp":
	default:
		return true // file: and the non-special schemes take any rest
	}
	rest = strings.TrimLeft(rest, `/\`)
	host := rest
	if end := strings.IndexAny(rest, `/\?#`); end >= 0 {
		host = rest[:end]
	}
	if at := strings.LastIndex(host, "@"); at >= 0 {
		host = host[at+1:]
	}
	port := ""
	if strings.HasPrefix(host, "[") {
		end := strings.Index(host, "]")
		if end < 0 {
			return false
		}
		host, port = host[:end+1], host[end+1:]
		if port != "" && !strings.HasPrefix(port, ":") {
			return false
		}
		port = strings.TrimPrefix(port, ":")
	} else if i := strings.LastIndex(host, ":"); i >= 0 {
		host, port = host[:i], host[i+1:]
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 0 || n > 65535 || strings.ContainsAny(port, "+-") {
			return false
		}
	}
	return host != "" && !strings.ContainsAny(host, " \t\n\r<>^|\"")
}

var urlScheme = plugind.LazyRegexp(`^[A-Za-z][A-Za-z0-9+.-]*:`)

func (c *checker) url(at string, n *node) {
	if c.str(at, n) && !IsURL(n.str) {
		c.fail(at, "%q is not a valid URL", truncate(n.str, 80))
	}
}

var (
	depNameRE  = plugind.LazyRegexp(`^[A-Za-z0-9][-A-Za-z0-9._]*$`)
	depStrRE   = plugind.LazyRegexp(`^[A-Za-z0-9][-A-Za-z0-9._]*(@[A-Za-z0-9][-A-Za-z0-9._]*)?(@\^[^@]*)?$`)
	optionKey  = plugind.LazyRegexp(`^[A-Za-z_]\w*$`)
	binaryName = plugind.LazyRegexp(`^[a-z0-9](?:[a-z0-9._-]*[a-z0-9_-])?$`)
	sha256Hex  = plugind.LazyRegexp(`^[0-9a-f]{64}$`)
)

// maxBinaries is how many binaries entries Claude Code fetches at install.
const maxBinaries = 16

// field checks one plugin-manifest field; false when key is not one.
func (c *checker) field(key string, n *node, at string) bool {
	switch key {
	case "$schema", "displayName", "version", "description", "repository", "license":
		c.str(at, n)
	case "name":
		if c.nonEmptyStr(at, n) && strings.Contains(n.str, " ") {
			c.fail(at, "plugin name %q must not contain spaces (use kebab-case, e.g. \"my-plugin\")", truncate(n.str, 80))
		}
	case "author":
		c.author(at, n)
	case "homepage":
		c.url(at, n)
	case "keywords":
		c.strList(at, n)
	case "defaultEnabled":
		c.boolean(at, n)
	case "dependencies":
		c.dependencies(at, n)
	case "hooks":
		c.hooksField(at, n)
	case "commands":
		c.commands(at, n)
	case "agents":
		c.pathOrList(at, n, ".md")
	case "skills", "outputStyles", "themes", "workflows":
		c.pathOrList(at, n)
	case "channels":
		c.channels(at, n)
	case "mcpServers":
		c.serversField(at, n, "MCP", c.mcpServer, ".mcpb", ".dxt")
	case "lspServers":
		c.serversField(at, n, "LSP", c.lspServer)
	case "monitors":
		c.monitorsField(at, n)
	case "settings":
		if n.kind != kindObject {
			c.want(at, "an object", n)
		}
	case "userConfig":
		c.userConfig(at, n)
	case "binaries":
		c.binaries(at, n)
	case "experimental":
		c.experimental(at, n)
	default:
		return false
	}
	return true
}

func (c *checker) author(at string, n *node) {
	if !c.object(at, n, "name") {
		return
	}
	c.nonEmptyStr(join(at, "name"), n.get("name"))
	for _, k := range []string{"email", "url"} {
		if v := n.get(k); v != nil {
			c.str(join(at, k), v)
		}
	}
}

// dependencies: plugin names, "name@marketplace" (optionally "@^range"),
// or {"name", "marketplace"?} objects.
func (c *checker) dependencies(at string, n *node) {
	if n.kind == kindObject {
		c.fail(at, "must be an array of plugin names, found an object (an object of package versions is npm's form: it belongs in package.json)")
		return
	}
	if n.kind != kindArray {
		c.want(at, "an array of plugin names", n)
		return
	}
	for i, it := range n.items {
		p := fmt.Sprintf("%s[%d]", at, i)
		switch it.kind {
		case kindString:
			if !depStrRE.MatchString(it.str) {
				c.fail(p, "dependency %q must be a plugin name, optionally qualified as NAME@MARKETPLACE", truncate(it.str, 80))
			} else if _, rng, ok := strings.Cut(it.str, "@^"); ok {
				c.versionRange(p, "^"+rng)
			}
		case kindObject:
			if !c.object(p, it, "name") {
				continue
			}
			for _, k := range []string{"name", "marketplace"} {
				v := it.get(k)
				if v == nil {
					continue
				}
				if c.nonEmptyStr(join(p, k), v) && !depNameRE.MatchString(v.str) {
					c.fail(join(p, k), "%q must use letters, digits, '.', '_' and '-', starting with a letter or digit", truncate(v.str, 80))
				}
			}
			if v := it.get("version"); v != nil && c.nonEmptyStr(join(p, "version"), v) {
				c.versionRange(join(p, "version"), v.str)
			}
		default:
			c.want(p, "a plugin name or a {\"name\", \"marketplace\"} object", it)
		}
	}
}

// versionRange: a dependency's version must be a semantic version range
// Reasonix can check the dependency against (Reasonix's rule: a range it
// cannot read could never be satisfied).
func (c *checker) versionRange(at, rng string) {
	if _, err := semver.NewConstraint(rng); err != nil {
		c.fail(at, "%q is not a semantic version range (e.g. \"^2.0\", \"~2.1.0\"): %v", truncate(rng, 80), err)
	}
}

func (c *checker) commands(at string, n *node) {
	switch n.kind {
	case kindString, kindArray:
		c.pathOrList(at, n)
	case kindObject:
		for i, name := range n.keys {
			c.commandSpec(join(at, name), n.vals[i])
		}
	default:
		c.want(at, "a \"./\" path, an array of them, or an object of commands", n)
	}
}

// commandSpec is one {"source"|"content", description…} command.
func (c *checker) commandSpec(at string, n *node) {
	if !c.object(at, n) {
		return
	}
	src, content := n.get("source"), n.get("content")
	if src != nil {
		c.relPath(join(at, "source"), src)
	}
	for _, k := range []string{"content", "description", "argumentHint", "model"} {
		if v := n.get(k); v != nil {
			c.str(join(at, k), v)
		}
	}
	if v := n.get("allowedTools"); v != nil {
		c.strList(join(at, "allowedTools"), v)
	}
	hasSrc := src != nil && src.kind == kindString && src.str != ""
	hasContent := content != nil && content.kind == kindString && content.str != ""
	if hasSrc == hasContent && (src == nil || src.kind == kindString) && (content == nil || content.kind == kindString) {
		c.fail(at, "a command needs exactly one of \"source\" (a file path) or \"content\" (inline markdown)")
	}
}

func (c *checker) channels(at string, n *node) {
	if n.kind != kindArray {
		c.want(at, "an array of channels", n)
		return
	}
	for i, it := range n.items {
		p := fmt.Sprintf("%s[%d]", at, i)
		if !c.object(p, it, "server") {
			continue
		}
		c.strict(p, it, "server", "displayName", "userConfig")
		c.nonEmptyStr(join(p, "server"), it.get("server"))
		if v := it.get("displayName"); v != nil {
			c.str(join(p, "displayName"), v)
		}
		if v := it.get("userConfig"); v != nil {
			c.userOptions(join(p, "userConfig"), v, false)
		}
	}
}

func (c *checker) userConfig(at string, n *node) {
	c.userOptions(at, n, true)
}

// userOptions is a userConfig object: option keys become environment
// variable names, so they must be identifiers.
func (c *checker) userOptions(at string, n *node, identifiers bool) {
	if n.kind != kindObject {
		c.want(at, "an object of options", n)
		return
	}
	for i, k := range n.keys {
		p := join(at, k)
		if identifiers && !optionKey.MatchString(k) {
			c.fail(p, "option key %q must be an identifier (letters, digits, underscore; no leading digit): it becomes CLAUDE_PLUGIN_OPTION_<KEY>", truncate(k, 60))
		}
		c.userOption(p, n.vals[i])
	}
}

func (c *checker) userOption(at string, n *node) {
	if !c.object(at, n, "type", "title", "description") {
		return
	}
	c.strict(at, n, "type", "title", "description", "required", "default", "multiple", "sensitive", "min", "max")
	if t := n.get("type"); c.str(join(at, "type"), t) {
		switch t.str {
		case "string", "number", "boolean", "directory", "file":
		default:
			c.fail(join(at, "type"), "must be one of string, number, boolean, directory, file; found %q", truncate(t.str, 40))
		}
	}
	c.str(join(at, "title"), n.get("title"))
	c.str(join(at, "description"), n.get("description"))
	for _, k := range []string{"required", "multiple", "sensitive"} {
		if v := n.get(k); v != nil {
			c.boolean(join(at, k), v)
		}
	}
	for _, k := range []string{"min", "max"} {
		if v := n.get(k); v != nil {
			c.number(join(at, k), v, false, false, false)
		}
	}
	if v := n.get("default"); v != nil {
		switch v.kind {
		case kindString, kindNumber, kindBool:
		case kindArray:
			c.strList(join(at, "default"), v)
		default:
			c.want(join(at, "default"), "a string, number, boolean or array of strings", v)
		}
	}
}

// binaries never fail a manifest: Claude Code ignores a bad entry at
// install time, so each is a warning.
func (c *checker) binaries(at string, n *node) {
	if n.kind != kindObject {
		c.r.Warnf(at, "must be an object mapping basenames to {\"sha256\": …}, found %s; ignored", describe(n))
		return
	}
	valid := 0
	for i, k := range n.keys {
		v := n.vals[i]
		sha := v.get("sha256")
		if !binaryName.MatchString(k) || v.kind != kindObject || sha == nil || sha.kind != kindString || !sha256Hex.MatchString(sha.str) {
			c.r.Warnf(join(at, k), "invalid binaries entry, ignored: the basename must be lowercase letters, digits, '.', '_' or '-' (no leading or trailing dot) and the value {\"sha256\": <64 lowercase hex>}")
			continue
		}
		valid++
	}
	if valid > maxBinaries {
		c.r.Warnf(at, "%d binaries declared; only the first %d are fetched", valid, maxBinaries)
	}
}

// experimental holds the components Claude Code marks experimental; a
// value that is not an object is ignored there (a warning here).
func (c *checker) experimental(at string, n *node) {
	if n.kind != kindObject {
		c.r.Warnf(at, "must be an object of component declarations, found %s; ignored", describe(n))
		return
	}
	for i, k := range n.keys {
		v, p := n.vals[i], join(at, k)
		switch k {
		case "themes", "outputStyles":
			c.pathOrList(p, v)
		case "monitors":
			c.monitorsField(p, v)
		case "evals":
			if v.kind == kindArray {
				c.strList(p, v)
			} else {
				c.str(p, v)
			}
		default:
			c.r.Warnf(p, "unknown experimental component %q; ignored", k)
		}
	}
}

// Hook events Claude Code knows. A hooks object keyed by anything else is
// refused as a whole by Claude Code.
var claudeHookEvents = []string{
	"PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification",
	"UserPromptSubmit", "UserPromptExpansion", "SessionStart", "SessionEnd", "Stop",
	"StopFailure", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact",
	"PermissionRequest", "PermissionDenied", "Setup", "TeammateIdle", "TaskCreated",
	"TaskCompleted", "Elicitation", "ElicitationResult", "ConfigChange", "WorktreeCreate",
	"WorktreeRemove", "InstructionsLoaded", "CwdChanged", "FileChanged", "MessageDisplay",
}

func isHookEvent(k string) bool {
	for _, e := range claudeHookEvents {
		if e == k {
			return true
		}
	}
	return false
}

// hooksField is a "./….json" path, an inline hooks object, or an array of
// either.
func (c *checker) hooksField(at string, n *node) {
	switch n.kind {
	case kindString:
		c.relPath(at, n, ".json")
	case kindObject:
		c.hooksConfig(at, n)
	case kindArray:
		for i, it := range n.items {
			p := fmt.Sprintf("%s[%d]", at, i)
			switch it.kind {
			case kindString:
				c.relPath(p, it, ".json")
			case kindObject:
				c.hooksConfig(p, it)
			default:
				c.want(p, "a \"./….json\" path or a hooks object", it)
			}
		}
	default:
		c.want(at, "a \"./….json\" path, a hooks object, or an array of them", n)
	}
}

// hooksConfig is {event: [{matcher?, hooks: [hook…]}…]}.
func (c *checker) hooksConfig(at string, n *node) {
	for i, ev := range n.keys {
		p := join(at, ev)
		if !isHookEvent(ev) {
			hint := ""
			if ev == "hooks" {
				hint = " (the {\"hooks\": {…}} wrapper belongs in hooks.json files, not inline)"
			} else if s := closest(ev, claudeHookEvents); s != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", s)
			}
			c.fail(p, "unknown hook event %q%s", truncate(ev, 60), hint)
			continue
		}
		list := n.vals[i]
		if list.kind != kindArray {
			c.want(p, "an array of matchers", list)
			continue
		}
		for j, m := range list.items {
			mp := fmt.Sprintf("%s[%d]", p, j)
			if !c.object(mp, m, "hooks") {
				continue
			}
			if v := m.get("matcher"); v != nil {
				c.str(join(mp, "matcher"), v)
			}
			hooks := m.get("hooks")
			if hooks.kind != kindArray {
				c.want(join(mp, "hooks"), "an array of hooks", hooks)
				continue
			}
			for k, h := range hooks.items {
				c.hook(fmt.Sprintf("%s.hooks[%d]", mp, k), h)
			}
		}
	}
}

// hook is one hook: its "type" decides which fields it needs.
func (c *checker) hook(at string, n *node) {
	if !c.object(at, n, "type") {
		return
	}
	t := n.get("type")
	if !c.str(join(at, "type"), t) {
		return
	}
	optStr := func(keys ...string) {
		for _, k := range keys {
			if v := n.get(k); v != nil {
				c.str(join(at, k), v)
			}
		}
	}
	optBool := func(keys ...string) {
		for _, k := range keys {
			if v := n.get(k); v != nil {
				c.boolean(join(at, k), v)
			}
		}
	}
	if v := n.get("timeout"); v != nil {
		c.number(join(at, "timeout"), v, false, true, false)
	}
	optStr("if", "statusMessage")
	optBool("once")
	switch t.str {
	case "command":
		if c.object(at, n, "command") {
			c.str(join(at, "command"), n.get("command"))
		}
		if v := n.get("args"); v != nil {
			c.strList(join(at, "args"), v)
		}
		if v := n.get("shell"); v != nil && c.str(join(at, "shell"), v) && v.str != "bash" && v.str != "powershell" {
			c.fail(join(at, "shell"), "must be \"bash\" or \"powershell\", found %q", truncate(v.str, 40))
		}
		optBool("async", "asyncRewake")
		for _, k := range []string{"rewakeMessage", "rewakeSummary"} {
			if v := n.get(k); v != nil {
				c.nonEmptyStr(join(at, k), v)
			}
		}
	case "prompt", "agent":
		if c.object(at, n, "prompt") {
			c.str(join(at, "prompt"), n.get("prompt"))
		}
		optStr("model")
		if t.str == "prompt" {
			optBool("continueOnBlock")
		}
	case "http":
		if c.object(at, n, "url") {
			c.url(join(at, "url"), n.get("url"))
		}
		if v := n.get("headers"); v != nil {
			c.strRecord(join(at, "headers"), v)
		}
		if v := n.get("allowedEnvVars"); v != nil {
			c.strList(join(at, "allowedEnvVars"), v)
		}
	case "mcp_tool":
		if c.object(at, n, "server", "tool") {
			c.str(join(at, "server"), n.get("server"))
			c.str(join(at, "tool"), n.get("tool"))
		}
		if v := n.get("input"); v != nil && v.kind != kindObject {
			c.want(join(at, "input"), "an object", v)
		}
	default:
		c.fail(join(at, "type"), "unknown hook type %q (known: command, prompt, agent, http, mcp_tool)", truncate(t.str, 40))
	}
}

// serversField is mcpServers or lspServers: a "./….json" path (or, for
// MCP, an MCPB bundle path or URL), an object of servers, or an array of
// those.
func (c *checker) serversField(at string, n *node, what string, server func(string, *node), bundles ...string) {
	one := func(p string, v *node, inArray bool) {
		switch v.kind {
		case kindString:
			c.serverPath(p, v, what, bundles)
		case kindObject:
			for i, name := range v.keys {
				server(join(p, name), v.vals[i])
			}
		case kindArray:
			if !inArray {
				return
			}
			c.want(p, "a path or an object of servers", v)
		default:
			c.want(p, fmt.Sprintf("a \"./….json\" path or an object of %s servers", what), v)
		}
	}
	if n.kind == kindArray {
		for i, it := range n.items {
			one(fmt.Sprintf("%s[%d]", at, i), it, true)
		}
		return
	}
	one(at, n, false)
}

func (c *checker) serverPath(at string, n *node, what string, bundles []string) {
	s := n.str
	for _, b := range bundles {
		if strings.HasSuffix(s, b) {
			if strings.HasPrefix(s, "./") || IsURL(s) {
				return
			}
			c.fail(at, "bundle %q must be a \"./\" path or a URL", truncate(s, 80))
			return
		}
	}
	if !strings.HasPrefix(s, "./") || !strings.HasSuffix(s, ".json") {
		extra := ""
		if len(bundles) > 0 {
			extra = " or an MCPB bundle (.mcpb, .dxt)"
		}
		c.fail(at, "%q must be a \"./….json\" file of %s servers%s", truncate(s, 80), what, extra)
	}
}

// mcpServer is one MCP server: a stdio command, or a typed remote server.
func (c *checker) mcpServer(at string, n *node) {
	if !c.object(at, n) {
		return
	}
	typ := "stdio"
	if t := n.get("type"); t != nil {
		if !c.str(join(at, "type"), t) {
			return
		}
		typ = t.str
	}
	optStr := func(keys ...string) {
		for _, k := range keys {
			if v := n.get(k); v != nil {
				c.str(join(at, k), v)
			}
		}
	}
	common := func() {
		if v := n.get("timeout"); v != nil {
			c.number(join(at, "timeout"), v, true, true, false)
		}
		if v := n.get("alwaysLoad"); v != nil {
			c.boolean(join(at, "alwaysLoad"), v)
		}
	}
	needURL := func() bool {
		if n.get("url") == nil {
			c.fail(join(at, "url"), "required for a %q server", typ)
			return false
		}
		return c.str(join(at, "url"), n.get("url"))
	}
	remote := func(oauth, tools bool) {
		needURL()
		if v := n.get("headers"); v != nil {
			c.strRecord(join(at, "headers"), v)
		}
		optStr("headersHelper")
		if v := n.get("oauth"); oauth && v != nil {
			c.oauth(join(at, "oauth"), v)
		}
		if tools {
			if v := n.get("tools"); v != nil {
				c.mcpTools(join(at, "tools"), v)
			}
			if v := n.get("toolPermissions"); v != nil {
				c.toolPermissions(join(at, "toolPermissions"), v)
			}
		}
		common()
	}
	switch typ {
	case "stdio":
		cmd := n.get("command")
		if cmd == nil {
			if n.get("url") != nil {
				c.fail(at, "a server with a \"url\" needs a \"type\" (\"http\", \"sse\" or \"ws\"); without one it is a stdio server, which needs \"command\"")
			} else {
				c.fail(join(at, "command"), "required for a stdio server")
			}
		} else {
			c.nonEmptyStr(join(at, "command"), cmd)
		}
		if v := n.get("args"); v != nil {
			c.strList(join(at, "args"), v)
		}
		if v := n.get("env"); v != nil {
			c.strRecord(join(at, "env"), v)
		}
		common()
	case "sse", "http", "streamable-http":
		remote(true, true)
	case "ws":
		remote(false, false)
	case "sse-ide", "ws-ide":
		needURL()
		if c.object(at, n, "ideName") {
			c.str(join(at, "ideName"), n.get("ideName"))
		}
		if v := n.get("ideRunningInWindows"); v != nil {
			c.boolean(join(at, "ideRunningInWindows"), v)
		}
		if typ == "ws-ide" {
			optStr("authToken")
		}
		common()
	case "sdk":
		if c.object(at, n, "name") {
			c.str(join(at, "name"), n.get("name"))
		}
		common()
	case "claudeai-proxy":
		needURL()
		if c.object(at, n, "id") {
			c.str(join(at, "id"), n.get("id"))
		}
		optStr("displayName", "iconUrl")
		if v := n.get("stateless"); v != nil {
			c.boolean(join(at, "stateless"), v)
		}
		if v := n.get("toolPermissions"); v != nil {
			c.toolPermissions(join(at, "toolPermissions"), v)
		}
		if v := n.get("cachedInitResponse"); v != nil && v.kind != kindObject && v.kind != kindNull {
			c.want(join(at, "cachedInitResponse"), "an object", v)
		}
		common()
	default:
		c.fail(join(at, "type"), "unknown MCP server type %q (known: stdio, sse, http, streamable-http, ws, sse-ide, ws-ide, sdk, claudeai-proxy)", truncate(typ, 40))
	}
}

func (c *checker) oauth(at string, n *node) {
	if !c.object(at, n) {
		return
	}
	if v := n.get("clientId"); v != nil {
		c.str(join(at, "clientId"), v)
	}
	if v := n.get("callbackPort"); v != nil {
		c.number(join(at, "callbackPort"), v, true, true, false)
	}
	if v := n.get("authServerMetadataUrl"); v != nil && c.str(join(at, "authServerMetadataUrl"), v) {
		if !IsURL(v.str) || !strings.HasPrefix(v.str, "https://") {
			c.fail(join(at, "authServerMetadataUrl"), "must be an https:// URL")
		}
	}
	if v := n.get("scopes"); v != nil {
		c.nonEmptyStr(join(at, "scopes"), v)
	}
	if v := n.get("xaa"); v != nil {
		c.boolean(join(at, "xaa"), v)
	}
}

func (c *checker) mcpTools(at string, n *node) {
	if n.kind != kindArray {
		c.want(at, "an array of tools", n)
		return
	}
	for i, it := range n.items {
		p := fmt.Sprintf("%s[%d]", at, i)
		if !c.object(p, it, "name") {
			continue
		}
		c.str(join(p, "name"), it.get("name"))
		if v := it.get("permission_policy"); v != nil && c.str(join(p, "permission_policy"), v) {
			switch v.str {
			case "always_allow", "always_ask", "always_deny":
			default:
				c.fail(join(p, "permission_policy"), "must be always_allow, always_ask or always_deny")
			}
		}
	}
}

func (c *checker) toolPermissions(at string, n *node) {
	if n.kind != kindObject {
		c.want(at, "an object", n)
		return
	}
	for i, k := range n.keys {
		v := n.vals[i]
		if c.str(join(at, k), v) && v.str != "allow" && v.str != "ask" && v.str != "blocked" {
			c.fail(join(at, k), "must be allow, ask or blocked")
		}
	}
}

// lspServer is one language server: a strict object.
func (c *checker) lspServer(at string, n *node) {
	if !c.object(at, n, "command", "extensionToLanguage") {
		return
	}
	c.strict(at, n, "command", "args", "extensionToLanguage", "transport", "env", "initializationOptions",
		"settings", "workspaceFolder", "startupTimeout", "shutdownTimeout", "restartOnCrash", "maxRestarts", "diagnostics")
	if cmd := n.get("command"); c.nonEmptyStr(join(at, "command"), cmd) && strings.Contains(cmd.str, " ") && !strings.HasPrefix(cmd.str, "/") {
		c.fail(join(at, "command"), "must not contain spaces: put arguments in \"args\"")
	}
	if v := n.get("args"); v != nil {
		if v.kind != kindArray {
			c.want(join(at, "args"), "an array of strings", v)
		} else {
			for i, it := range v.items {
				c.nonEmptyStr(fmt.Sprintf("%s[%d]", join(at, "args"), i), it)
			}
		}
	}
	if m := n.get("extensionToLanguage"); m.kind != kindObject {
		c.want(join(at, "extensionToLanguage"), "an object mapping file extensions to language ids", m)
	} else {
		if len(m.keys) == 0 {
			c.fail(join(at, "extensionToLanguage"), "must map at least one file extension")
		}
		for i, ext := range m.keys {
			p := join(join(at, "extensionToLanguage"), ext)
			if len(ext) < 2 || !strings.HasPrefix(ext, ".") {
				c.fail(p, "file extension %q must start with a dot (e.g. \".ts\")", truncate(ext, 20))
			}
			c.nonEmptyStr(p, m.vals[i])
		}
	}
	if v := n.get("transport"); v != nil && c.str(join(at, "transport"), v) && v.str != "stdio" && v.str != "socket" {
		c.fail(join(at, "transport"), "must be \"stdio\" or \"socket\"")
	}
	if v := n.get("env"); v != nil {
		c.strRecord(join(at, "env"), v)
	}
	if v := n.get("workspaceFolder"); v != nil {
		c.str(join(at, "workspaceFolder"), v)
	}
	for _, k := range []string{"startupTimeout", "shutdownTimeout"} {
		if v := n.get(k); v != nil {
			c.number(join(at, k), v, true, true, false)
		}
	}
	if v := n.get("maxRestarts"); v != nil {
		c.number(join(at, "maxRestarts"), v, true, false, true)
	}
	for _, k := range []string{"restartOnCrash", "diagnostics"} {
		if v := n.get(k); v != nil {
			c.boolean(join(at, k), v)
		}
	}
}

// monitorsField is a "./….json" path or an array of monitors.
func (c *checker) monitorsField(at string, n *node) {
	switch n.kind {
	case kindString:
		c.relPath(at, n, ".json")
		return
	case kindArray:
	default:
		c.want(at, "a \"./….json\" path or an array of monitors", n)
		return
	}
	seen := map[string]int{}
	for i, it := range n.items {
		p := fmt.Sprintf("%s[%d]", at, i)
		if !c.object(p, it, "name", "command", "description") {
			continue
		}
		c.strict(p, it, "name", "command", "description", "when")
		for _, k := range []string{"name", "command", "description"} {
			c.nonEmptyStr(join(p, k), it.get(k))
		}
		if w := it.get("when"); w != nil && c.str(join(p, "when"), w) {
			const onSkill = "on-skill-invoke:"
			if w.str != "always" && (!strings.HasPrefix(w.str, onSkill) || len(w.str) <= len(onSkill)) {
				c.fail(join(p, "when"), "must be \"always\" or \"on-skill-invoke:<skill>\"")
			}
		}
		if name := it.get("name"); name.kind == kindString {
			if j, dup := seen[name.str]; dup {
				c.fail(join(p, "name"), "monitor name %q is also used by %s[%d]; names must be unique within a plugin", truncate(name.str, 60), at, j)
			} else {
				seen[name.str] = i
			}
		}
	}
}
