package secrets

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/internal/lazyregexp"
)

// Strip replaces, in a decoded manifest, .mcp.json, hooks or
// .claude/settings.json document, every literal credential by an
// environment variable reference the host expands, so the exported plugin
// keeps working once the user sets the variables, and returns those
// variables (sorted) and whether doc changed. Literal env values become
// ${KEY}; header values ${SERVER_HEADER} (an auth scheme stays visible:
// "Bearer ${X}"); URL userinfo and credential query values, credential
// flag arguments ("--token X"), KEY=VALUE arguments and well-known token
// literals in args become ${VAR}s named after what holds them; and
// credential-bearing text in shell-form hook commands ("Authorization:
// Bearer …", "?token=…", "API_KEY=sk-… cmd", "--password …") becomes a
// reference in the hook shell's own syntax (${VAR}, ${env:VAR} for
// PowerShell, %VAR% for cmd), quoted so it still expands. Values already
// written as references are left alone, and so is a query parameter that
// nothing names a credential (a Param): the plugin needs it verbatim.
func Strip(doc *jsondoc.Node) (vars []string, changed bool) {
	s := &stripper{required: map[string]bool{}, literals: map[string]string{}}
	s.walk(doc, "", false)
	vars = slices.AppendSeq(make([]string, 0, len(s.required)), maps.Keys(s.required))
	slices.Sort(vars)
	return vars, s.changed
}

// IsHostVar reports whether the host sets the variable name for every
// plugin: an export never asks the user for it, and an update's diff does
// not list it among the variables a plugin reads.
func IsHostVar(name string) bool {
	switch name {
	case "REASONIX_PLUGIN_ROOT", "REASONIX_PLUGIN_NAME", "REASONIX_PLUGIN_VERSION", "REASONIX_HOME", "REASONIX_WORKSPACE_ROOT",
		"CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA":
		return true
	}
	return false
}

var (
	envName  = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
	refNames = lazyregexp.New(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	notAlnum = lazyregexp.New(`[^A-Za-z0-9]+`)
)

type stripper struct {
	required map[string]bool
	// literals maps each variable a literal was moved to to that literal,
	// so the same secret keeps one name and different ones never share it.
	literals map[string]string
	changed  bool
}

// walk visits every object; owner is the key the object sits under, which
// names the server a headers block belongs to; inHooks is true below a
// "hooks" member, where an object with a command is a hook.
func (s *stripper) walk(n *jsondoc.Node, owner string, inHooks bool) {
	switch n.Kind {
	case jsondoc.Array:
		for i := range n.Items {
			s.walk(&n.Items[i], "", inHooks)
		}
	case jsondoc.Object:
		cmd := n.Get("command")
		hook := inHooks && cmd != nil && cmd.Kind == jsondoc.String
		argsOwner := owner
		if hook {
			argsOwner = "hook"
		}
		for i := range n.Fields {
			k, v := n.Fields[i].Key, &n.Fields[i].Val
			switch {
			case k == "env" && v.Kind == jsondoc.Object:
				s.strings(v, func(key string) string { return envVar(key) })
			case k == "headers" && v.Kind == jsondoc.Object:
				s.strings(v, func(key string) string { return upperSnake(owner, key) })
			case k == "url" && v.Kind == jsondoc.String:
				s.set(v, replaceSecrets(v.Str, find(v.Str, export), func(f secret) string { return "${" + s.varFor(owner, f) + "}" }))
			case k == "args" && v.Kind == jsondoc.Array && hook:
				// After the loop: it may rewrite this object's keys.
			case k == "args" && v.Kind == jsondoc.Array:
				s.args(v, argsOwner)
			case hook && k == "command" && n.Get("args") == nil:
				t := lexShell(v.Str, dialectOf(n.GetStr("shell")))
				s.set(v, t.rewrite(func(f secret) string { return s.varFor("hook", f) }))
			default:
				s.walk(v, k, inHooks || k == "hooks")
			}
		}
		if args := n.Get("args"); hook && args != nil && args.Kind == jsondoc.Array {
			s.execHook(n, cmd, args)
		}
	}
}

// strings replaces the literal string values of an env or headers object.
func (s *stripper) strings(obj *jsondoc.Node, name func(key string) string) {
	for i := range obj.Fields {
		key, v := obj.Fields[i].Key, &obj.Fields[i].Val
		if v.Kind != jsondoc.String || v.Str == "" {
			continue
		}
		if IsReference(v.Str) {
			for _, m := range refNames.FindAllStringSubmatch(v.Str, -1) {
				if !IsHostVar(m[1]) {
					s.required[m[1]] = true
				}
			}
			continue
		}
		vr := name(key)
		s.required[vr] = true
		if _, taken := s.literals[vr]; !taken {
			s.literals[vr] = v.Str
		}
		// Keep an auth scheme visible: "Bearer ${X}" still tells the user
		// what X holds.
		if p := skipAuthScheme(v.Str, 0); p > 0 && p < len(v.Str) {
			s.set(v, strings.TrimRight(v.Str[:p], " ")+" ${"+vr+"}")
			continue
		}
		s.set(v, "${"+vr+"}")
	}
}

// args replaces the credentials of an argument list by ${VAR} references,
// which MCP launchers expand in args as they do in env and url.
func (s *stripper) args(arr *jsondoc.Node, owner string) {
	list := make([]string, len(arr.Items))
	for i := range arr.Items {
		if it := &arr.Items[i]; it.Kind == jsondoc.String {
			list[i] = it.Str
		}
	}
	found := argSecrets(list, export)
	for i := range arr.Items {
		if it := &arr.Items[i]; it.Kind == jsondoc.String {
			s.set(it, replaceSecrets(it.Str, found[i], func(f secret) string { return "${" + s.varFor(owner, f) + "}" }))
		} else {
			s.walk(it, "", false)
		}
	}
}

// execHook handles an exec-form hook (command plus args). Exec form passes
// every argument literally — the host expands only the plugin-root
// variables — so a ${VAR} written into an argument would reach the program
// as those six characters and break it. A hook whose arguments hold a
// credential is rewritten as the same command line in bash form instead:
// each literal argument single-quoted, each credential a double-quoted
// "${VAR}" the shell expands, "shell": "bash" (the seeds: an explicit Bash
// hook runs under Bash on every platform). Arguments without credentials
// stay exec form, untouched.
func (s *stripper) execHook(hook, cmd, arr *jsondoc.Node) {
	list, ok := arr.StringList()
	if !ok {
		s.walk(arr, "", false)
		return
	}
	found := argSecrets(list, export)
	if !slices.ContainsFunc(found, func(f []secret) bool { return len(f) > 0 }) {
		return
	}
	line := []string{bashQuote(cmd.Str)}
	for i, a := range list {
		var b strings.Builder
		last := 0
		for _, f := range found[i] {
			b.WriteString(bashQuote(a[last:f.Start]))
			b.WriteString(`"${` + s.varFor("hook", f) + `}"`)
			last = f.End
		}
		b.WriteString(bashQuote(a[last:]))
		line = append(line, b.String())
	}
	s.set(cmd, strings.Join(line, " "))
	hook.Remove("args")
	if sh := hook.Get("shell"); sh == nil {
		hook.Put("shell", jsondoc.Text("bash"))
	} else if sh.Kind == jsondoc.String {
		s.set(sh, "bash")
	}
	s.changed = true
}

// bashQuote single-quotes s for bash (” for an empty piece between two
// credentials stays empty, so "x${A}y" pieces concatenate).
func bashQuote(s string) string {
	if s == "" {
		return ""
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// varFor names the variable a literal credential moves to: an UPPER_SNAKE
// variable it was assigned to keeps its name (API_KEY=… → API_KEY), a
// well-known token its conventional one (GITHUB_TOKEN), anything else is
// named after its owner and key (a "db" server's --password → DB_PASSWORD,
// a hook's Authorization header → HOOK_AUTH_TOKEN). A name already holding
// a different literal gets a numeric suffix.
func (s *stripper) varFor(owner string, f secret) string {
	var base string
	switch header := strings.ToLower(f.Name); {
	case f.Kind == Pair && envName.MatchString(f.Name) && f.Name == strings.ToUpper(f.Name) && !f.word:
		base = f.Name
	case f.Kind == Bearer || f.Kind == Header && header == "authorization":
		base = upperSnake(owner, "auth_token")
	case f.Kind == Header && header == "proxy-authorization":
		base = upperSnake(owner, "proxy_auth_token")
	case f.Kind == Userinfo:
		base = upperSnake(owner, "url_credentials")
	case f.Kind == Pair || f.Kind == Header:
		base = upperSnake(owner, f.Name)
	default:
		base = cmp.Or(f.Name, upperSnake(owner, "secret"))
	}
	name := base
	for n := 2; ; n++ {
		if prev, taken := s.literals[name]; !taken || prev == f.literal {
			break
		}
		name = fmt.Sprintf("%s_%d", base, n)
	}
	s.literals[name] = f.literal
	s.required[name] = true
	return name
}

func (s *stripper) set(n *jsondoc.Node, v string) {
	if n.Str != v {
		n.Str = v
		s.changed = true
	}
}

func envVar(key string) string {
	if envName.MatchString(key) {
		return key
	}
	return upperSnake("", key)
}

// upperSnake builds an environment variable name: "github", "X-Api-Key" →
// GITHUB_X_API_KEY.
func upperSnake(parts ...string) string {
	var words []string
	for _, p := range parts {
		if w := strings.Trim(notAlnum.ReplaceAllString(p, "_"), "_"); w != "" {
			words = append(words, strings.ToUpper(w))
		}
	}
	out := strings.Join(words, "_")
	if out == "" {
		return "SECRET"
	}
	if out[0] >= '0' && out[0] <= '9' {
		out = "_" + out
	}
	return out
}
