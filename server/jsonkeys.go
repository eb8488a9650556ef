package server

import (
	"cmp"
	"fmt"
	"reflect"
	"strings"

	"reasonix.io/plugind/internal/jsondoc"
)

// checkKeys reads a JSON document, which encoding/json then decodes into a
// value of type t, and refuses what that decoder lets through silently:
//   - a key given twice in one object, at any depth (the decoder keeps the
//     last one);
//   - two keys of one object that differ only in case (Unicode simple
//     folding, as the decoder matches them);
//   - a key that names a field of t only when case is ignored ("SOURCE",
//     "planid", "ſource" with a long s): the decoder would fill the field.
//
// The repeated keys are jsondoc.Parse's findings. Unknown keys are left to
// the decoder's DisallowUnknownFields, and a document that is not JSON to
// the decoder, which says why.
func checkKeys(data []byte, t reflect.Type) error {
	root, dups, err := jsondoc.Parse(data)
	if err != nil {
		return nil
	}
	if len(dups) > 0 {
		d := dups[0]
		if d.Folded {
			return fmt.Errorf("keys %q and %q differ only in case", jsondoc.Join(d.Object, d.Other), jsondoc.Join(d.Object, d.Key))
		}
		return fmt.Errorf("duplicate key %q", jsondoc.Join(d.Object, d.Key))
	}
	return checkFields(root, t, "")
}

// checkFields refuses, in n read into a value of type t, a key that names
// a struct field only when case is ignored.
func checkFields(n *jsondoc.Node, t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == nil:
	case n.Kind == jsondoc.Array && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for i := range n.Items {
			if err := checkFields(&n.Items[i], t.Elem(), jsondoc.Index(path, i)); err != nil {
				return err
			}
		}
	case n.Kind == jsondoc.Object && t.Kind() == reflect.Map:
		for i, f := range n.Fields {
			if err := checkFields(&n.Fields[i].Val, t.Elem(), jsondoc.Join(path, f.Key)); err != nil {
				return err
			}
		}
	case n.Kind == jsondoc.Object && t.Kind() == reflect.Struct:
		fields := jsonFields(t)
		for i, f := range n.Fields {
			ft, exact := fields[f.Key]
			if !exact {
				for name := range fields {
					if strings.EqualFold(name, f.Key) {
						return fmt.Errorf("key %q is not a field; did you mean %q? (keys are case-sensitive)", jsondoc.Join(path, f.Key), jsondoc.Join(path, name))
					}
				}
			}
			if err := checkFields(&n.Fields[i].Val, ft, jsondoc.Join(path, f.Key)); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields maps the JSON names of t's fields, as encoding/json sees them
// (tags, embedded structs promoted, "-" and unexported fields left out), to
// their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		et := f.Type
		if et.Kind() == reflect.Pointer {
			et = et.Elem()
		}
		if f.Anonymous && name == "" && et.Kind() == reflect.Struct {
			for k, v := range jsonFields(et) {
				if _, shadowed := out[k]; !shadowed {
					out[k] = v
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		out[cmp.Or(name, f.Name)] = f.Type
	}
	return out
}
