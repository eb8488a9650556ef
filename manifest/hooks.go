package manifest

import (
	"fmt"
	"regexp"
	"strconv"
)

// hookEvents are the lifecycle events Reasonix runs hooks for.
var hookEvents = map[string]bool{
	"SessionStart":      true,
	"UserPromptSubmit":  true,
	"PreToolUse":        true,
	"PostToolUse":       true,
	"PermissionRequest": true,
	"Stop":              true,
	"SubagentStop":      true,
}

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
	if events == nil || events.kind == kindNull {
		return
	}
	if events.kind != kindObject {
		b.skip("%s: hooks must be an object of events; skipped", src)
		return
	}
	for ei, ev := range events.keys {
		groups := events.vals[ei]
		if groups.kind != kindArray {
			b.skip("%s: hooks.%s must be a list of matcher groups; skipped", src, ev)
			continue
		}
		if !hookEvents[ev] {
			b.skip("%s: %s hooks have no Reasonix event; %d group(s) skipped", src, ev, len(groups.items))
			continue
		}
		if ev == "Stop" || ev == "SubagentStop" {
			b.skipOnce(src+"\x00stop:"+ev, "%s: %s hooks are mapped but cannot block the turn in Reasonix", src, ev)
		}
		for gi, g := range groups.items {
			b.claudeGroup(src, ev, gi, g)
		}
	}
}

func (b *builder) claudeGroup(src, ev string, gi int, g *node) {
	where := fmt.Sprintf("%s: %s[%d]", src, ev, gi)
	if g.kind != kindObject {
		b.skip("%s: a matcher group must be an object; skipped", where)
		return
	}
	matcher := ""
	if m := g.get("matcher"); m != nil && m.kind != kindNull {
		if m.kind != kindString {
			b.skip("%s: matcher must be a string; group skipped", where)
			return
		}
		matcher = m.str
	}
	list := g.get("hooks")
	if list == nil || list.kind != kindArray {
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
	for hi, h := range list.items {
		b.claudeHook(fmt.Sprintf("%s.hooks[%d]", where, hi), src, ev, matcher, h)
	}
}

func (b *builder) claudeHook(where, src, ev, matcher string, h *node) {
	if h.kind != kindObject {
		b.skip("%s: a hook must be an object; skipped", where)
		return
	}
	typ := "command"
	if t := h.get("type"); t != nil && t.kind == kindString {
		typ = t.str
	}
	if typ != "command" {
		b.skip("%s: %q hook skipped: Reasonix runs only command hooks", where, typ)
		return
	}
	cmd := h.get("command")
	if cmd == nil || cmd.kind != kindString || cmd.str == "" {
		b.skip("%s: command hook without a command; skipped", where)
		return
	}
	hook := Hook{Event: ev, Matcher: matcher, Command: cmd.str, Form: HookShell, Source: src}
	if a := h.get("args"); a != nil && a.kind != kindNull {
		args, ok := a.stringList()
		if !ok || a.kind != kindArray {
			b.skip("%s: args must be a list of strings; hook skipped", where)
			return
		}
		hook.Args, hook.Form = maskArgs(args), HookExec
	}
	if s := h.get("shell"); s != nil && s.kind == kindString {
		hook.Shell = s.str
	}
	hook.Command = maskCommand(hook.Command, hook.Form == HookShell, hook.Shell)
	if t := h.get("timeout"); t != nil && t.kind == kindNumber {
		hook.Timeout, _ = strconv.ParseFloat(t.str, 64)
	}
	if a := h.get("async"); a != nil && a.kind == kindBool {
		hook.Async = a.b
	}
	if e := h.get("env"); e != nil {
		env, ok := e.stringMap()
		if !ok {
			b.skip("%s: env must map names to strings; hook skipped", where)
			return
		}
		hook.Env = maskMap(env)
	}
	if c := h.get("if"); !c.isEmpty() {
		b.skipOnce(src+"\x00if", "%s: hooks with an \"if\" condition are mapped, but Reasonix does not evaluate the condition", src)
	}
	if r := h.get("asyncRewake"); r != nil && r.kind == kindBool && r.b {
		b.skipOnce(src+"\x00asyncRewake", "%s: asyncRewake is not honored; such hooks run as plain async hooks", src)
	}
	b.pkg.Hooks = append(b.pkg.Hooks, hook)
}

// hookFile maps a JSON hooks file: {"hooks": {…}} (hooks.json,
// settings.json) or a bare event map.
func (b *builder) hookFile(rel string) {
	doc, ok := b.sidecarJSON(rel)
	if !ok {
		return
	}
	if doc.kind != kindObject {
		b.skip("%s: a hooks file must hold a JSON object; skipped", rel)
		return
	}
	if m := doc.get("modules"); !m.isEmpty() {
		b.warn("%s: declares Claude Code mod modules: they run with FULL TRUST, only while Run Claude Code mods is on", rel)
	}
	if h := doc.get("hooks"); h != nil {
		b.claudeHooks(rel, h)
		return
	}
	events := &node{kind: kindObject}
	for i, k := range doc.keys {
		if k == "description" || k == "modules" || k == "$schema" {
			continue
		}
		events.keys = append(events.keys, k)
		events.vals = append(events.vals, doc.vals[i])
	}
	b.claudeHooks(rel, events)
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
