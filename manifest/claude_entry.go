package manifest

import (
	"fmt"
	"regexp"
	"strings"

	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/internal/lazyregexp"
)

// claudeEntryRows are a Claude marketplace entry's own fields, beyond the
// plugin manifest's (Claude Code's entry schema is its plugin manifest
// schema, every field optional, extended by these). source is the shape of
// its source (the marketplace package's; nil when only the keys are
// wanted).
func claudeEntryRows(source *jsondoc.Shape) []jsondoc.Row {
	const E = jsondoc.EntryOnly
	return []jsondoc.Row{
		{Key: "name", Shape: pluginName(), Role: jsondoc.Meta, Required: "required"},
		{Key: "source", Shape: source, Role: E, Required: "required: where the plugin is (\"./path\" or a source object)"},
		{Key: "category", Shape: str(), Role: E},
		{Key: "tags", Shape: strs(), Role: E},
		{Key: "strict", Shape: flag(), Role: E},
		{Key: "relevance", Shape: relevance(), Role: E},
	}
}

// ClaudeEntry is the field table of a Claude marketplace entry: the plugin
// manifest's rows and the entry's own, source given the shape source.
func ClaudeEntry(source *jsondoc.Shape) *jsondoc.Table {
	t := ClaudePlugin().With("a marketplace entry", claudeEntryRows(source)...)
	t.Unknown, t.Check, t.Advice = jsondoc.Warn, nil, nil
	return t
}

// EntryFields is an entry's manifest fields, those that say what its
// plugin is as its plugin.json would (a plugin manifest row, name aside,
// which is the entry's own), as a JSON object in the entry's order; nil
// when it has none.
func EntryFields(entry *node) []byte {
	out := node{Kind: jsondoc.Object, Fields: make([]jsondoc.Field, 0, len(entry.Fields))}
	for _, f := range entry.Fields {
		if r, ok := ClaudePlugin().Row(f.Key); ok && f.Key != "name" && r.Role != jsondoc.EntryOnly {
			out.Fields = append(out.Fields, f)
		}
	}
	if len(out.Fields) == 0 {
		return nil
	}
	return out.Compact()
}

var hostnameRE = lazyregexp.New(`^[a-z0-9.-]+$`)

// relevance is Claude Code's discovery hint: anything but an object is
// ignored (a warning); an object must be well formed.
func relevance() *jsondoc.Shape {
	bounded := func(max int, more func(string) string) *jsondoc.Shape {
		return str().Check(func(s string) string {
			if s == "" || len(s) > max {
				return fmt.Sprintf("must be 1 to %d characters", max)
			}
			if more != nil {
				return more(s)
			}
			return ""
		})
	}
	forwardSlashes := func(s string) string {
		if strings.Contains(s, `\`) {
			return fmt.Sprintf("%q must use forward slashes", jsondoc.Clip(s, 80))
		}
		return ""
	}
	regex := func(s string) string {
		if _, err := regexp.Compile(s); err != nil {
			return fmt.Sprintf("must be a valid regular expression: %v", err)
		}
		return ""
	}
	list := func(max int, item *jsondoc.Shape) *jsondoc.Shape {
		return jsondoc.List(item).Describe("an array of strings").MaxItems(max)
	}
	dep := object("manifest dependency", req("file", bounded(256, regex)), req("pattern", bounded(256, regex)))
	deps := jsondoc.List(dep).Describe(`an array of {"file", "pattern"} objects`).Rule(func(w *jsondoc.Walk, at string, n *node) {
		if len(n.Items) == 0 || len(n.Items) > 10 {
			w.Errorf(at, "must hold 1 to 10 entries")
		}
	})
	signals := jsondoc.NewTable("signals",
		opt("cli", list(10, bounded(64, nil))),
		opt("hosts", list(20, bounded(128, func(s string) string {
			if !hostnameRE.MatchString(s) {
				return fmt.Sprintf("%q must be a lowercase bare hostname (no scheme, port or path)", jsondoc.Clip(s, 80))
			}
			return ""
		}))),
		opt("filesRead", list(10, bounded(256, forwardSlashes))),
		opt("manifestDeps", deps),
		opt("cwd", list(10, bounded(256, forwardSlashes))))
	signals.Unknown = func(w *jsondoc.Walk, at, key string) {
		w.Warnf(jsondoc.Join(at, key), "unknown signal %q; ignored", key)
	}
	signals.Check = func(w *jsondoc.Walk, at string, n *node) {
		declared := 0
		for _, k := range signals.Keys() {
			if v := n.Get(k); v != nil && v.Kind == jsondoc.Array {
				declared += len(v.Items)
			}
		}
		if declared == 0 {
			w.Errorf(at, "must declare at least one signal (cli, hosts, filesRead, manifestDeps or cwd)")
		}
	}
	t := jsondoc.NewTable("relevance", opt("topic", bounded(64, nil)), opt("signals", jsondoc.Obj(signals)))
	t.Unknown = func(w *jsondoc.Walk, at, key string) {
		w.Warnf(jsondoc.Join(at, key), "unknown field %q; ignored", key)
	}
	return jsondoc.Obj(t).Describe(`an object with "topic" and "signals"`).Lenient()
}
