package manifest

import (
	"iter"
	"maps"
	"slices"
	"sort"
	"strings"

	"reasonix.io/plugind/internal/lazyregexp"
	"reasonix.io/plugind/secrets"
)

// ${user_config.KEY}: what each placeholder expands to, and where.

// placeholder is ${user_config.KEY}, as Claude Code matches it.
var placeholder = lazyregexp.New(`\$\{user_config\.([^}]+)\}`)

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

var notWord = lazyregexp.New(`[^A-Za-z0-9_]`)

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
	return slices.Sorted(maps.Keys(seen))
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
		s.Command = secrets.Mask(ExpandUserConfig(s.Command, texts))
		s.Args = secrets.MaskArgs(expandAll(s.Args, texts))
		s.URL = secrets.Mask(ExpandUserConfig(s.URL, texts))
		s.Env = expandMap(s.Env, texts)
		s.Headers = expandMap(s.Headers, texts)
	}
	for i := range c.Hooks {
		h := &c.Hooks[i]
		h.Command = secrets.MaskCommand(ExpandUserConfig(h.Command, texts), h.Form == HookShell, h.Shell)
		h.Args = secrets.MaskArgs(expandAll(h.Args, texts))
		h.Env = expandMap(h.Env, texts)
	}
	for i := range c.LSPServers {
		l := &c.LSPServers[i]
		l.Command = secrets.Mask(ExpandUserConfig(l.Command, texts))
		l.Args = NonNil(secrets.MaskArgs(expandAll(l.Args, texts)))
	}
	c.RuntimeFetches = RuntimeFetchesOf(&c) // a version may come from an option
	return &c
}

// eachConfigurable calls f on every string WithUserConfig expands.
func (p *Package) eachConfigurable(f func(string)) {
	each := func(seqs ...iter.Seq[string]) {
		for _, seq := range seqs {
			for s := range seq {
				f(s)
			}
		}
	}
	for _, s := range p.MCPServers {
		each(slices.Values([]string{s.Command, s.URL}), slices.Values(s.Args), maps.Values(s.Env), maps.Values(s.Headers))
	}
	for _, h := range p.Hooks {
		each(slices.Values([]string{h.Command}), slices.Values(h.Args), maps.Values(h.Env))
	}
	for _, l := range p.LSPServers {
		each(slices.Values([]string{l.Command}), slices.Values(l.Args))
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
			v = secrets.Mask(x)
		}
		out[k] = v
	}
	return out
}
