package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"reasonix.io/plugind"
)

// fieldRole says how a non-native manifest field is treated.
type fieldRole int

const (
	roleMeta        fieldRole = iota + 1 // described, nothing to map
	roleCapability                       // mapped below
	roleUnsupported                      // a capability Reasonix lacks: skipped, partial
)

// claudeFields follows the SchemaStore Claude plugin manifest schema.
var claudeFields = map[string]fieldRole{
	"$schema": roleMeta, "name": roleMeta, "version": roleMeta, "description": roleMeta,
	"author": roleMeta, "homepage": roleMeta, "repository": roleMeta, "license": roleMeta,
	"keywords": roleMeta,
	"skills":   roleCapability, "commands": roleCapability, "agents": roleCapability,
	"hooks": roleCapability, "mcpServers": roleCapability,
	"dependencies": roleMeta, "outputStyles": roleUnsupported, "themes": roleUnsupported,
	"channels": roleUnsupported, "lspServers": roleCapability, "monitors": roleUnsupported,
	"settings": roleUnsupported, "userConfig": roleMeta,
}

// codexFields follows the SchemaStore Codex plugin manifest schema; hooks
// are read as for Claude because packages that ship both manifests use them.
var codexFields = map[string]fieldRole{
	"id": roleMeta, "name": roleMeta, "version": roleMeta, "description": roleMeta,
	"interface": roleMeta, "author": roleMeta, "homepage": roleMeta, "repository": roleMeta,
	"license": roleMeta, "keywords": roleMeta,
	"skills": roleCapability, "mcpServers": roleCapability, "hooks": roleCapability,
	"apps": roleUnsupported,
}

// ParseClaude reads a .claude-plugin/plugin.json document for the package
// at root. Capabilities map by Claude's conventions; anything that does not
// map is named in Warnings and lowers Compatibility.
func ParseClaude(data []byte, root string, opts LoadOptions) (*Package, error) {
	return parseCompat(KindClaude, ClaudeManifest, data, root, opts)
}

// ParseCodex reads a .codex-plugin/plugin.json document for the package at
// root, like ParseClaude, adding Codex's CLAUDE.md and session-start-codex
// conventions.
func ParseCodex(data []byte, root string, opts LoadOptions) (*Package, error) {
	return parseCompat(KindCodex, CodexManifest, data, root, opts)
}

func parseCompat(kind Kind, manifestRel string, data []byte, root string, opts LoadOptions) (*Package, error) {
	t, err := opts.treeFor(root)
	if err != nil {
		return nil, err
	}
	doc, err := parseJSON(manifestRel, data)
	if err != nil {
		return nil, plugind.WithCode(plugind.CodeInvalidSource, err)
	}
	if doc.kind != kindObject {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s must hold a JSON object, not %s", manifestRel, doc.kind)
	}
	if kind == KindClaude {
		if err := refuseInvalidClaude(doc, root); err != nil {
			return nil, err
		}
	}
	manifestName := ""
	if n := doc.get("name"); n != nil && n.kind != kindNull {
		if n.kind != kindString {
			if opts.Name == "" {
				return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s: name must be a string, not %s", manifestRel, n.kind)
			}
		} else {
			manifestName = n.str
		}
	}
	name, err := chooseName(manifestRel, manifestName, opts)
	if err != nil {
		return nil, err
	}
	pkg := &Package{Kind: kind, ManifestPath: manifestRel, Name: name, ManifestName: manifestName}
	b := newBuilder(t, pkg)
	pkg.Version = b.metaString(manifestRel, doc, "version")
	pkg.Description = b.metaString(manifestRel, doc, "description")
	if kind == KindClaude {
		if pkg.Dependencies, err = parseDependencies(manifestRel, doc.get("dependencies")); err != nil {
			return nil, err
		}
		pkg.UserConfig = readOptions(doc.get("userConfig"))
	}

	fields := claudeFields
	if kind == KindCodex {
		fields = codexFields
	}
	for i, k := range doc.keys {
		switch fields[k] {
		case roleMeta, roleCapability:
		case roleUnsupported:
			if !doc.vals[i].isEmpty() {
				b.skip("%s: %s is not supported by Reasonix; skipped", manifestRel, k)
			}
		default:
			b.warn("%s: unknown field %q ignored", manifestRel, k)
		}
	}

	b.compatSkills(manifestRel, doc.get("skills"))
	if kind == KindClaude {
		b.compatCommands(manifestRel, doc.get("commands"))
		b.compatAgents(manifestRel, doc.get("agents"))
	} else {
		b.compatCommands(manifestRel, nil)
		b.compatAgents(manifestRel, nil)
	}
	b.compatHooks(manifestRel, doc.get("hooks"))
	if kind == KindCodex {
		b.codexConventions()
	}
	b.compatMCP(manifestRel, doc.get("mcpServers"))
	if kind == KindClaude {
		b.compatLSP(manifestRel, doc.get("lspServers"))
	}
	b.conventionalConfigFiles()
	b.noteUndeclared()
	b.finish()

	switch {
	case b.mapped() == 0:
		pkg.Compatibility = CompatNone
		pkg.Blocked = true
		pkg.BlockReason = fmt.Sprintf("nothing in this %s plugin maps to Reasonix: no skills, commands, agents, hooks or MCP servers were found", kind)
		if held := declaredButUnmapped(pkg); held != "" {
			pkg.BlockReason += "; " + held
		} else if b.skipped > 0 {
			pkg.BlockReason += fmt.Sprintf(" (%d declared item(s) skipped; see warnings)", b.skipped)
		}
	case b.skipped > 0:
		pkg.Compatibility = CompatPartial
	default:
		pkg.Compatibility = CompatFull
	}
	return pkg, nil
}

// chooseName applies the --name override and validates the result.
func chooseName(manifestRel, manifestName string, opts LoadOptions) (string, error) {
	if opts.Name != "" {
		if err := plugind.ValidateName(opts.Name); err != nil {
			return "", plugind.WithCode(plugind.CodeInvalidSource, fmt.Errorf("--name: %w", err))
		}
		return opts.Name, nil
	}
	if err := plugind.ValidateName(manifestName); err != nil {
		return "", coded(plugind.CodeInvalidSource, "%s: name: %w", manifestRel, err)
	}
	return manifestName, nil
}

func (b *builder) metaString(src string, doc *node, key string) string {
	n := doc.get(key)
	if n == nil || n.kind == kindNull {
		return ""
	}
	if n.kind != kindString {
		b.warn("%s: %s should be a string, not %s; ignored", src, key, n.kind)
		return ""
	}
	return n.str
}

// declaredPath resolves a path a manifest declares. Unsafe, missing and
// unreadable paths are skipped with a warning naming them.
func (b *builder) declaredPath(src, field, p string) (string, string, bool) {
	rel, real, err := b.t.resolve(p)
	switch {
	case err == nil:
		return rel, real, true
	case errors.Is(err, ErrOutside):
		b.skip("%s: %s path %q leaves the package root; skipped", src, field, p)
	case errors.Is(err, errMissing):
		b.skip("%s: %s path %q does not exist; skipped", src, field, p)
	default:
		b.skip("%s: %s path %q cannot be read: %v; skipped", src, field, p, err)
	}
	return "", "", false
}

// paths reads a string-or-list path field; a wrong type is skipped.
func (b *builder) paths(src, field string, n *node) []string {
	if n.isEmpty() {
		return nil
	}
	list, ok := n.stringList()
	if !ok {
		b.skip("%s: %s must be a path or a list of paths; skipped", src, field)
		return nil
	}
	return list
}

func (b *builder) compatSkills(src string, declared *node) {
	seen := map[string]bool{}
	for _, p := range b.paths(src, "skills", declared) {
		rel, real, ok := b.declaredPath(src, "skills", p)
		if !ok || seen[rel] {
			continue
		}
		seen[rel] = true
		b.skillRoot(rel, real, src)
	}
	for _, conv := range []string{"skills", ".claude/skills"} {
		if seen[conv] || !b.t.isDir(conv) {
			continue
		}
		_, real, _ := b.t.resolve(conv)
		b.skillRoot(conv, real, "")
	}
}

func (b *builder) compatCommands(src string, declared *node) {
	seen := map[string]bool{}
	if declared != nil && declared.kind == kindObject {
		b.commandMap(src, declared, seen)
	} else {
		for _, p := range b.paths(src, "commands", declared) {
			rel, real, ok := b.declaredPath(src, "commands", p)
			if !ok || seen[rel] {
				continue
			}
			seen[rel] = true
			// Claude lets a commands entry name a skill directory.
			if ok, _ := b.t.regularFile(path.Join(rel, "SKILL.md")); ok {
				b.skillRoot(rel, real, src)
				continue
			}
			for _, f := range b.mdFiles(rel, real, src, "commands") {
				b.addCommand(f, "", "")
			}
		}
	}
	for _, conv := range []string{"commands", ".claude/commands"} {
		if seen[conv] || !b.t.isDir(conv) {
			continue
		}
		_, real, _ := b.t.resolve(conv)
		for _, f := range b.mdFiles(conv, real, "", "commands") {
			b.addCommand(f, "", "")
		}
	}
}

// commandMap maps Claude's {"name": {source, description, argumentHint}}
// form.
func (b *builder) commandMap(src string, m *node, seen map[string]bool) {
	for i, name := range m.keys {
		spec := m.vals[i]
		where := fmt.Sprintf("%s: commands.%s", src, name)
		if spec.kind != kindObject {
			b.skip("%s: must be an object; skipped", where)
			continue
		}
		source := spec.get("source")
		if source == nil || source.kind != kindString {
			if spec.get("content") != nil {
				b.skip("%s: inline command content is not supported; skipped", where)
			} else {
				b.skip("%s: no source file; skipped", where)
			}
			continue
		}
		rel, real, ok := b.declaredPath(src, "commands."+name, source.str)
		if !ok {
			continue
		}
		seen[rel] = true
		files := b.mdFiles(rel, real, src, "commands")
		if len(files) != 1 || files[0].rel != rel {
			b.skip("%s: source %q must be one .md file; skipped", where, source.str)
			continue
		}
		desc := b.metaString(src, spec, "description")
		hint := b.metaString(src, spec, "argumentHint")
		b.addCommand(mdFile{name: name, rel: rel}, desc, hint)
	}
}

func (b *builder) compatAgents(src string, declared *node) {
	seen := map[string]bool{}
	for _, p := range b.paths(src, "agents", declared) {
		rel, real, ok := b.declaredPath(src, "agents", p)
		if !ok || seen[rel] {
			continue
		}
		seen[rel] = true
		for _, f := range b.mdFiles(rel, real, src, "agents") {
			b.addAgent(f)
		}
	}
	for _, conv := range []string{"agents", ".claude/agents"} {
		if seen[conv] || !b.t.isDir(conv) {
			continue
		}
		_, real, _ := b.t.resolve(conv)
		for _, f := range b.mdFiles(conv, real, "", "agents") {
			b.addAgent(f)
		}
	}
}

func (b *builder) compatHooks(src string, declared *node) {
	loaded := map[string]bool{}
	// An object, a path, or (a plugin's hooks merged with its marketplace
	// entry's) a list of either.
	var visit func(n *node)
	visit = func(n *node) {
		switch {
		case n == nil || n.kind == kindNull:
		case n.kind == kindObject:
			b.claudeHooks(src, n)
		case n.kind == kindArray:
			for _, it := range n.items {
				visit(it)
			}
		case n.kind == kindString:
			rel, _, ok := b.declaredPath(src, "hooks", n.str)
			if !ok || loaded[rel] {
				return
			}
			loaded[rel] = true
			b.hookFile(rel)
		default:
			b.skip("%s: hooks must be an object, a path or a list; skipped", src)
		}
	}
	visit(declared)
	if !loaded["hooks/hooks.json"] {
		if ok, _ := b.t.regularFile("hooks/hooks.json"); ok {
			b.hookFile("hooks/hooks.json")
		}
	}
	if ok, _ := b.t.regularFile(".claude/settings.json"); ok {
		if doc, ok := b.sidecarJSON(".claude/settings.json"); ok {
			b.claudeHooks(".claude/settings.json", doc.get("hooks"))
		}
	}
}

// codexConventions maps Codex-only sidecars: a root CLAUDE.md becomes
// SessionStart context read by the host (no shell), and
// hooks/session-start-codex a SessionStart exec hook.
func (b *builder) codexConventions() {
	if ok, _ := b.t.regularFile("CLAUDE.md"); ok {
		b.pkg.Hooks = append(b.pkg.Hooks, Hook{
			Event: "SessionStart", ContextFile: "CLAUDE.md", Form: HookContext, Source: "CLAUDE.md",
		})
	}
	if ok, _ := b.t.regularFile("hooks/session-start-codex"); ok {
		b.pkg.Hooks = append(b.pkg.Hooks, Hook{
			Event: "SessionStart", Command: "${REASONIX_PLUGIN_ROOT}/hooks/session-start-codex",
			Args: []string{}, Form: HookExec, Source: "hooks/session-start-codex",
		})
	}
}

func (b *builder) compatMCP(src string, declared *node) {
	specs := map[string]mcpSpec{}
	loaded := map[string]bool{}
	var visit func(n *node)
	visit = func(n *node) {
		switch n.kind {
		case kindObject:
			b.mcpMap(src, n, specs)
		case kindString:
			p := n.str
			if strings.Contains(p, "://") || !strings.HasSuffix(strings.ToLower(p), ".json") {
				b.skip("%s: mcpServers %q is an MCPB bundle or URL, which Reasonix does not import; skipped", src, p)
				return
			}
			rel, _, ok := b.declaredPath(src, "mcpServers", p)
			if !ok || loaded[rel] {
				return
			}
			loaded[rel] = true
			b.mcpFile(rel, specs)
		case kindArray:
			for _, it := range n.items {
				visit(it)
			}
		case kindNull:
		default:
			b.skip("%s: mcpServers must be an object, a path or a list; skipped", src)
		}
	}
	if declared != nil {
		visit(declared)
	}
	if !loaded[".mcp.json"] {
		if ok, _ := b.t.regularFile(".mcp.json"); ok {
			b.mcpFile(".mcp.json", specs)
		}
	}
}

// mcpFile maps a .mcp.json-style file: {"mcpServers": {…}} or a bare map.
func (b *builder) mcpFile(rel string, specs map[string]mcpSpec) {
	doc, ok := b.sidecarJSON(rel)
	if !ok {
		return
	}
	if doc.kind != kindObject {
		b.skip("%s: must hold a JSON object; skipped", rel)
		return
	}
	if inner := doc.get("mcpServers"); inner != nil {
		b.mcpMap(rel, inner, specs)
		return
	}
	b.mcpMap(rel, doc, specs)
}

// mcpMap maps {name: server} entries; imported servers never auto-start.
func (b *builder) mcpMap(src string, m *node, specs map[string]mcpSpec) {
	if m.kind != kindObject {
		b.skip("%s: mcpServers must be an object; skipped", src)
		return
	}
	for i, name := range m.keys {
		v := m.vals[i]
		if v.kind != kindObject {
			b.skip("%s: MCP server %q must be an object; skipped", src, name)
			continue
		}
		var s mcpSpec
		if err := json.Unmarshal(v.marshal(), &s); err != nil {
			b.skip("%s: MCP server %q is malformed (%v); skipped", src, name, err)
			continue
		}
		s.AutoStart = nil // imported servers stay off until enabled
		if err := b.addMCP(name, s, src, false, specs); err != nil {
			b.skip("%s: %v; skipped", src, err)
			continue
		}
		if h := v.get("headersHelper"); !h.isEmpty() {
			b.skip("%s: MCP server %q: headersHelper is not run by Reasonix; set the headers yourself", src, name)
		}
	}
}
