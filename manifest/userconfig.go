package manifest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"reasonix.io/plugind/internal/jsondoc"
)

// userConfig: the options a Claude plugin asks its user for (plugin.json
// "userConfig", or its marketplace entry's). Claude Code prompts for them,
// keeps non-sensitive values in settings.json and sensitive ones in its
// secure storage, and substitutes ${user_config.KEY} in MCP and LSP server
// configuration and hook commands when it loads the plugin; it never
// rewrites the plugin's own files. This file reads the options and checks
// values against them; uservalue.go says what a value is, userexpand.go
// how placeholders expand. The installer decides where values come from
// and where they are kept.

// Option types, as Claude Code's schema names them.
const (
	OptionString    = "string"
	OptionNumber    = "number"
	OptionBoolean   = "boolean"
	OptionDirectory = "directory"
	OptionFile      = "file"
)

// Option is one userConfig option a plugin declares.
type Option struct {
	Key         string `json:"key"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Type        string `json:"type"`
	Required    bool   `json:"required,omitempty"`
	// Sensitive values are masked when typed and kept only in the home's
	// config/ folder: never in the registry, a plan or anything shown.
	Sensitive bool `json:"sensitive,omitempty"`
	// Multiple lets a string option hold a list of strings.
	Multiple bool     `json:"multiple,omitempty"`
	Default  *Value   `json:"default,omitempty"`
	Min      *float64 `json:"min,omitempty"`
	Max      *float64 `json:"max,omitempty"`
}

// readOptions reads the userConfig objects a package declares, in
// declaration order (the plugin's own, then its strict marketplace
// entry's: the first declaration of a key wins). The documents were
// checked against Claude's schema before they got here, so a member of the
// wrong shape is only left out.
func readOptions(decls []declaration) []Option {
	var out []Option
	seen := map[string]bool{}
	for _, decl := range decls {
		for _, f := range decl.n.Fields { // an object: the schema says so
			if o, ok := readOption(f.Key, &f.Val); ok && !seen[f.Key] {
				seen[f.Key] = true
				out = append(out, o)
			}
		}
	}
	return out
}

// readOption reads one option as encoding/json reads an Option: its
// fields are userConfig's own keys, whose types the schema has checked.
func readOption(key string, n *node) (Option, bool) {
	var o Option
	if json.Unmarshal(n.Compact(), &o) != nil || !optionKey.MatchString(key) ||
		!slices.Contains([]string{OptionString, OptionNumber, OptionBoolean, OptionDirectory, OptionFile}, o.Type) {
		return Option{}, false
	}
	o.Key = key
	return o, true
}

// IsOptionKey reports whether k can name an option: an identifier, as
// Claude Code requires (it becomes CLAUDE_PLUGIN_OPTION_<KEY>).
func IsOptionKey(k string) bool { return optionKey.MatchString(k) }

// Label names an option in messages: its key, and its title when that
// says something more.
func (o Option) Label() string {
	if o.Title == "" || o.Title == o.Key {
		return "option " + o.Key
	}
	return fmt.Sprintf("option %s (%q)", o.Key, o.Title)
}

// Parse reads a value typed for the option (a --config value, a form field,
// a prompt) as Claude Code's --config does: the first line, trimmed; a
// number for a number option, true/false, 1/0, yes/no or on/off for a
// boolean one; anything else as text. A directory or file option is not
// checked on disk (Claude does not check it either: the path may be meant
// for the machine the server runs on). Errors name the option and never
// quote a sensitive value.
func (o Option) Parse(text string) (Value, error) {
	line, _, _ := strings.Cut(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	line, _, _ = strings.Cut(line, "\r")
	line = strings.TrimSpace(line)
	if line == "" {
		return Value{}, fmt.Errorf("%s: the value is empty (leave the option out to keep it unset)", o.Label())
	}
	var v Value
	switch o.Type {
	case OptionNumber:
		f, ok := parseNumber(line)
		if !ok {
			return Value{}, fmt.Errorf("%s: %s is not a number", o.Label(), o.quote(line))
		}
		v = NumberValue(f)
	case OptionBoolean:
		switch strings.ToLower(line) {
		case "1", "true", "yes", "on":
			v = BoolValue(true)
		case "0", "false", "no", "off":
			v = BoolValue(false)
		default:
			return Value{}, fmt.Errorf("%s: %s is not a boolean (use true/false, 1/0, yes/no, on/off)", o.Label(), o.quote(line))
		}
	default:
		v = StringValue(line)
	}
	if err := o.Check(v); err != nil {
		return Value{}, err
	}
	return v, nil
}

// Check says whether v fits the option: its type (a list only for a
// string option with multiple), and a number's min and max.
func (o Option) Check(v Value) error {
	switch {
	case o.Type == OptionNumber && v.kind != valueNumber:
		return fmt.Errorf("%s must be a number, not %s", o.Label(), v.kindName())
	case o.Type == OptionBoolean && v.kind != valueBool:
		return fmt.Errorf("%s must be a boolean, not %s", o.Label(), v.kindName())
	case o.Type == OptionString && v.kind == valueList && !o.Multiple:
		return fmt.Errorf("%s must be a string, not a list (it does not allow multiple values)", o.Label())
	case (o.Type == OptionString || o.Type == OptionDirectory || o.Type == OptionFile) && v.kind != valueString && v.kind != valueList:
		return fmt.Errorf("%s must be a string, not %s", o.Label(), v.kindName())
	case (o.Type == OptionDirectory || o.Type == OptionFile) && v.kind == valueList:
		return fmt.Errorf("%s must be a path, not a list", o.Label())
	}
	if v.kind == valueNumber {
		if o.Min != nil && v.num < *o.Min {
			return fmt.Errorf("%s must be at least %s", o.Label(), formatNumber(*o.Min))
		}
		if o.Max != nil && v.num > *o.Max {
			return fmt.Errorf("%s must be at most %s", o.Label(), formatNumber(*o.Max))
		}
	}
	return nil
}

// quote shows a value the user typed in an error: quoted and cut short,
// or not at all for a sensitive option.
func (o Option) quote(s string) string {
	if o.Sensitive {
		return "the value"
	}
	return strconv.Quote(jsondoc.Clip(s, 60))
}

// FindOption returns the option named key.
func FindOption(opts []Option, key string) (Option, bool) {
	if i := slices.IndexFunc(opts, func(o Option) bool { return o.Key == key }); i >= 0 {
		return opts[i], true
	}
	return Option{}, false
}
