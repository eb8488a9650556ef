package manifest

import (
	"fmt"
	"strings"
)

// shape is a strict JSON schema: objects list every allowed field, so an
// unknown one anywhere is caught with its path.
type shape struct {
	kind   shapeKind
	fields map[string]*shape // kObject
	elem   *shape            // kArray elements, kMap values
	what   string            // how a type error describes the expected value
}

type shapeKind int

const (
	kAny shapeKind = iota // free-form (e.g. a JSON Schema)
	kString
	kBool
	kNumber
	kObject // fixed fields
	kMap    // free keys, values of elem
	kArray
)

func str() *shape                            { return &shape{kind: kString, what: "a string"} }
func boolean() *shape                        { return &shape{kind: kBool, what: "true or false"} }
func number() *shape                         { return &shape{kind: kNumber, what: "a number"} }
func anyJSON() *shape                        { return &shape{kind: kAny} }
func object(f map[string]*shape) *shape      { return &shape{kind: kObject, fields: f, what: "an object"} }
func mapOf(v *shape) *shape                  { return &shape{kind: kMap, elem: v, what: "an object"} }
func arrayOf(e *shape) *shape                { return &shape{kind: kArray, elem: e, what: "a list"} }
func strList() *shape                        { s := arrayOf(str()); s.what = "a list of strings"; return s }
func strMap() *shape                         { s := mapOf(str()); s.what = "an object of strings"; return s }
func (s *shape) describe(what string) *shape { s.what = what; return s }

// validate checks n against s; the first problem in document order is
// returned with its JSON path.
func validate(n *node, s *shape, at string) error {
	if n.kind == kindNull || s.kind == kAny {
		return nil
	}
	mismatch := func() error {
		return fmt.Errorf("field %q must be %s, not %s", at, s.what, n.kind)
	}
	switch s.kind {
	case kString:
		if n.kind != kindString {
			return mismatch()
		}
	case kBool:
		if n.kind != kindBool {
			return mismatch()
		}
	case kNumber:
		if n.kind != kindNumber {
			return mismatch()
		}
	case kArray:
		if n.kind != kindArray {
			return mismatch()
		}
		for i, it := range n.items {
			if err := validate(it, s.elem, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case kMap:
		if n.kind != kindObject {
			return mismatch()
		}
		for i, k := range n.keys {
			if err := validate(n.vals[i], s.elem, join(at, k)); err != nil {
				return err
			}
		}
	case kObject:
		if n.kind != kindObject {
			return mismatch()
		}
		for i, k := range n.keys {
			f, ok := s.fields[k]
			if !ok {
				return fmt.Errorf("unknown field %q", join(at, k))
			}
			if err := validate(n.vals[i], f, join(at, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

func join(at, key string) string {
	if strings.ContainsAny(key, ".[]\"") {
		key = fmt.Sprintf("[%q]", key)
		return at + key
	}
	if at == "" {
		return key
	}
	return at + "." + key
}

// nativeSchema is reasonix-plugin.json v2 as the product docs define it.
func nativeSchema() *shape {
	paths := strList().describe("a list of paths")
	hook := object(map[string]*shape{
		"command":      str(),
		"args":         strList(),
		"shell":        str(),
		"shellCommand": boolean(),
		"description":  str(),
		"contextFile":  str(),
		"matcher":      str(),
		"timeout":      number(),
		"env":          strMap(),
		"async":        boolean(),
	})
	hooks := mapOf(arrayOf(hook).describe("a list of hooks")).describe("an object of events")
	mcp := mapOf(object(map[string]*shape{
		"type":      str(),
		"command":   str(),
		"args":      strList(),
		"env":       strMap(),
		"cwd":       str(),
		"url":       str(),
		"headers":   strMap(),
		"autoStart": boolean(),
	})).describe("an object of servers")
	resources := func(f map[string]*shape) map[string]*shape {
		f["skills"] = paths
		f["agents"] = paths
		f["commands"] = paths
		f["prompts"] = paths
		f["themes"] = paths
		f["hooks"] = hooks
		f["mcpServers"] = mcp
		return f
	}
	dep := object(map[string]*shape{
		"namespace": str(),
		"kind":      str(),
		"id":        str(),
		"version":   str(),
	})
	runtime := object(map[string]*shape{
		"command":      str(),
		"args":         strList(),
		"env":          strMap(),
		"required":     boolean(),
		"priority":     number(),
		"intercepts":   strList(),
		"replaces":     strList(),
		"capabilities": strList(),
		"tools": arrayOf(object(map[string]*shape{
			"name":        str(),
			"description": str(),
			"inputSchema": anyJSON(),
			"readOnly":    boolean(),
		})),
	})
	return object(resources(map[string]*shape{
		"apiVersion":  str(),
		"name":        str(),
		"version":     str(),
		"description": str(),
		"requires":    arrayOf(dep),
		"provides":    arrayOf(dep),
		"contributes": object(resources(map[string]*shape{})),
		"runtime":     runtime,
	}))
}
