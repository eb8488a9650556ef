package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"reasonix.io/plugind"
)

// userConfig: the options a Claude plugin asks its user for (plugin.json
// "userConfig", or its marketplace entry's). Claude Code prompts for them,
// keeps non-sensitive values in settings.json and sensitive ones in its
// secure storage, and substitutes ${user_config.KEY} in MCP and LSP server
// configuration and hook commands when it loads the plugin; it never
// rewrites the plugin's own files. This file reads the options and says
// what a value is, how text becomes one, and how placeholders expand; the
// installer decides where values come from and where they are kept.

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

// readOptions reads a manifest's userConfig object in declaration order
// (a list of them when a strict marketplace entry adds its own to the
// plugin's: the first declaration of a key wins). The document was checked
// against Claude's schema before it got here (refuseInvalidClaude), so a
// member of the wrong shape is only left out.
func readOptions(n *node) []Option {
	if n == nil {
		return nil
	}
	var out []Option
	seen := map[string]bool{}
	for _, obj := range items(n) {
		if obj.kind != kindObject {
			continue
		}
		for i, key := range obj.keys {
			if o, ok := readOption(key, obj.vals[i]); ok && !seen[key] {
				seen[key] = true
				out = append(out, o)
			}
		}
	}
	return out
}

func readOption(key string, n *node) (Option, bool) {
	if n.kind != kindObject || !optionKey.MatchString(key) {
		return Option{}, false
	}
	str := func(k string) string {
		if v := n.get(k); v != nil && v.kind == kindString {
			return v.str
		}
		return ""
	}
	flag := func(k string) bool {
		v := n.get(k)
		return v != nil && v.kind == kindBool && v.b
	}
	num := func(k string) *float64 {
		if v := n.get(k); v != nil && v.kind == kindNumber {
			if f, err := strconv.ParseFloat(v.str, 64); err == nil {
				return &f
			}
		}
		return nil
	}
	o := Option{Key: key, Title: str("title"), Description: str("description"), Type: str("type"),
		Required: flag("required"), Sensitive: flag("sensitive"), Multiple: flag("multiple"), Min: num("min"), Max: num("max")}
	switch o.Type {
	case OptionString, OptionNumber, OptionBoolean, OptionDirectory, OptionFile:
	default:
		return Option{}, false
	}
	if d := n.get("default"); d != nil {
		if v, err := valueOf(d); err == nil {
			o.Default = &v
		}
	}
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
		b, ok := parseBool(line)
		if !ok {
			return Value{}, fmt.Errorf("%s: %s is not a boolean (use true/false, 1/0, yes/no, on/off)", o.Label(), o.quote(line))
		}
		v = BoolValue(b)
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
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return strconv.Quote(s)
}

// parseNumber reads a number as JavaScript's Number() does, as Claude
// Code's --config does: decimal with an optional fraction and exponent, or
// an unsigned 0x, 0o or 0b integer. Infinity is refused: no JSON holds it.
func parseNumber(s string) (float64, bool) {
	if m := radixNumber.FindStringSubmatch(s); m != nil {
		base := map[byte]int{'x': 16, 'o': 8, 'b': 2}[m[1][1]|0x20]
		n, err := strconv.ParseUint(m[2], base, 64)
		return float64(n), err == nil
	}
	if !decimalNumber.MatchString(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsInf(f, 0)
}

var (
	radixNumber   = plugind.LazyRegexp(`^(0[xXoObB])([0-9A-Fa-f]+)$`)
	decimalNumber = plugind.LazyRegexp(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)
)

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true, true
	case "0", "false", "no", "off":
		return false, true
	}
	return false, false
}

// FindOption returns the option named key.
func FindOption(opts []Option, key string) (Option, bool) {
	for _, o := range opts {
		if o.Key == key {
			return o, true
		}
	}
	return Option{}, false
}

// OptionKeys lists the keys of opts, for "known keys" hints.
func OptionKeys(opts []Option) []string {
	keys := make([]string, len(opts))
	for i, o := range opts {
		keys[i] = o.Key
	}
	return keys
}

// Value is a userConfig value: a string, a number, a boolean, or a list of
// strings (a string option with multiple).
type Value struct {
	kind valueKind
	str  string
	num  float64
	b    bool
	list []string
}

type valueKind int

const (
	valueNone valueKind = iota
	valueString
	valueNumber
	valueBool
	valueList
)

// StringValue, NumberValue, BoolValue and ListValue make values.
func StringValue(s string) Value  { return Value{kind: valueString, str: s} }
func NumberValue(f float64) Value { return Value{kind: valueNumber, num: f} }
func BoolValue(b bool) Value      { return Value{kind: valueBool, b: b} }
func ListValue(items []string) Value {
	return Value{kind: valueList, list: append([]string{}, items...)}
}

// IsZero reports a value that was never set.
func (v Value) IsZero() bool { return v.kind == valueNone }

// Text is the value as it is substituted for ${user_config.KEY}: what
// JavaScript's String() makes of it, as in Claude Code (a list joined
// with commas).
func (v Value) Text() string {
	switch v.kind {
	case valueString:
		return v.str
	case valueNumber:
		return formatNumber(v.num)
	case valueBool:
		return strconv.FormatBool(v.b)
	case valueList:
		return strings.Join(v.list, ",")
	}
	return ""
}

// Equal reports whether two values are the same.
func (v Value) Equal(w Value) bool {
	if v.kind != w.kind {
		return false
	}
	switch v.kind {
	case valueString:
		return v.str == w.str
	case valueNumber:
		return v.num == w.num
	case valueBool:
		return v.b == w.b
	case valueList:
		return slices.Equal(v.list, w.list)
	}
	return true
}

func (v Value) kindName() string {
	return [...]string{"nothing", "a string", "a number", "a boolean", "a list"}[v.kind]
}

// formatNumber writes a number as JavaScript's String() does for the
// values people type: integers without a fraction, no exponent below 1e21.
func formatNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// Go writes e+07 / e-07; JavaScript e+7 / e-7.
		mant, exp, _ := strings.Cut(s, "e")
		sign, digits := exp[:1], strings.TrimLeft(exp[1:], "0")
		return mant + "e" + sign + digits
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// MarshalJSON writes the value as the JSON it is.
func (v Value) MarshalJSON() ([]byte, error) {
	switch v.kind {
	case valueString:
		return json.Marshal(v.str)
	case valueNumber:
		return []byte(strconv.FormatFloat(v.num, 'g', -1, 64)), nil
	case valueBool:
		return json.Marshal(v.b)
	case valueList:
		return json.Marshal(v.list)
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads a string, number, boolean or list of strings.
func (v *Value) UnmarshalJSON(data []byte) error {
	n, err := parseJSON("value", data)
	if err != nil {
		return err
	}
	got, err := valueOf(n)
	if err != nil {
		return err
	}
	*v = got
	return nil
}

var errValueShape = errors.New("a userConfig value is a string, a number, a boolean or a list of strings")

func valueOf(n *node) (Value, error) {
	switch n.kind {
	case kindString:
		return StringValue(n.str), nil
	case kindNumber:
		f, err := strconv.ParseFloat(n.str, 64)
		if err != nil || math.IsInf(f, 0) {
			return Value{}, errValueShape
		}
		return NumberValue(f), nil
	case kindBool:
		return BoolValue(n.b), nil
	case kindArray:
		list, ok := n.stringList()
		if !ok {
			return Value{}, errValueShape
		}
		return ListValue(list), nil
	}
	return Value{}, errValueShape
}

// placeholder is ${user_config.KEY}, as Claude Code matches it.
var placeholder = plugind.LazyRegexp(`\$\{user_config\.([^}]+)\}`)

// ExpandUserConfig replaces each ${user_config.KEY} in s whose KEY texts
// has; any other is left as it is.
func ExpandUserConfig(s string, texts map[string]string) string {
	if !strings.Contains(s, "${user_config.") {
		return s
	}
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		if t, ok := texts[m[len("${user_config."):len(m)-1]]; ok {
			return t
		}
		return m
	})
}

// OptionTexts is what each option's placeholder expands to, given the
// values set (by key): the value set, else the option's default, else ""
// for an optional one (Claude Code's MCP and LSP rule). A required option
// with neither is left out, so its placeholder stays; sensitive options
// are left out unless withSensitive, so what is shown keeps their
// placeholders.
func OptionTexts(opts []Option, set map[string]Value, withSensitive bool) map[string]string {
	out := map[string]string{}
	for _, o := range opts {
		if o.Sensitive && !withSensitive {
			continue
		}
		switch v, ok := set[o.Key]; {
		case ok && !v.IsZero():
			out[o.Key] = v.Text()
		case o.Default != nil:
			out[o.Key] = o.Default.Text()
		case !o.Required:
			out[o.Key] = ""
		}
	}
	return out
}

// OptionEnv is the environment a hook of a configured plugin gets, as
// Claude Code gives it: CLAUDE_PLUGIN_OPTION_<KEY> for each option, the
// key upper-cased with anything but letters, digits and _ made _. Sorted.
func OptionEnv(texts map[string]string) []string {
	out := make([]string, 0, len(texts))
	for k, v := range texts {
		name := strings.ToUpper(notWord.ReplaceAllString(k, "_"))
		out = append(out, "CLAUDE_PLUGIN_OPTION_"+name+"="+v)
	}
	sort.Strings(out)
	return out
}

var notWord = plugind.LazyRegexp(`[^A-Za-z0-9_]`)

// noteUndeclared warns about each ${user_config.KEY} whose KEY the
// package's userConfig does not declare: Claude Code fails to start what
// holds one ("Plugin option … isn't set"); here it stays as written.
func (b *builder) noteUndeclared() {
	for _, k := range b.pkg.UserConfigRefs() {
		if _, ok := FindOption(b.pkg.UserConfig, k); !ok {
			b.warn("${user_config.%s} is referenced, but userConfig declares no option %q: it is never substituted (Claude Code refuses to start what uses it)", k, k)
		}
	}
}

// UserConfigRefs lists the option keys the package's MCP servers, hooks
// and LSP servers reference, sorted, each once.
func (p *Package) UserConfigRefs() []string {
	seen := map[string]bool{}
	p.eachConfigurable(func(s string) {
		for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
			seen[m[1]] = true
		}
	})
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// WithUserConfig returns a copy of p whose MCP servers (command, args,
// url, env, headers), hooks (command, args, env) and LSP servers (command,
// args) have ${user_config.KEY} expanded from texts, masked again as the
// loader masks what it shows. p itself, which a cache may share, is left
// as it is.
func (p *Package) WithUserConfig(texts map[string]string) *Package {
	if len(texts) == 0 || len(p.UserConfigRefs()) == 0 {
		return p
	}
	c := *p
	c.MCPServers = append([]MCPServer(nil), p.MCPServers...)
	c.Hooks = append([]Hook(nil), p.Hooks...)
	c.LSPServers = append([]LSPServer(nil), p.LSPServers...)
	for i := range c.MCPServers {
		s := &c.MCPServers[i]
		s.Command = plugind.RedactSecrets(ExpandUserConfig(s.Command, texts))
		s.Args = maskArgs(expandAll(s.Args, texts))
		s.URL = maskURL(ExpandUserConfig(s.URL, texts))
		s.Env = expandMap(s.Env, texts)
		s.Headers = expandMap(s.Headers, texts)
	}
	for i := range c.Hooks {
		h := &c.Hooks[i]
		h.Command = maskCommand(ExpandUserConfig(h.Command, texts), h.Form == HookShell, h.Shell)
		h.Args = maskArgs(expandAll(h.Args, texts))
		h.Env = expandMap(h.Env, texts)
	}
	for i := range c.LSPServers {
		l := &c.LSPServers[i]
		l.Command = plugind.RedactSecrets(ExpandUserConfig(l.Command, texts))
		l.Args = nonNilStrings(maskArgs(expandAll(l.Args, texts)))
	}
	return &c
}

// eachConfigurable calls f on every string WithUserConfig expands.
func (p *Package) eachConfigurable(f func(string)) {
	each := func(list []string) {
		for _, s := range list {
			f(s)
		}
	}
	eachValue := func(m map[string]string) {
		for _, s := range m {
			f(s)
		}
	}
	for _, s := range p.MCPServers {
		f(s.Command)
		f(s.URL)
		each(s.Args)
		eachValue(s.Env)
		eachValue(s.Headers)
	}
	for _, h := range p.Hooks {
		f(h.Command)
		each(h.Args)
		eachValue(h.Env)
	}
	for _, l := range p.LSPServers {
		f(l.Command)
		each(l.Args)
	}
}

func expandAll(list []string, texts map[string]string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = ExpandUserConfig(s, texts)
	}
	return out
}

// expandMap expands an env or header map. A value that was a reference
// and now holds text the user gave is shown with its credentials masked
// (not hidden whole, as a literal of the plugin's own is: the user chose
// it, and the plan lists it).
func expandMap(m map[string]string, texts map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if x := ExpandUserConfig(v, texts); x != v {
			v = plugind.RedactSecrets(x)
		}
		out[k] = v
	}
	return out
}
