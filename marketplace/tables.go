package marketplace

import (
	"fmt"
	"strings"
	"sync"

	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/internal/lazyregexp"
	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/source"
)

// The marketplace documents, each described once: Claude Code's
// .claude-plugin/marketplace.json and its entries (the plugin manifest's
// table plus the entry's own rows, manifest.ClaudeEntry), and Codex's
// .agents/plugins/marketplace.json. Parse and `validate` walk the same
// tables; install refuses what the walk calls an error, entry by entry.

var (
	npmNameRE   = lazyregexp.New(`^(@[a-z0-9][a-z0-9-._]*/)?[a-z0-9][a-z0-9-._]*$`)
	npmSchemeRE = lazyregexp.New(`(?i)^(?:file|https?|git(?:\+https?|\+ssh)?|ssh|github|gitlab|bitbucket):`)
)

func str() *jsondoc.Shape { return jsondoc.Str() }

func opt(key string, s *jsondoc.Shape) jsondoc.Row { return jsondoc.Row{Key: key, Shape: s} }

// pathOnRepository is a difference Reasonix keeps: Claude Code ignores
// "path" on a url or github source.
const pathOnRepository = `Reasonix installs the plugin from this folder of the repository; Claude Code ignores "path" on a url or github source and installs the repository's root`

// sourceShape is a Claude entry's source: a "./" path inside the
// marketplace, or an object whose "source" names its type.
func sourceShape() *jsondoc.Shape {
	sha := str().Check(func(s string) string {
		if !source.IsSHA(s) {
			return fmt.Sprintf("%q is not a full 40-character lowercase hex commit SHA", jsondoc.Clip(s, 50))
		}
		return ""
	})
	kind := func(typ string, rows ...jsondoc.Row) *jsondoc.Table {
		t := jsondoc.NewTable(typ+" source", append([]jsondoc.Row{opt("source", str())}, rows...)...)
		t.Unknown = func(w *jsondoc.Walk, at, key string) {
			hint := ""
			if key == "commit" {
				hint = ` (the pin is "sha")`
			}
			w.Warnf(jsondoc.Join(at, key), "unknown field %q of a %q source; ignored%s", key, typ, hint)
		}
		// Claude's traversal check runs on any string "path".
		t.Check = func(w *jsondoc.Walk, at string, n *jsondoc.Node) {
			if p := n.Get("path"); p != nil && p.Kind == jsondoc.String && strings.Contains(p.Str, "..") {
				w.Errorf(jsondoc.Join(at, "path"), "path %q contains \"..\"", p.Str)
			}
		}
		return t
	}
	required := func(key, typ string, s *jsondoc.Shape) jsondoc.Row {
		return jsondoc.Row{Key: key, Shape: s, Required: fmt.Sprintf("required for a %q source", typ)}
	}
	differs := func(w *jsondoc.Walk, at string, _ *jsondoc.Node) {
		// A warning that says how Reasonix differs (see Report.Differences).
		w.Warnings = append(w.Warnings, jsondoc.Finding{Path: at, Message: "the plugin's folder in the repository", Kept: pathOnRepository})
	}
	npmPackage := str().Check(func(p string) string {
		if !npmNameRE.MatchString(p) && strings.Contains(p, "..") && !npmSchemeRE.MatchString(p) {
			return fmt.Sprintf("package %q must not contain \"..\"", jsondoc.Clip(p, 80))
		}
		return ""
	})
	object := jsondoc.Tagged(&jsondoc.Union{Tag: "source",
		Missing: `required: the source type ("url", "github", "git-subdir" or "npm")`,
		Cases: map[string]*jsondoc.Table{
			"url": kind("url", required("url", "url", str()), opt("ref", str()), opt("sha", sha),
				opt("path", str().Rule(differs))),
			"github": kind("github", required("repo", "github", str()), opt("ref", str()), opt("sha", sha),
				opt("path", str().Rule(differs))),
			"git-subdir": kind("git-subdir", required("url", "git-subdir", str()),
				required("path", "git-subdir", str().NonEmpty()), opt("ref", str()), opt("sha", sha)),
			"npm": kind("npm", required("package", "npm", npmPackage), opt("version", str()),
				opt("registry", jsondoc.URL())),
		},
		Unknown: func(w *jsondoc.Walk, at, typ string) {
			p := jsondoc.Join(at, "source")
			if typ == "unsupported" {
				w.Errorf(p, "\"unsupported\" is a placeholder Claude Code uses internally and cannot be written in a marketplace")
				return
			}
			hint := ""
			switch typ {
			case "local":
				hint = "; a local plugin is a path string such as \"./plugins/NAME\" (\"local\" is Codex's format)"
			case "git":
				hint = "; a git repository is {\"source\": \"url\", \"url\": …}"
			}
			w.Errorf(p, "unknown source type %q (known: \"url\", \"github\", \"git-subdir\", \"npm\")%s", jsondoc.Clip(typ, 40), hint)
		},
	})
	path := str().Rule(stringSource)
	return jsondoc.OneOf(`a "./path" or a source object`, path, object)
}

// stringSource: Claude Code takes a string source as a path inside the
// marketplace only when it starts with "./" ("." is the root). It does not
// apply metadata.pluginRoot, and a URL string is not a source. Reasonix
// reads a bare path under metadata.pluginRoot (SPEC §7), saying so.
func stringSource(w *jsondoc.Walk, at string, n *jsondoc.Node) {
	s := n.Str
	switch {
	case strings.Contains(s, ".."):
		w.Errorf(at, "path %q contains \"..\": plugin sources are relative to the marketplace root (the folder holding .claude-plugin/), not to marketplace.json, and must stay inside it", jsondoc.Clip(s, 80))
	case s == "." || strings.HasPrefix(s, "./"):
	case isExternal(s):
		w.Errorf(at, "%q is not a plugin source: a path string must start with \"./\"; a repository is an object such as {\"source\": \"url\", \"url\": \"https://github.com/OWNER/REPO\", \"sha\": \"<40-hex commit>\"}", jsondoc.Clip(s, 80))
	case s == "":
		w.Errorf(at, "must not be empty")
	default:
		w.Keep(at, "Reasonix reads it as a folder under metadata.pluginRoot (SPEC §7)", "path %q must start with \"./\" (Claude Code does not apply metadata.pluginRoot; Reasonix does, but write \"./…\" for both)", jsondoc.Clip(s, 80))
	}
}

// claudeTables are Claude's marketplace document and entry tables.
type tables struct{ top, entry *jsondoc.Table }

var claudeTables = sync.OnceValue(func() tables {
	entry := manifest.ClaudeEntry(sourceShape())
	owner := jsondoc.NewTable("owner", jsondoc.Row{Key: "name", Shape: str().NonEmpty(), Required: "required"},
		opt("email", str()), opt("url", str()))
	metadata := jsondoc.NewTable("metadata", opt("pluginRoot", str()), opt("version", str()), opt("description", str()))
	metadata.Unknown = jsondoc.Warn
	// Claude Code's validator refuses a renames map it cannot read, but its
	// installer reads the marketplace without it (measured with 2.1.197):
	// so does install, and validate says so.
	renames := jsondoc.Map(jsondoc.OneOf("a plugin name or null", str(), jsondoc.Nil()).Ignored(renamesIgnored)).Ignored(renamesIgnored)
	top := jsondoc.NewTable("a marketplace",
		opt("$schema", str()),
		jsondoc.Row{Key: "name", Shape: marketplaceName(), Required: `required: the marketplace's name (kebab-case, e.g. "my-marketplace")`},
		opt("version", str()), opt("description", str()),
		jsondoc.Row{Key: "owner", Shape: jsondoc.Obj(owner), Required: `required: who maintains the marketplace, as {"name": …, "email"?: …}`},
		jsondoc.Row{Key: "plugins", Shape: jsondoc.List(jsondoc.Obj(entry)).Describe("an array of plugin entries").Rule(pluginList),
			Required: "required: the array of plugin entries"},
		opt("forceRemoveDeletedPlugins", jsondoc.Boolean()),
		opt("metadata", jsondoc.Obj(metadata)),
		opt("allowCrossMarketplaceDependenciesOn", jsondoc.StrList()),
		opt("renames", renames))
	top.Unknown = func(w *jsondoc.Walk, at, key string) {
		if key == "pluginRoot" {
			w.Warnf(key, "unknown field %q; Claude Code and Reasonix ignore it (Claude Code reads metadata.pluginRoot)", key)
			return
		}
		jsondoc.Warn(w, at, key)
	}
	top.Check = renamesResolve
	top.Advice = func(w *jsondoc.Walk, at string, n *jsondoc.Node) {
		if n.GetStr("description") == "" && n.Get("metadata").GetStr("description") == "" {
			w.Warnf("description", "no marketplace description: say what this marketplace offers")
		}
	}
	return tables{top, entry}
})

// codexTables are Codex's marketplace document and entry tables, as its
// real marketplaces spell them (corpus codex-marketplace.json files).
// Codex has no validator: its rows carry roles, and the parser's own
// reading is the verdict.
var codexTables = sync.OnceValue(func() tables {
	row := func(key string) jsondoc.Row { return jsondoc.Row{Key: key} }
	policy := jsondoc.NewTable("policy", row("installation"))
	local := jsondoc.NewTable("local source", row("source"), row("path"))
	local.Unknown = jsondoc.Warn
	source := jsondoc.OneOf("a path or a source object", jsondoc.Tagged(&jsondoc.Union{Tag: "source",
		Cases: map[string]*jsondoc.Table{"local": local}}), jsondoc.Any())
	entry := jsondoc.NewTable("a Codex marketplace entry", row("name"), row("description"), row("version"),
		opt("source", source), opt("policy", jsondoc.Obj(policy).Lenient()), row("category"), row("interface"))
	entry.Unknown = jsondoc.Warn
	top := jsondoc.NewTable("a Codex marketplace", row("$schema"), row("name"), row("interface"),
		opt("plugins", jsondoc.List(jsondoc.Obj(entry)).Rule(duplicateNames)))
	top.Unknown = jsondoc.Warn
	return tables{top, entry}
})

// pluginList checks the entries together: names unique; and says when
// there is none.
func pluginList(w *jsondoc.Walk, at string, list *jsondoc.Node) {
	if len(list.Items) == 0 && w.Mode == jsondoc.Validate {
		w.Warnf(at, "the marketplace lists no plugins")
	}
	duplicateNames(w, at, list)
}

// duplicateNames: Claude refuses a name used twice; Reasonix also refuses
// two names that differ only in case (they collide as folder names on
// case-insensitive file systems).
func duplicateNames(w *jsondoc.Walk, at string, list *jsondoc.Node) {
	exact, folded := map[string]int{}, map[string][]int{}
	names := make([]string, len(list.Items))
	for i := range list.Items {
		if n := list.Items[i].Get("name"); n != nil && n.Kind == jsondoc.String && n.Str != "" {
			names[i] = n.Str
			exact[n.Str]++
			k := strings.ToLower(n.Str)
			folded[k] = append(folded[k], i)
		}
	}
	for i, name := range names {
		if name == "" {
			continue
		}
		idx := folded[strings.ToLower(name)]
		if len(idx) < 2 {
			continue
		}
		others := make([]string, 0, len(idx)-1)
		for _, j := range idx {
			if j == i {
				continue
			}
			if len(others) == 5 {
				others = append(others, fmt.Sprintf("and %d more", len(idx)-1-5))
				break
			}
			others = append(others, fmt.Sprintf("plugins[%d] %q", j, names[j]))
		}
		p := jsondoc.Join(jsondoc.Index(at, i), "name")
		msg := fmt.Sprintf("duplicate name: also used by %s (plugin names must be unique, compared case-insensitively)", strings.Join(others, ", "))
		if exact[name] > 1 {
			w.Errorf(p, "%s", msg)
		} else {
			w.Refuse(p, "Reasonix refuses both: they collide as folder names on case-insensitive file systems", "%s", msg)
		}
	}
}

// renamesIgnored is what install (and Claude Code's installer) does with a
// renames map, or a chain of it, that validate refuses.
const renamesIgnored = "the marketplace installs; update does not follow a rename it cannot read"

// renamesResolve: each renames chain must end at a listed plugin or at
// null, followed as update follows it (Renames.Follow).
func renamesResolve(w *jsondoc.Walk, at string, doc *jsondoc.Node) {
	renames := renamesOf(doc.Get("renames"))
	if renames == nil {
		return // absent, or a shape the table reported
	}
	names := map[string]bool{}
	if list := doc.Get("plugins"); list != nil {
		for i := range list.Items {
			if n := list.Items[i].Get("name"); n != nil && n.Kind == jsondoc.String {
				names[n.Str] = true
			}
		}
	}
	listed := func(n string) bool { return names[n] }
	for _, f := range doc.Get("renames").Fields {
		p := jsondoc.Join("renames", f.Key)
		switch r := renames.Follow(f.Key, listed); r.Kind {
		case RenameUnresolved:
			w.Keep(p, renamesIgnored, "the rename chain does not resolve (%s): each target must be a name in plugins, a key of renames, or null", r.Reason)
		case Renamed:
			if !manifest.PluginNameRE.MatchString(r.To) {
				w.Keep(p, renamesIgnored, "target %q is not a valid plugin name", r.To)
			}
		}
	}
}
