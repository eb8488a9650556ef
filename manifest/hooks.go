package manifest

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/secrets"
)

// hookEvents are the lifecycle events Reasonix runs hooks for, in the
// order a native manifest's hooks are listed.
var hookEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PermissionRequest", "Stop", "SubagentStop"}

// toolEvents see a tool call, so their matchers select tools.
var toolEvents = map[string]bool{"PreToolUse": true, "PostToolUse": true, "PermissionRequest": true}

// matcherGaps are tool inputs Reasonix cannot express losslessly to a
// Claude hook: a hook whose matcher covers the tool may see less than it
// would under Claude.
var matcherGaps = []struct{ tool, input, why string }{
	{"WebFetch", "prompt", "Reasonix's fetch tool has no prompt"},
	{"NotebookEdit", "cell_id", "Reasonix addresses cells by number"},
	{"TaskOutput", "task_id", "Reasonix's wait can cover several jobs"},
}

func matcherCovers(matcher, tool string) bool {
	if matcher == "" || matcher == "*" {
		return true
	}
	re, err := regexp.Compile("^(?:" + matcher + ")$")
	if err != nil {
		return matcher == tool
	}
	return re.MatchString(tool)
}

// claudeHooks maps a Claude-format event map
// ({Event: [{matcher, hooks: [{type, command, …}]}]}) declared in src.
// Structural gaps are reported once per src.
func (b *builder) claudeHooks(src string, events *node) {
	if events == nil || events.Kind == jsondoc.Null {
		return
	}
	if events.Kind != jsondoc.Object {
		b.skip("%s: hooks must be an object of events; skipped", src)
		return
	}
	for ei := range events.Fields {
		ev, groups := events.Fields[ei].Key, &events.Fields[ei].Val
		if groups.Kind != jsondoc.Array {
			b.skip("%s: hooks.%s must be a list of matcher groups; skipped", src, ev)
			continue
		}
		if !slices.Contains(hookEvents, ev) {
			b.skip("%s: %s hooks have no Reasonix event; %d group(s) skipped", src, ev, len(groups.Items))
			continue
		}
		if ev == "Stop" || ev == "SubagentStop" {
			b.skipOnce(src+"\x00stop:"+ev, "%s: %s hooks are mapped but cannot block the turn in Reasonix", src, ev)
		}
		for gi := range groups.Items {
			b.claudeGroup(src, ev, gi, &groups.Items[gi])
		}
	}
}

func (b *builder) claudeGroup(src, ev string, gi int, g *node) {
	where := fmt.Sprintf("%s: %s[%d]", src, ev, gi)
	if g.Kind != jsondoc.Object {
		b.skip("%s: a matcher group must be an object; skipped", where)
		return
	}
	matcher := ""
	if m := g.Get("matcher"); m != nil && m.Kind != jsondoc.Null {
		if m.Kind != jsondoc.String {
			b.skip("%s: matcher must be a string; group skipped", where)
			return
		}
		matcher = m.Str
	}
	list := g.Get("hooks")
	if list == nil || list.Kind != jsondoc.Array {
		b.skip("%s: group has no hooks list; skipped", where)
		return
	}
	if toolEvents[ev] {
		for _, gap := range matcherGaps {
			if matcherCovers(matcher, gap.tool) {
				b.skipOnce(src+"\x00gap:"+gap.tool, "%s: a %s matcher %q covers %s, whose %s input Reasonix cannot pass on losslessly (%s)",
					src, ev, matcher, gap.tool, gap.input, gap.why)
			}
		}
	}
	for hi := range list.Items {
		b.claudeHook(fmt.Sprintf("%s.hooks[%d]", where, hi), src, ev, matcher, &list.Items[hi])
	}
}

func (b *builder) claudeHook(where, src, ev, matcher string, h *node) {
	if h.Kind != jsondoc.Object {
		b.skip("%s: a hook must be an object; skipped", where)
		return
	}
	typ := "command"
	if t := h.Get("type"); t != nil && t.Kind == jsondoc.String {
		typ = t.Str
	}
	if typ != "command" {
		b.skip("%s: %q hook skipped: Reasonix runs only command hooks", where, typ)
		return
	}
	cmd := h.Get("command")
	if cmd == nil || cmd.Kind != jsondoc.String || cmd.Str == "" {
		b.skip("%s: command hook without a command; skipped", where)
		return
	}
	hook := Hook{Event: ev, Matcher: matcher, Command: cmd.Str, Form: HookShell, Source: src}
	if a := h.Get("args"); a != nil && a.Kind != jsondoc.Null {
		args, ok := a.StringList()
		if !ok || a.Kind != jsondoc.Array {
			b.skip("%s: args must be a list of strings; hook skipped", where)
			return
		}
		hook.Args, hook.Form = secrets.MaskArgs(args), HookExec
	}
	hook.Shell = h.GetStr("shell")
	hook.Command = secrets.MaskCommand(hook.Command, hook.Form == HookShell, hook.Shell)
	if t := h.Get("timeout"); t != nil && t.Kind == jsondoc.Number {
		hook.Timeout, _ = strconv.ParseFloat(t.Str, 64)
	}
	if a := h.Get("async"); a != nil && a.Kind == jsondoc.Bool {
		hook.Async = a.Bool
	}
	if e := h.Get("env"); e != nil {
		env, ok := e.StringMap()
		if !ok {
			b.skip("%s: env must map names to strings; hook skipped", where)
			return
		}
		hook.Env = secrets.MaskValues(env)
	}
	if c := h.Get("if"); !c.IsEmpty() {
		b.skipOnce(src+"\x00if", "%s: hooks with an \"if\" condition are mapped, but Reasonix does not evaluate the condition", src)
	}
	if r := h.Get("asyncRewake"); r != nil && r.Kind == jsondoc.Bool && r.Bool {
		b.skipOnce(src+"\x00asyncRewake", "%s: asyncRewake is not honored; such hooks run as plain async hooks", src)
	}
	b.pkg.Hooks = append(b.pkg.Hooks, hook)
}

// hookFile maps a JSON hooks file ({"description"?, "hooks": {…}}). One
// Claude Code cannot load (the bare event map without "hooks", a mistyped
// hook…) makes it fail to load the whole plugin, so the package is
// blocked with its reason.
func (b *builder) hookFile(rel string) {
	doc, ok := b.sidecarJSON(rel)
	if !ok {
		return
	}
	var r Report
	(&jsondoc.Walk{Report: &r, Mode: jsondoc.Install}).Document(HooksFile(), doc)
	if !r.OK() {
		b.block("%s: Claude Code fails to load this plugin's hooks (\"Hook load failed\"): %s", rel, r.Summary(3))
		return
	}
	if m := doc.Get("modules"); !m.IsEmpty() {
		b.warn("%s: declares Claude Code mod modules: they run with FULL TRUST, only while Run Claude Code mods is on", rel)
	}
	b.claudeHooks(rel, doc.Get("hooks"))
}

// sidecarJSON reads a JSON file the package declares or ships by
// convention. A bad one is skipped with a warning, never fatal: one broken
// file must not hide the rest of the package.
func (b *builder) sidecarJSON(rel string) (*node, bool) {
	data, err := b.t.readFile(rel, maxJSONBytes)
	if err != nil {
		b.skip("%s: cannot read: %v; skipped", rel, err)
		return nil, false
	}
	b.configFile(rel)
	doc, err := parseJSON(rel, data)
	if err != nil {
		b.skip("%v; skipped", err)
		return nil, false
	}
	return doc, true
}

// declaredJSON maps a field whose declarations are an object (inline), a
// "./….json" path to a file holding one (file; each file read once), or a
// list of either; then the conventional file, unless a declaration named
// it. reject, when set, turns a path down before it is resolved.
// listOnly: the field is one Reasonix lists without mapping (unmapped).
func (b *builder) declaredJSON(in *compatInput, field, conventional string, listOnly bool,
	inline func(src string, n *node), file func(rel string), reject func(src, p string) bool) {
	loaded := map[string]bool{}
	var visit func(src string, n *node)
	visit = func(src string, n *node) {
		switch n.Kind {
		case jsondoc.Object:
			inline(src, n)
		case jsondoc.String:
			if reject != nil && reject(src, n.Str) {
				return
			}
			if rel, _, ok := b.declaredPath(src, field, n.Str); ok && !loaded[rel] {
				loaded[rel] = true
				file(rel)
			}
		case jsondoc.Array:
			for i := range n.Items {
				visit(src, &n.Items[i])
			}
		case jsondoc.Null:
		default:
			b.unmapped(listOnly, "%s: %s must be an object, a path or a list", src, field)
		}
	}
	list, _ := in.declared(field)
	for _, d := range list {
		visit(d.src, d.n)
	}
	if !loaded[conventional] {
		if ok, _ := b.t.regularFile(conventional); ok {
			file(conventional)
		}
	}
}

// serversFile maps a .mcp.json- or .lsp.json-style file: {key: {…}} or a
// bare map of servers.
func (b *builder) serversFile(rel, key string, listOnly bool, servers func(src string, m *node)) {
	doc, ok := b.sidecarJSON(rel)
	if !ok {
		return
	}
	if doc.Kind != jsondoc.Object {
		b.unmapped(listOnly, "%s: must hold a JSON object", rel)
		return
	}
	servers(rel, cmp.Or(doc.Get(key), doc))
}

// unmapped reports a declaration that maps to nothing: skipped (the
// package is partial), or, for what Reasonix only lists (listOnly: LSP
// servers), ignored.
func (b *builder) unmapped(listOnly bool, format string, args ...any) {
	if listOnly {
		b.warn(format+"; ignored", args...)
		return
	}
	b.skip(format+"; skipped", args...)
}
