package manifest

import (
	"regexp"
	"sort"
	"strings"

	"reasonix.io/plugind"
)

// hostVars are set by the host for every plugin; an export never asks the
// user for them.
var hostVars = map[string]bool{
	"REASONIX_PLUGIN_ROOT": true, "REASONIX_PLUGIN_NAME": true, "REASONIX_PLUGIN_VERSION": true,
	"REASONIX_HOME": true, "REASONIX_WORKSPACE_ROOT": true, "CLAUDE_PROJECT_DIR": true,
	"CLAUDE_PLUGIN_ROOT": true, "CLAUDE_PLUGIN_DATA": true,
}

var (
	envName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	refNames = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	notAlnum = regexp.MustCompile(`[^A-Za-z0-9]+`)
)

// StripCredentials returns a copy of a manifest, .mcp.json or
// .claude/settings.json document with every literal env and header value
// replaced by a ${VAR} reference (VAR is the env key; for headers an
// UPPER_SNAKE name from the server and header names), URL userinfo,
// token-like query values and credential flag arguments masked, and the
// variables the user must set for the result to work. Values already
// written as references are left alone. When nothing changes, out is data
// itself; otherwise keys keep their order and the JSON is re-indented.
func StripCredentials(relPath string, data []byte) ([]byte, []string, bool, error) {
	doc, err := parseJSON(relPath, data)
	if err != nil {
		return nil, nil, false, plugind.WithCode(plugind.CodeInvalidSource, err)
	}
	s := &stripper{required: map[string]bool{}}
	s.walk(doc, "")
	vars := make([]string, 0, len(s.required))
	for v := range s.required {
		vars = append(vars, v)
	}
	sort.Strings(vars)
	if !s.changed {
		return data, vars, false, nil
	}
	return doc.marshal(), vars, true, nil
}

type stripper struct {
	required map[string]bool
	changed  bool
}

// walk visits every object; owner is the key the object sits under, which
// names the server a headers block belongs to.
func (s *stripper) walk(n *node, owner string) {
	switch n.kind {
	case kindArray:
		for _, it := range n.items {
			s.walk(it, "")
		}
	case kindObject:
		for i, k := range n.keys {
			v := n.vals[i]
			switch {
			case k == "env" && v.kind == kindObject:
				s.strings(v, func(key string) string { return envVar(key) })
			case k == "headers" && v.kind == kindObject:
				s.strings(v, func(key string) string { return upperSnake(owner, key) })
			case k == "url" && v.kind == kindString:
				s.set(v, maskURL(v.str))
			case k == "args" && v.kind == kindArray:
				s.args(v)
			default:
				s.walk(v, k)
			}
		}
	}
}

// strings replaces the literal string values of an env or headers object.
func (s *stripper) strings(obj *node, name func(key string) string) {
	for i, key := range obj.keys {
		v := obj.vals[i]
		if v.kind != kindString || v.str == "" {
			continue
		}
		if isReference(v.str) {
			for _, m := range refNames.FindAllStringSubmatch(v.str, -1) {
				if !hostVars[m[1]] {
					s.required[m[1]] = true
				}
			}
			continue
		}
		vr := name(key)
		s.required[vr] = true
		// Keep an auth scheme visible: "Bearer ${X}" still tells the user
		// what X holds.
		if m := authScheme.FindStringSubmatch(v.str); m != nil {
			s.set(v, m[1]+" ${"+vr+"}")
			continue
		}
		s.set(v, "${"+vr+"}")
	}
}

func (s *stripper) args(arr *node) {
	list := make([]string, len(arr.items))
	for i, it := range arr.items {
		if it.kind == kindString {
			list[i] = it.str
		}
	}
	masked := maskArgs(list)
	for i, it := range arr.items {
		if it.kind == kindString {
			s.set(it, masked[i])
		} else {
			s.walk(it, "")
		}
	}
}

func (s *stripper) set(n *node, v string) {
	if n.str != v {
		n.str = v
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

// CredentialFiles lists, relative to the package root, the files an export
// must pass through StripCredentials: the manifest, every MCP and hooks
// JSON file the package declared or ships by convention, and
// .claude/settings.json. It is complete for a Package returned by Load or
// a Parse function.
func CredentialFiles(p *Package) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range append([]string{p.ManifestPath}, p.configFiles...) {
		if f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}
