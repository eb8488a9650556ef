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
// path), null read as absent. Only checkNative walks it: its rows carry no
// roles (the native parser reads nativeManifest, not the table).
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
		return append(rows, opt("skills", paths), opt("agents", paths), opt("commands", paths),
			opt("prompts", paths), opt("themes", paths), opt("hooks", hooks), opt("mcpServers", mcp))
	}
	dep := strict("dependency", opt("namespace", str()), opt("kind", str()), opt("id", str()), opt("version", str()))
	tool := strict("tool", opt("name", str()), opt("description", str()), opt("inputSchema", jsondoc.Any()), opt("readOnly", flag()))
	runtime := strict("runtime", opt("command", str()), opt("args", strs()), opt("env", strMap()),
		opt("required", flag()), opt("priority", jsondoc.Num()), opt("intercepts", strs()), opt("replaces", strs()),
		opt("capabilities", strs()), opt("tools", jsondoc.List(tool).Describe("a list")))
	t := jsondoc.NewTable(NativeManifest, resources(opt("apiVersion", str()), opt("name", str()),
		opt("version", str()), opt("description", str()),
		opt("requires", jsondoc.List(dep).Describe("a list")), opt("provides", jsondoc.List(dep).Describe("a list")),
		opt("contributes", strict("contributes", resources()...)), opt("runtime", runtime))...)
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
