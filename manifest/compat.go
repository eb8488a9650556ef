package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsondoc"
)

// compatInput is what a Claude- or Codex-format package is read from: the
// folder's own manifest, and its marketplace entry's manifest fields. The
// two are kept apart because Claude Code treats them apart: a component
// list plugin.json declares replaces the conventional folder (commands/,
// agents/), one the entry declares adds to it.
type compatInput struct {
	kind     Kind
	own      *node  // the folder's manifest; nil when it has none
	ownLabel string // its path, for messages
	// entry is the marketplace entry's manifest fields as a plugin.json
	// document (name included); nil when there is no entry. Without own it
	// is the manifest, metadata included; beside own only its components
	// count.
	entry *node
	// atRoot: the entry's source is the marketplace root itself, where
	// Claude Code reads only the skills an entry lists.
	atRoot bool
}

// table is the field table of the input's own manifest.
func (in *compatInput) table() *jsondoc.Table {
	if in.kind == KindCodex {
		return Codex()
	}
	return ClaudePlugin()
}

// meta is the document the package's metadata comes from, and its label.
func (in *compatInput) meta() (*node, string) {
	if in.own != nil {
		return in.own, in.ownLabel
	}
	return in.entry, entryLabel
}

// declaration is one document's value of a component field.
type declaration struct {
	src string // the document's label
	n   *node
}

// declared lists the declarations of key, the folder's manifest first;
// byOwn says whether the folder's manifest declares it (which replaces the
// conventional folder of a Replaces field).
func (in *compatInput) declared(key string) (list []declaration, byOwn bool) {
	if in.own != nil {
		if _, ok := in.table().Row(key); ok {
			if v := in.own.Get(key); !v.IsEmpty() {
				list = append(list, declaration{in.ownLabel, v})
				byOwn = true
			}
		}
	}
	if in.entry != nil {
		if v := in.entry.Get(key); !v.IsEmpty() {
			list = append(list, declaration{entryLabel, v})
		}
	}
	return list, byOwn
}

func (t *tree) readCompat(opts LoadOptions, in compatInput) (*Package, error) {
	meta, metaLabel := in.meta() // one of the two is there: see readEntry
	if meta.Kind != jsondoc.Object {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s must hold a JSON object, not %s", metaLabel, meta.Kind)
	}
	var kept []string
	var err error
	if in.own != nil && in.kind == KindClaude {
		if kept, err = refuseInvalidClaude(in.own, &folder{t: t}, in.ownLabel); err != nil {
			return nil, err
		}
	}
	if in.entry != nil {
		more, err := refuseInvalidClaude(in.entry, &folder{t: t, entry: true}, entryLabel)
		if err != nil {
			return nil, err
		}
		kept = append(kept, more...)
	}
	manifestName := meta.GetStr("name")
	if n := meta.Get("name"); n != nil && n.Kind != jsondoc.Null && n.Kind != jsondoc.String && opts.Name == "" {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s: name must be a string, not %s", metaLabel, n.Kind)
	}
	name, err := chooseName(metaLabel, manifestName, opts)
	if err != nil {
		return nil, err
	}
	pkg := &Package{Kind: in.kind, ManifestPath: in.ownLabel, Name: name, ManifestName: manifestName}
	b := newBuilder(t, pkg)
	pkg.Warnings = append(pkg.Warnings, kept...)
	pkg.Version = b.metaString(metaLabel, meta, "version")
	pkg.Description = b.metaString(metaLabel, meta, "description")
	if in.kind == KindClaude {
		pkg.DisplayName = b.metaString(metaLabel, meta, "displayName")
		d := meta.Get("defaultEnabled")
		pkg.DisabledByDefault = d != nil && d.Kind == jsondoc.Bool && !d.Bool
		deps, _ := in.declared("dependencies")
		if pkg.Dependencies, err = parseDependencies(deps); err != nil {
			return nil, err
		}
		options, _ := in.declared("userConfig")
		pkg.UserConfig = readOptions(options)
	}
	if in.own != nil {
		b.fieldRoles(in.ownLabel, in.own, in.table())
	}
	if in.entry != nil {
		b.fieldRoles(entryLabel, in.entry, ClaudePlugin())
	}

	b.compatSkills(&in)
	b.compatCommands(&in) // Codex's table has no commands or agents row: only its folders count
	b.compatAgents(&in)
	b.compatHooks(&in)
	if in.kind == KindCodex {
		b.codexConventions()
	}
	b.compatMCP(&in)
	if in.kind == KindClaude {
		b.compatLSP(&in)
	}
	b.conventionalConfigFiles()
	b.noteUndeclared()
	b.finish()

	switch {
	case b.blockReason != "":
		pkg.Blocked, pkg.BlockReason = true, b.blockReason
		pkg.Compatibility = CompatNone
	case b.mapped() == 0:
		pkg.Blocked, pkg.Compatibility = true, CompatNone
		pkg.BlockReason = fmt.Sprintf("nothing in this %s plugin maps to Reasonix: no skills, commands, agents, hooks or MCP servers were found", in.kind)
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

// fieldRoles says, field by field, what install does with a manifest's
// fields that map to nothing: a field its table does not list is ignored
// (a warning), one Reasonix does not support is skipped (the package is
// partial).
func (b *builder) fieldRoles(src string, doc *node, t *jsondoc.Table) {
	for i := range doc.Fields {
		f := &doc.Fields[i]
		switch r, ok := t.Row(f.Key); {
		case !ok || r.Role == jsondoc.EntryOnly:
			b.warn("%s: unknown field %q ignored", src, f.Key)
		case r.Role == jsondoc.Unsupported && !f.Val.IsEmpty():
			b.skip("%s: %s is not supported by Reasonix; skipped", src, f.Key)
		}
	}
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
	n := doc.Get(key)
	if n == nil || n.Kind == jsondoc.Null {
		return ""
	}
	if n.Kind != jsondoc.String {
		b.warn("%s: %s should be a string, not %s; ignored", src, key, n.Kind)
		return ""
	}
	return n.Str
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

// fallbackNote says that a .claude/ folder contributed something: Claude
// Code does not read it inside a plugin.
func (b *builder) fallbackNote(dir string, found int) {
	if found > 0 && strings.HasPrefix(dir, ".claude/") {
		b.warn("%s: read by Reasonix's .claude/ fallback (the seeds' convention); Claude Code does not read %s inside a plugin", dir, dir)
	}
}

// component maps one component field: each path its declarations name
// (read gets the declaring document's label and the path's clean and real
// location; a path seen already, or one that is not there, is skipped),
// then the conventional folders (read with no label) — unless the
// folder's manifest declares the field and it Replaces the folder, which
// is then said not to be read, as in Claude Code.
func (b *builder) component(in *compatInput, field string, read func(src, rel, real string)) {
	seen := map[string]bool{}
	decls, byOwn := in.declared(field)
	for _, d := range decls {
		if field == "commands" && d.n.Kind == jsondoc.Object {
			b.commandMap(d.src, d.n, seen)
			continue
		}
		paths, ok := d.n.StringList() // declared: not empty
		if !ok {
			b.skip("%s: %s must be a path or a list of paths; skipped", d.src, field)
		}
		for _, p := range paths {
			rel, real, ok := b.declaredPath(d.src, field, p)
			if !ok || seen[rel] {
				continue
			}
			seen[rel] = true
			read(d.src, rel, real)
		}
	}
	if r, _ := ClaudePlugin().Row(field); byOwn && r.Traits&jsondoc.Replaces != 0 {
		for _, dir := range []string{field, ".claude/" + field} {
			if b.t.isDir(dir) {
				b.warn("%s: %s/ is not read: the manifest declares %q, which replaces the folder (as in Claude Code)", in.ownLabel, dir, field)
			}
		}
		return
	}
	for _, conv := range b.conventional(in, field) {
		if seen[conv] || !b.t.isDir(conv) {
			continue
		}
		_, real, _ := b.t.resolve(conv)
		before := b.mapped()
		read("", conv, real)
		b.fallbackNote(conv, b.mapped()-before)
	}
}

// conventional lists where a field's component lives when nothing
// declares it: Claude Code's folder, then the seeds' .claude/ fallback.
// An entry whose source is the marketplace root and lists skills gets
// those only (Claude Code), unless it lists the root itself.
func (b *builder) conventional(in *compatInput, field string) []string {
	dirs := []string{field, ".claude/" + field}
	if field == "skills" && in.atRoot && in.entry != nil && in.entry.Get("skills") != nil {
		list, _ := in.entry.Get("skills").StringList()
		if slices.ContainsFunc(list, func(p string) bool { rel, err := plugind.LocalPath(p); return err == nil && rel == "." }) {
			return dirs[:1]
		}
		return nil
	}
	return dirs
}

func (b *builder) compatSkills(in *compatInput) {
	// Claude Code lists the skills/ folder it reads before the paths
	// declared, so a declared skill in it keeps its folder's name.
	readsSkills := slices.Contains(b.conventional(in, "skills"), "skills") && b.t.isDir("skills")
	b.component(in, "skills", func(src, rel, real string) {
		if rel == "." && in.atRoot && src == entryLabel {
			return // the root: its skills/ folder (conventional)
		}
		b.skillRoot(rel, real, src, !readsSkills || path.Dir(rel) != "skills")
	})
	// A Claude plugin whose manifest declares no skills and which has no
	// skills/ folder is a skill itself when its root holds SKILL.md, as
	// Claude Code's loader reads it (a repository that is one skill).
	if meta, _ := in.meta(); in.kind == KindClaude && meta.Get("skills").IsEmpty() && !b.t.isDir("skills") {
		if ok, _ := b.t.regularFile("SKILL.md"); ok {
			if _, real, err := b.t.resolve("."); err == nil {
				b.skillRoot(".", real, "", true)
			}
		}
	}
}

func (b *builder) compatCommands(in *compatInput) {
	b.component(in, "commands", func(src, rel, real string) {
		// Claude lets a commands entry name a skill directory.
		if src != "" {
			if ok, _ := b.t.regularFile(path.Join(rel, "SKILL.md")); ok {
				b.skillRoot(rel, real, src, false)
				return
			}
		}
		for _, f := range b.mdFiles(rel, real, src, "commands") {
			b.addCommand(f, "", "")
		}
	})
}

// commandMap maps Claude's {"name": {source, description, argumentHint}}
// form (only plugin.json and entries declare commands: the schema walk has
// checked each is such an object).
func (b *builder) commandMap(src string, m *node, seen map[string]bool) {
	for i := range m.Fields {
		name, spec := m.Fields[i].Key, &m.Fields[i].Val
		where := fmt.Sprintf("%s: commands.%s", src, name)
		source := spec.Get("source")
		if source == nil || source.Kind != jsondoc.String {
			if spec.Get("content") != nil {
				b.skip("%s: inline command content is not supported; skipped", where)
			} else {
				b.skip("%s: no source file; skipped", where)
			}
			continue
		}
		rel, real, ok := b.declaredPath(src, "commands."+name, source.Str)
		if !ok {
			continue
		}
		seen[rel] = true
		files := b.mdFiles(rel, real, src, "commands")
		if len(files) != 1 || files[0].rel != rel {
			b.skip("%s: source %q must be one .md file; skipped", where, source.Str)
			continue
		}
		b.addCommand(mdFile{base: name, rel: rel}, spec.GetStr("description"), spec.GetStr("argumentHint"))
	}
}

// compatAgents maps agents: the .md files declared, and those in agents/
// and the folders below it, named as a Claude Code session names them
// (measured with the init message of `claude -p --output-format
// stream-json`: agents/sub/foo.md is plugin:sub:foo, or plugin:sub:NAME
// when its front matter names it; `claude plugin details` lists only the
// files directly in agents/, by file name, but sessions load them all).
func (b *builder) compatAgents(in *compatInput) {
	b.component(in, "agents", func(src, rel, real string) {
		for _, f := range b.mdFiles(rel, real, src, "agents") {
			b.addAgent(f, true)
		}
	})
}

func (b *builder) compatHooks(in *compatInput) {
	b.declaredJSON(in, "hooks", "hooks/hooks.json", false, b.claudeHooks, b.hookFile, nil)
	if ok, _ := b.t.regularFile(".claude/settings.json"); ok {
		if doc, ok := b.sidecarJSON(".claude/settings.json"); ok {
			before := len(b.pkg.Hooks)
			b.claudeHooks(".claude/settings.json", doc.Get("hooks"))
			b.fallbackNote(".claude/settings.json", len(b.pkg.Hooks)-before)
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

func (b *builder) compatMCP(in *compatInput) {
	specs := map[string]mcpSpec{}
	servers := func(src string, m *node) { b.mcpMap(src, m, specs) }
	bundle := func(src, p string) bool {
		if strings.Contains(p, "://") || !strings.HasSuffix(strings.ToLower(p), ".json") {
			b.skip("%s: mcpServers %q is an MCPB bundle or URL, which Reasonix does not import; skipped", src, p)
			return true
		}
		return false
	}
	b.declaredJSON(in, "mcpServers", ".mcp.json", false, servers,
		func(rel string) { b.serversFile(rel, "mcpServers", false, servers) }, bundle)
}

// mcpMap maps {name: server} entries; imported servers never auto-start.
func (b *builder) mcpMap(src string, m *node, specs map[string]mcpSpec) {
	if m.Kind != jsondoc.Object {
		b.skip("%s: mcpServers must be an object; skipped", src)
		return
	}
	for i := range m.Fields {
		name, v := m.Fields[i].Key, &m.Fields[i].Val
		if v.Kind != jsondoc.Object {
			b.skip("%s: MCP server %q must be an object; skipped", src, name)
			continue
		}
		var s mcpSpec
		if err := json.Unmarshal(v.Compact(), &s); err != nil {
			b.skip("%s: MCP server %q is malformed (%v); skipped", src, name, err)
			continue
		}
		s.AutoStart = nil // imported servers stay off until enabled
		if b.pkg.Kind == KindClaude && s.Type == "" && s.Command == "" && s.URL != "" {
			// Claude Code takes a server without a command for a remote
			// one only when its type says which: it does not load it.
			b.skip("%s: MCP server %q has a url but no type, and Claude Code does not load it (give \"type\": \"http\" or \"sse\"); skipped", src, name)
			continue
		}
		if err := b.addMCP(name, s, src, false, specs); err != nil {
			b.skip("%s: %v; skipped", src, err)
			continue
		}
		if h := v.Get("headersHelper"); !h.IsEmpty() {
			b.skip("%s: MCP server %q: headersHelper is not run by Reasonix; set the headers yourself", src, name)
		}
	}
}
