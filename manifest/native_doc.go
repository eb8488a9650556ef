package manifest

import (
	"errors"
	"strconv"
	"strings"
	"sync"

	"reasonix.io/plugind/internal/jsondoc"
)

// Native is the field table of reasonix-plugin.json v2 as the product docs
// define it: strict (an unknown field at any depth is an error naming its
// path), null read as absent.
var Native = sync.OnceValue(func() *jsondoc.Table {
	strict := func(name string, rows ...jsondoc.Row) *jsondoc.Shape {
		t := jsondoc.NewTable(name, rows...)
		t.Unknown = unknownNativeField
		return jsondoc.Obj(t)
	}
	paths := jsondoc.StrList().Describe("a list of paths")
	hook := strict("hook", opt("command", str()), opt("args", strs()), opt("shell", str()),
		opt("shellCommand", flag()), opt("description", str()), opt("contextFile", str()),
		opt("matcher", str()), opt("timeout", jsondoc.Num()), opt("env", strMap()), opt("async", flag()))
	hooks := jsondoc.Map(jsondoc.List(hook).Describe("a list of hooks")).Describe("an object of events")
	mcp := jsondoc.Map(strict("MCP server", opt("type", str()), opt("command", str()), opt("args", strs()),
		opt("env", strMap()), opt("cwd", str()), opt("url", str()), opt("headers", strMap()),
		opt("autoStart", flag()))).Describe("an object of servers")
	resources := func(rows ...jsondoc.Row) []jsondoc.Row {
		const C = jsondoc.Component
		return append(rows,
			jsondoc.Row{Key: "skills", Shape: paths, Role: C}, jsondoc.Row{Key: "agents", Shape: paths, Role: C},
			jsondoc.Row{Key: "commands", Shape: paths, Role: C}, jsondoc.Row{Key: "prompts", Shape: paths, Role: C},
			jsondoc.Row{Key: "themes", Shape: paths, Role: C}, jsondoc.Row{Key: "hooks", Shape: hooks, Role: C},
			jsondoc.Row{Key: "mcpServers", Shape: mcp, Role: C})
	}
	dep := strict("dependency", opt("namespace", str()), opt("kind", str()), opt("id", str()), opt("version", str()))
	tool := strict("tool", opt("name", str()), opt("description", str()), opt("inputSchema", jsondoc.Any()), opt("readOnly", flag()))
	runtime := strict("runtime", opt("command", str()), opt("args", strs()), opt("env", strMap()),
		opt("required", flag()), opt("priority", jsondoc.Num()), opt("intercepts", strs()), opt("replaces", strs()),
		opt("capabilities", strs()), opt("tools", jsondoc.List(tool).Describe("a list")))
	const M = jsondoc.Meta
	t := jsondoc.NewTable(NativeManifest, resources(
		jsondoc.Row{Key: "apiVersion", Shape: str(), Role: M}, jsondoc.Row{Key: "name", Shape: str(), Role: M},
		jsondoc.Row{Key: "version", Shape: str(), Role: M}, jsondoc.Row{Key: "description", Shape: str(), Role: M},
		jsondoc.Row{Key: "requires", Shape: jsondoc.List(dep).Describe("a list"), Role: M},
		jsondoc.Row{Key: "provides", Shape: jsondoc.List(dep).Describe("a list"), Role: M},
		jsondoc.Row{Key: "contributes", Shape: strict("contributes", resources()...), Role: jsondoc.Component},
		jsondoc.Row{Key: "runtime", Shape: runtime, Role: jsondoc.Component},
	)...)
	t.Unknown = unknownNativeField
	return t
})

// unknownNativeField is an error naming the field's whole path: a typo
// must fail loudly rather than silently disable a capability.
func unknownNativeField(w *jsondoc.Walk, at, key string) {
	w.Errorf(jsondoc.Join(at, key), "unknown field %q", jsondoc.Join(at, key))
}

// checkNative walks a native manifest; the first error, in document order,
// is what it refuses.
func checkNative(doc *node) error {
	var r Report
	w := &jsondoc.Walk{Report: &r, Mode: jsondoc.Install, NullOK: true}
	w.Document(Native(), doc)
	if r.OK() {
		return nil
	}
	f := r.Errors[0]
	if strings.HasPrefix(f.Message, "unknown field") {
		return errors.New(f.Message)
	}
	return errors.New("field " + strconv.Quote(f.Path) + " " + f.Message)
}
