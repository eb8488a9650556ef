package manifest

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"

	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/internal/lazyregexp"
)

// This file is Claude Code's .claude-plugin/plugin.json, described once:
// the field table `reasonix plugin validate` walks and the installer reads
// (roles say what each field is to Reasonix). The rules are those of
// Claude Code's own `claude plugin validate`, so an author gets the same
// verdict from both tools: Claude Code's plugin reference defines the
// fields; where it is silent, its validator decides (required fields,
// types, the "./" prefix of component paths, `.md` agent files, hook
// events, MCP and LSP server shapes). Unknown fields are warnings, as they
// are for Claude. A marketplace entry's table is this one plus the
// entry-only rows (claudeEntryRows).

// node is a decoded document value; Finding, Report and Checked are what
// walking documents reports (internal/jsondoc), named here for the
// packages that validate plugins.
type node = jsondoc.Node

type (
	Finding = jsondoc.Finding
	Report  = jsondoc.Report
	Checked = jsondoc.Checked
)

var (
	depStrRE   = lazyregexp.New(`^[A-Za-z0-9][-A-Za-z0-9._]*(@[A-Za-z0-9][-A-Za-z0-9._]*)?(@\^[^@]*)?$`)
	optionKey  = lazyregexp.New(`^[A-Za-z_]\w*$`)
	binaryName = lazyregexp.New(`^[a-z0-9](?:[a-z0-9._-]*[a-z0-9_-])?$`)
	sha256Hex  = lazyregexp.New(`^[0-9a-f]{64}$`)
)

// maxBinaries is how many binaries entries Claude Code fetches at install.
const maxBinaries = 16

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

// relPath is a component path: relative to the plugin root, starting with
// "./", naming a file with one of suffixes when given.
func relPath(suffixes ...string) *jsondoc.Shape {
	return jsondoc.Str().Check(func(s string) string {
		if !strings.HasPrefix(s, "./") {
			return fmt.Sprintf("path %q must start with \"./\" (relative to the plugin root)", jsondoc.Clip(s, 80))
		}
		if len(suffixes) == 0 || slices.ContainsFunc(suffixes, func(suf string) bool { return strings.HasSuffix(s, suf) }) {
			return ""
		}
		if len(suffixes) == 1 && suffixes[0] == ".md" {
			return fmt.Sprintf("path %q must name a .md file: agents are declared file by file (the agents/ folder is read without being declared)", jsondoc.Clip(s, 80))
		}
		return fmt.Sprintf("path %q must name a %s file", jsondoc.Clip(s, 80), strings.Join(suffixes, " or "))
	})
}

// pathOrList is a "./" path or an array of them.
func pathOrList(suffixes ...string) *jsondoc.Shape {
	return jsondoc.OneOf(`a "./" path or an array of them`, relPath(suffixes...), jsondoc.List(relPath(suffixes...)))
}

func str() *jsondoc.Shape    { return jsondoc.Str() }
func flag() *jsondoc.Shape   { return jsondoc.Boolean() }
func strs() *jsondoc.Shape   { return jsondoc.StrList() }
func strMap() *jsondoc.Shape { return jsondoc.StrMap() }
func posInt() *jsondoc.Shape { return jsondoc.Num().Int().Positive() }

func opt(key string, s *jsondoc.Shape) jsondoc.Row { return jsondoc.Row{Key: key, Shape: s} }
func req(key string, s *jsondoc.Shape) jsondoc.Row {
	return jsondoc.Row{Key: key, Shape: s, Required: "required"}
}

// object is a table whose unknown keys are dropped silently, as Claude
// Code's (non-strict) schema objects drop them.
func object(name string, rows ...jsondoc.Row) *jsondoc.Shape {
	return jsondoc.Obj(jsondoc.NewTable(name, rows...))
}

// strictObject refuses unknown keys, as Claude Code's strict objects do.
func strictObject(name string, rows ...jsondoc.Row) *jsondoc.Shape {
	t := jsondoc.NewTable(name, rows...)
	t.Unknown = jsondoc.Strict
	return jsondoc.Obj(t)
}

// ClaudePlugin is the field table of .claude-plugin/plugin.json, built
// once, on first use (the entry's table is derived from it).
var ClaudePlugin = sync.OnceValue(func() *jsondoc.Table {
	const C, M, U = jsondoc.Component, jsondoc.Meta, jsondoc.Unsupported
	located, declares, replaces := jsondoc.Located, jsondoc.Declares, jsondoc.Replaces
	t := jsondoc.NewTable("a plugin manifest",
		jsondoc.Row{Key: "$schema", Shape: str(), Role: M},
		jsondoc.Row{Key: "name", Shape: pluginName(), Role: M, Required: "required: the plugin's name (kebab-case, e.g. \"my-plugin\")"},
		jsondoc.Row{Key: "displayName", Shape: str(), Role: M},
		jsondoc.Row{Key: "version", Shape: str(), Role: M},
		jsondoc.Row{Key: "description", Shape: str(), Role: M},
		jsondoc.Row{Key: "author", Shape: author(), Role: M},
		jsondoc.Row{Key: "homepage", Shape: jsondoc.URL(), Role: M},
		jsondoc.Row{Key: "repository", Shape: str(), Role: M},
		jsondoc.Row{Key: "license", Shape: str(), Role: M},
		jsondoc.Row{Key: "keywords", Shape: strs(), Role: M},
		jsondoc.Row{Key: "defaultEnabled", Shape: flag(), Role: M},
		jsondoc.Row{Key: "dependencies", Shape: dependencies(), Role: M},
		jsondoc.Row{Key: "hooks", Shape: hooksField(), Role: C, Traits: declares | located},
		jsondoc.Row{Key: "commands", Shape: commandsField(), Role: C, Traits: declares | replaces | located},
		jsondoc.Row{Key: "agents", Shape: pathOrList(".md"), Role: C, Traits: declares | replaces | located},
		jsondoc.Row{Key: "skills", Shape: pathOrList(), Role: C, Traits: declares | located | jsondoc.Directories},
		jsondoc.Row{Key: "outputStyles", Shape: pathOrList(), Role: U, Traits: declares | replaces},
		jsondoc.Row{Key: "themes", Shape: pathOrList(), Role: U, Traits: declares | replaces},
		jsondoc.Row{Key: "workflows", Shape: pathOrList(), Role: U, Traits: replaces | located},
		jsondoc.Row{Key: "channels", Shape: jsondoc.List(channel()).Describe("an array of channels"), Role: U},
		jsondoc.Row{Key: "mcpServers", Shape: serversField("MCP", mcpServer(), ".mcpb", ".dxt"), Role: C},
		jsondoc.Row{Key: "lspServers", Shape: serversField("LSP", lspServer()), Role: C},
		jsondoc.Row{Key: "monitors", Shape: monitorsField(), Role: U},
		jsondoc.Row{Key: "settings", Shape: jsondoc.AnyObject(), Role: U},
		jsondoc.Row{Key: "userConfig", Shape: userOptions(true), Role: M},
		jsondoc.Row{Key: "binaries", Shape: binaries(), Role: U},
		jsondoc.Row{Key: "experimental", Shape: experimental(), Role: U},
	)
	t.Unknown = unknownPluginField
	t.Check = checkDeclaredPaths
	t.Advice = pluginAdvice
	return t
})

func pluginName() *jsondoc.Shape {
	return str().NonEmpty().Check(func(s string) string {
		if strings.Contains(s, " ") {
			return fmt.Sprintf("plugin name %q must not contain spaces (use kebab-case, e.g. \"my-plugin\")", jsondoc.Clip(s, 80))
		}
		return ""
	})
}

// unknownPluginField explains a field Claude Code does not read in
// plugin.json: one that belongs in a marketplace entry, a likely typo, or
// simply unknown.
func unknownPluginField(w *jsondoc.Walk, at, key string) {
	entryOnly := func(r jsondoc.Row) bool { return r.Key == key && r.Role == jsondoc.EntryOnly }
	if slices.ContainsFunc(claudeEntryRows(nil), entryOnly) {
		w.Warnf(jsondoc.Join(at, key), "%q belongs in the marketplace entry, not in plugin.json; ignored here", key)
		return
	}
	jsondoc.Warn(w, at, key)
}

// pluginAdvice is Claude Code's advice on a manifest its schema accepts.
func pluginAdvice(w *jsondoc.Walk, at string, doc *node) {
	for _, k := range []string{"monitors", "themes"} {
		if doc.Get(k) != nil {
			w.Warnf(jsondoc.Join(at, k), "%q is an experimental component: declare it under \"experimental.%s\" (top-level still loads in Claude Code but is going away)", k, k)
		}
	}
	if n := doc.Get("version"); n == nil || (n.Kind == jsondoc.String && n.Str == "") {
		w.Warnf(jsondoc.Join(at, "version"), "no version: add one following semver, e.g. \"1.0.0\"")
	}
	if n := doc.Get("description"); n == nil || (n.Kind == jsondoc.String && n.Str == "") {
		w.Warnf(jsondoc.Join(at, "description"), "no description: say what the plugin does")
	}
	if doc.Get("author") == nil {
		w.Warnf(jsondoc.Join(at, "author"), "no author: add {\"name\": …} for attribution")
	}
}

func author() *jsondoc.Shape {
	return object("author", req("name", str().NonEmpty()), opt("email", str()), opt("url", str()))
}

// dependencies: plugin names, "name@marketplace" (optionally "@^range"),
// or {"name", "marketplace"?, "version"?} objects.
func dependencies() *jsondoc.Shape {
	name := str().NonEmpty().Check(func(s string) string {
		if !PluginNameRE.MatchString(s) {
			return fmt.Sprintf("%q must use letters, digits, '.', '_' and '-', starting with a letter or digit", jsondoc.Clip(s, 80))
		}
		return ""
	})
	byString := str().Check(func(s string) string {
		if !depStrRE.MatchString(s) {
			return fmt.Sprintf("dependency %q must be a plugin name, optionally qualified as NAME@MARKETPLACE", jsondoc.Clip(s, 80))
		}
		if _, rng, ok := strings.Cut(s, "@^"); ok {
			return versionRange("^" + rng)
		}
		return ""
	})
	byObject := object("dependency", req("name", name), opt("marketplace", name),
		opt("version", str().NonEmpty().Check(versionRange)))
	return jsondoc.List(jsondoc.OneOf(`a plugin name or a {"name", "marketplace"} object`, byString, byObject)).
		Describe("an array of plugin names").
		Hint(jsondoc.Object, "must be an array of plugin names, found an object (an object of package versions is npm's form: it belongs in package.json)")
}

// versionRange: a dependency's version must be a semantic version range
// Reasonix can check the dependency against (Reasonix's rule: a range it
// cannot read could never be satisfied).
func versionRange(rng string) string {
	if _, err := semver.NewConstraint(rng); err != nil {
		return fmt.Sprintf("%q is not a semantic version range (e.g. \"^2.0\", \"~2.1.0\"): %v", jsondoc.Clip(rng, 80), err)
	}
	return ""
}

// commandsField is a "./" path, an array of them, or an object of
// commands ({"name": {"source"|"content", description…}}).
func commandsField() *jsondoc.Shape {
	spec := jsondoc.NewTable("command",
		opt("source", relPath()), opt("content", str()), opt("description", str()),
		opt("argumentHint", str()), opt("model", str()), opt("allowedTools", strs()))
	spec.Check = func(w *jsondoc.Walk, at string, n *node) {
		src, content := n.Get("source"), n.Get("content")
		isStr := func(v *node) bool { return v == nil || v.Kind == jsondoc.String }
		has := func(v *node) bool { return v != nil && v.Kind == jsondoc.String && v.Str != "" }
		if has(src) == has(content) && isStr(src) && isStr(content) {
			w.Errorf(at, "a command needs exactly one of \"source\" (a file path) or \"content\" (inline markdown)")
		}
	}
	return jsondoc.OneOf(`a "./" path, an array of them, or an object of commands`,
		relPath(), jsondoc.List(relPath()), jsondoc.Map(jsondoc.Obj(spec)))
}

func channel() *jsondoc.Shape {
	return strictObject("channel", req("server", str().NonEmpty()), opt("displayName", str()),
		opt("userConfig", userOptions(false)))
}

// userOptions is a userConfig object. In a plugin's own userConfig the
// option keys become environment variable names, so they must be
// identifiers.
func userOptions(identifiers bool) *jsondoc.Shape {
	option := strictObject("option",
		req("type", str().Enum("string", "number", "boolean", "directory", "file")),
		req("title", str()), req("description", str()),
		opt("required", flag()), opt("default", jsondoc.OneOf("a string, number, boolean or array of strings", str(), jsondoc.Num(), flag(), strs())),
		opt("multiple", flag()), opt("sensitive", flag()), opt("min", jsondoc.Num()), opt("max", jsondoc.Num()))
	s := jsondoc.Map(option).Describe("an object of options")
	if identifiers {
		s.KeyCheck(func(k string) string {
			if !optionKey.MatchString(k) {
				return fmt.Sprintf("option key %q must be an identifier (letters, digits, underscore; no leading digit): it becomes CLAUDE_PLUGIN_OPTION_<KEY>", jsondoc.Clip(k, 60))
			}
			return ""
		})
	}
	return s
}

// hooksField is a "./….json" path, an inline hooks object, or an array of
// either.
func hooksField() *jsondoc.Shape {
	one := jsondoc.OneOf(`a "./….json" path or a hooks object`, relPath(".json"), hooksConfig())
	return jsondoc.OneOf(`a "./….json" path, a hooks object, or an array of them`,
		relPath(".json"), hooksConfig(), jsondoc.List(one))
}

// hooksConfig is {event: [{matcher?, hooks: [hook…]}…]}.
func hooksConfig() *jsondoc.Shape {
	matcher := object("matcher group", opt("matcher", str()),
		req("hooks", jsondoc.List(hook()).Describe("an array of hooks")))
	return jsondoc.Map(jsondoc.List(matcher).Describe("an array of matchers")).KeyCheck(func(ev string) string {
		if slices.Contains(claudeHookEvents, ev) {
			return ""
		}
		hint := ""
		if ev == "hooks" {
			hint = " (the {\"hooks\": {…}} wrapper belongs in hooks.json files, not inline)"
		} else if s := jsondoc.Closest(ev, claudeHookEvents); s != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", s)
		}
		return fmt.Sprintf("unknown hook event %q%s", jsondoc.Clip(ev, 60), hint)
	})
}

// hook is one hook: its "type" decides which fields it needs.
func hook() *jsondoc.Shape {
	common := func(rows ...jsondoc.Row) *jsondoc.Table {
		all := append([]jsondoc.Row{req("type", str()), opt("timeout", jsondoc.Num().Positive()),
			opt("if", str()), opt("statusMessage", str()), opt("once", flag())}, rows...)
		return jsondoc.NewTable("hook", all...)
	}
	prompt := []jsondoc.Row{req("prompt", str()), opt("model", str())}
	return jsondoc.Tagged(&jsondoc.Union{Tag: "type", Missing: "required",
		Cases: map[string]*jsondoc.Table{
			"command": common(req("command", str()), opt("args", strs()), opt("shell", str().Enum("bash", "powershell")),
				opt("async", flag()), opt("asyncRewake", flag()),
				opt("rewakeMessage", str().NonEmpty()), opt("rewakeSummary", str().NonEmpty())),
			"prompt": common(append(prompt, opt("continueOnBlock", flag()))...),
			"agent":  common(prompt...),
			"http": common(req("url", jsondoc.URL()), opt("headers", strMap()),
				opt("allowedEnvVars", strs())),
			"mcp_tool": common(req("server", str()), req("tool", str()), opt("input", jsondoc.AnyObject())),
		},
		Unknown: func(w *jsondoc.Walk, at, tag string) {
			w.Errorf(jsondoc.Join(at, "type"), "unknown hook type %q (known: command, prompt, agent, http, mcp_tool)", jsondoc.Clip(tag, 40))
		},
	})
}

// serversField is mcpServers or lspServers: a "./….json" path (or, for
// MCP, an MCPB bundle path or URL), an object of servers, or an array of
// those.
func serversField(what string, server *jsondoc.Shape, bundles ...string) *jsondoc.Shape {
	path := str().Check(func(s string) string {
		for _, b := range bundles {
			if strings.HasSuffix(s, b) {
				if strings.HasPrefix(s, "./") || jsondoc.IsURL(s) {
					return ""
				}
				return fmt.Sprintf("bundle %q must be a \"./\" path or a URL", jsondoc.Clip(s, 80))
			}
		}
		if !strings.HasPrefix(s, "./") || !strings.HasSuffix(s, ".json") {
			extra := ""
			if len(bundles) > 0 {
				extra = " or an MCPB bundle (.mcpb, .dxt)"
			}
			return fmt.Sprintf("%q must be a \"./….json\" file of %s servers%s", jsondoc.Clip(s, 80), what, extra)
		}
		return ""
	})
	servers := jsondoc.Map(server)
	one := jsondoc.OneOf("a path or an object of servers", path, servers)
	return jsondoc.OneOf(fmt.Sprintf("a \"./….json\" path or an object of %s servers", what), path, servers, jsondoc.List(one))
}

// mcpServer is one MCP server: a stdio command, or a typed remote server.
func mcpServer() *jsondoc.Shape {
	common := []jsondoc.Row{opt("type", str()), opt("timeout", posInt()), opt("alwaysLoad", flag())}
	table := func(rows ...jsondoc.Row) *jsondoc.Table {
		return jsondoc.NewTable("MCP server", append(append([]jsondoc.Row{}, common...), rows...)...)
	}
	url := jsondoc.Row{Key: "url", Shape: str(), Required: "required for a remote server"}
	permissions := opt("toolPermissions", jsondoc.Map(str().Enum("allow", "ask", "blocked")))
	oauth := object("oauth", opt("clientId", str()), opt("callbackPort", posInt()),
		opt("authServerMetadataUrl", str().Check(func(s string) string {
			if !jsondoc.IsURL(s) || !strings.HasPrefix(s, "https://") {
				return "must be an https:// URL"
			}
			return ""
		})),
		opt("scopes", str().NonEmpty()), opt("xaa", flag()))
	tools := jsondoc.List(object("tool", req("name", str()),
		opt("permission_policy", str().Enum("always_allow", "always_ask", "always_deny")))).Describe("an array of tools")
	remote := func(withOAuth bool) *jsondoc.Table {
		rows := []jsondoc.Row{url, opt("headers", strMap()), opt("headersHelper", str())}
		if withOAuth {
			rows = append(rows, opt("oauth", oauth), opt("tools", tools), permissions)
		}
		return table(rows...)
	}
	stdio := table(opt("command", str().NonEmpty()), opt("args", strs()), opt("env", strMap()))
	stdio.Check = func(w *jsondoc.Walk, at string, n *node) {
		if n.Get("command") != nil {
			return
		}
		if n.Get("url") != nil {
			w.Errorf(at, "a server with a \"url\" needs a \"type\" (\"http\", \"sse\" or \"ws\"); without one it is a stdio server, which needs \"command\"")
			return
		}
		w.Errorf(jsondoc.Join(at, "command"), "required for a stdio server")
	}
	ide := func(extra ...jsondoc.Row) *jsondoc.Table {
		return table(append([]jsondoc.Row{url, req("ideName", str()), opt("ideRunningInWindows", flag())}, extra...)...)
	}
	http := remote(true)
	return jsondoc.Tagged(&jsondoc.Union{Tag: "type", Default: "stdio",
		Cases: map[string]*jsondoc.Table{
			"stdio": stdio, "sse": http, "http": http, "streamable-http": http, "ws": remote(false),
			"sse-ide": ide(), "ws-ide": ide(opt("authToken", str())),
			"sdk": table(req("name", str())),
			"claudeai-proxy": table(url, req("id", str()), opt("displayName", str()), opt("iconUrl", str()),
				opt("stateless", flag()), permissions, opt("cachedInitResponse", jsondoc.OneOf("an object", jsondoc.AnyObject(), jsondoc.Nil()))),
		},
		Unknown: func(w *jsondoc.Walk, at, tag string) {
			w.Errorf(jsondoc.Join(at, "type"), "unknown MCP server type %q (known: stdio, sse, http, streamable-http, ws, sse-ide, ws-ide, sdk, claudeai-proxy)", jsondoc.Clip(tag, 40))
		},
	})
}

// lspServer is one language server: a strict object.
func lspServer() *jsondoc.Shape {
	command := str().NonEmpty().Check(func(s string) string {
		if strings.Contains(s, " ") && !strings.HasPrefix(s, "/") {
			return "must not contain spaces: put arguments in \"args\""
		}
		return ""
	})
	extensions := jsondoc.Map(str().NonEmpty()).KeyCheck(func(ext string) string {
		if len(ext) < 2 || !strings.HasPrefix(ext, ".") {
			return fmt.Sprintf("file extension %q must start with a dot (e.g. \".ts\")", jsondoc.Clip(ext, 20))
		}
		return ""
	}).Describe("an object mapping file extensions to language ids").Rule(func(w *jsondoc.Walk, at string, n *node) {
		if len(n.Fields) == 0 {
			w.Errorf(at, "must map at least one file extension")
		}
	})
	return strictObject("LSP server",
		req("command", command), opt("args", jsondoc.List(str().NonEmpty()).Describe("an array of strings")),
		req("extensionToLanguage", extensions), opt("transport", str().Enum("stdio", "socket")),
		opt("env", strMap()), opt("initializationOptions", jsondoc.Any()), opt("settings", jsondoc.Any()),
		opt("workspaceFolder", str()), opt("startupTimeout", posInt()), opt("shutdownTimeout", posInt()),
		opt("restartOnCrash", flag()), opt("maxRestarts", jsondoc.Num().Int().NonNegative()), opt("diagnostics", flag()))
}

// monitorsField is a "./….json" path or an array of monitors, whose names
// are unique within the plugin.
func monitorsField() *jsondoc.Shape {
	when := str().Check(func(s string) string {
		const onSkill = "on-skill-invoke:"
		if s != "always" && (!strings.HasPrefix(s, onSkill) || len(s) <= len(onSkill)) {
			return "must be \"always\" or \"on-skill-invoke:<skill>\""
		}
		return ""
	})
	monitor := strictObject("monitor", req("name", str().NonEmpty()), req("command", str().NonEmpty()),
		req("description", str().NonEmpty()), opt("when", when))
	list := jsondoc.List(monitor).Rule(func(w *jsondoc.Walk, at string, n *node) {
		seen := map[string]int{}
		for i := range n.Items {
			name := n.Items[i].Get("name")
			if name == nil || name.Kind != jsondoc.String {
				continue
			}
			if j, dup := seen[name.Str]; dup {
				w.Errorf(jsondoc.Join(jsondoc.Index(at, i), "name"), "monitor name %q is also used by %s[%d]; names must be unique within a plugin", jsondoc.Clip(name.Str, 60), at, j)
			} else {
				seen[name.Str] = i
			}
		}
	})
	return jsondoc.OneOf(`a "./….json" path or an array of monitors`, relPath(".json"), list)
}

// binaries never fail a manifest: Claude Code ignores a bad entry at
// install time, so each is a warning.
func binaries() *jsondoc.Shape {
	return jsondoc.Map(jsondoc.Any()).Describe(`an object mapping basenames to {"sha256": …}`).Lenient().
		Rule(func(w *jsondoc.Walk, at string, n *node) {
			valid := 0
			for _, f := range n.Fields {
				sha := f.Val.Get("sha256")
				if !binaryName.MatchString(f.Key) || f.Val.Kind != jsondoc.Object || sha == nil || sha.Kind != jsondoc.String || !sha256Hex.MatchString(sha.Str) {
					w.Warnf(jsondoc.Join(at, f.Key), "invalid binaries entry, ignored: the basename must be lowercase letters, digits, '.', '_' or '-' (no leading or trailing dot) and the value {\"sha256\": <64 lowercase hex>}")
					continue
				}
				valid++
			}
			if valid > maxBinaries {
				w.Warnf(at, "%d binaries declared; only the first %d are fetched", valid, maxBinaries)
			}
		})
}

// experimental holds the components Claude Code marks experimental; a
// value that is not an object is ignored there (a warning here).
func experimental() *jsondoc.Shape {
	t := jsondoc.NewTable("experimental",
		opt("themes", pathOrList()), opt("outputStyles", pathOrList()), opt("monitors", monitorsField()),
		opt("evals", jsondoc.OneOf("a string or an array of strings", str(), strs())))
	t.Unknown = func(w *jsondoc.Walk, at, key string) {
		w.Warnf(jsondoc.Join(at, key), "unknown experimental component %q; ignored", key)
	}
	return jsondoc.Obj(t).Describe("an object of component declarations").Lenient()
}

// HooksFile is the table of a hooks file (hooks/hooks.json, or one a
// manifest names): {"description"?, "hooks": {event: […]}}. Claude Code
// fails to load a plugin whose hooks file does not follow it ("Hook load
// failed"), so install refuses one too.
var HooksFile = sync.OnceValue(func() *jsondoc.Table {
	t := jsondoc.NewTable("a hooks file", opt("description", str()),
		opt("hooks", hooksConfig().Describe("an object of hook events")))
	t.Check = func(w *jsondoc.Walk, at string, doc *node) {
		if doc.Get("hooks") != nil {
			return
		}
		msg := "required"
		if len(doc.Fields) > 0 && slices.Contains(claudeHookEvents, doc.Fields[0].Key) {
			msg += `: wrap the events as {"hooks": {…}}; Claude Code fails to load a hooks file without it ("Hook load failed: expected record, received undefined at path hooks")`
		}
		w.Errorf(jsondoc.Join(at, "hooks"), "%s", msg)
	}
	return t
})
