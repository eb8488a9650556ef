package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode"
)

// checkKeys walks a JSON document that encoding/json has already accepted
// into a value of type t, and refuses what that decoder lets through
// silently:
//   - a key given twice in one object, at any depth (the decoder keeps the
//     last one);
//   - two keys of one object that differ only in case (Unicode simple
//     folding, as the decoder matches them);
//   - a key that names a field of t only when case is ignored ("SOURCE",
//     "planid", "ſource" with a long s): the decoder would fill the field.
//
// Unknown keys are left to the decoder's DisallowUnknownFields, which has
// already refused them by the time this runs.
func checkKeys(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return walkValue(dec, t, "")
}

func walkValue(dec *json.Decoder, t reflect.Type, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil // a scalar
	}
	t = deref(t)
	switch d {
	case '{':
		return walkObject(dec, t, path)
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkValue(dec, elem, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ']'
		return err
	}
	return fmt.Errorf("unexpected %q", d)
}

func walkObject(dec *json.Decoder, t reflect.Type, path string) error {
	var fields map[string]reflect.Type // exact JSON names of a struct's fields
	var values reflect.Type            // a map's value type
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = jsonFields(t)
		case reflect.Map:
			values = t.Elem()
		}
	}
	seen := map[string]string{} // folded key → key as given
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		where := path + "." + key
		if path == "" {
			where = key
		}
		folded := foldKey(key)
		if prev, dup := seen[folded]; dup {
			if prev == key {
				return fmt.Errorf("duplicate key %q", where)
			}
			return fmt.Errorf("keys %q and %q differ only in case", joinPath(path, prev), where)
		}
		seen[folded] = key
		next := values
		if fields != nil {
			ft, exact := fields[key]
			if !exact {
				for name := range fields {
					if foldKey(name) == folded {
						return fmt.Errorf("key %q is not a field; did you mean %q? (keys are case-sensitive)", where, joinPath(path, name))
					}
				}
			}
			next = ft
		}
		if err := walkValue(dec, next, where); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// jsonFields maps the JSON names of t's fields, as encoding/json sees them
// (tags, embedded structs promoted, "-" and unexported fields left out), to
// their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			if et := deref(f.Type); et != nil && et.Kind() == reflect.Struct {
				for k, v := range jsonFields(et) {
					if _, shadowed := out[k]; !shadowed {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// foldKey maps s to one representative of its Unicode simple case-folding
// class, so foldKey(a) == foldKey(b) exactly when strings.EqualFold(a, b):
// the equivalence encoding/json uses to match keys to fields.
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		b.WriteRune(min)
	}
	return b.String()
}
