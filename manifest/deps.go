package manifest

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/internal/lazyregexp"
)

// Dependency is another plugin a package needs (Claude's "dependencies"):
// by name, in the dependent's own marketplace unless Marketplace names
// another, at any version unless Version constrains it.
type Dependency struct {
	Name        string `json:"name"`
	Marketplace string `json:"marketplace,omitempty"`
	// Version is a semantic version range ("^2.0", "~2.1.0", ">=1.2 <2");
	// "" accepts any version.
	Version string `json:"version,omitempty"`
	// SHA pins the dependency to one commit (an object's "sha", 40 hex).
	SHA string `json:"sha,omitempty"`
}

// String is the dependency as a manifest writes it: NAME[@MARKETPLACE][@RANGE].
func (d Dependency) String() string {
	s := d.Name
	if d.Marketplace != "" {
		s += "@" + d.Marketplace
	}
	if d.Version != "" {
		s += " " + d.Version
	}
	if d.SHA != "" {
		s += " at " + d.SHA[:12]
	}
	return s
}

// Allows reports whether version satisfies the dependency's range. No range
// allows anything; a range with a version that is not semantic allows
// nothing.
func (d Dependency) Allows(version string) bool {
	if d.Version == "" {
		return true
	}
	c, err := semver.NewConstraint(d.Version)
	if err != nil {
		return false
	}
	v, err := semver.NewVersion(version)
	if err != nil {
		return false
	}
	return c.Check(v)
}

// depName is Claude's grammar for a dependency's plugin and marketplace
// names.
var depName = lazyregexp.New(`^[A-Za-z0-9][-A-Za-z0-9._]*$`)

// parseDependencies reads the "dependencies" each declaration makes (the
// plugin's own, then its marketplace entry's): a list of "NAME",
// "NAME@MARKETPLACE", either followed by "@^RANGE", or objects {"name",
// "marketplace"?, "version"?, "sha"?}. Anything else is an error that names the
// item: a plugin whose dependencies cannot be read cannot be installed
// with them (Claude refuses it too). Repeats are merged.
func parseDependencies(decls []declaration) ([]Dependency, error) {
	var out []Dependency
	seen := map[string]int{}
	for _, decl := range decls {
		n := decl.n
		if n == nil || n.Kind == jsondoc.Null {
			continue
		}
		bad := func(at, format string, args ...any) error {
			return plugind.Errorf(plugind.CodeInvalidSource, "%s: %s: %s", decl.src, at, fmt.Sprintf(format, args...))
		}
		if n.Kind != jsondoc.Array {
			hint := ""
			if n.Kind == jsondoc.Object {
				hint = " (an object of package versions is npm's form; it belongs in package.json)"
			}
			return nil, bad("dependencies", "must be a list of plugins (NAME, NAME@MARKETPLACE or {\"name\": …}), not %s%s", n.Kind, hint)
		}
		for i := range n.Items {
			it := &n.Items[i]
			at := fmt.Sprintf("dependencies[%d]", i)
			var d Dependency
			switch it.Kind {
			case jsondoc.String:
				parts := strings.Split(it.Str, "@")
				d.Name = parts[0]
				for _, p := range parts[1:] {
					switch {
					case strings.HasPrefix(p, "^") && d.Version == "":
						d.Version = p
					case d.Marketplace == "" && d.Version == "":
						d.Marketplace = p
					default:
						return nil, bad(at, "%q must be NAME, NAME@MARKETPLACE or either followed by @^RANGE", clip(it.Str))
					}
				}
				if d.Marketplace == "" && len(parts) > 1 && d.Version == "" {
					return nil, bad(at, "%q has an empty marketplace", clip(it.Str))
				}
			case jsondoc.Object:
				for _, f := range it.Fields {
					k, v := f.Key, f.Val
					if k != "name" && k != "marketplace" && k != "version" && k != "sha" {
						continue // Claude allows more; they say nothing we act on
					}
					if v.Kind != jsondoc.String {
						return nil, bad(at+"."+k, "must be a string, not %s", v.Kind)
					}
					switch k {
					case "name":
						d.Name = v.Str
					case "marketplace":
						d.Marketplace = v.Str
					case "version":
						d.Version = strings.TrimSpace(v.Str)
					case "sha":
						if !plugind.IsCommitID(v.Str) {
							return nil, bad(at+".sha", "%q is not a full commit id (40 lowercase hex digits)", clip(v.Str))
						}
						d.SHA = v.Str
					}
				}
			default:
				return nil, bad(at, "must be a plugin name or a {\"name\": …} object, not %s", it.Kind)
			}
			if !depName.MatchString(d.Name) {
				return nil, bad(at, "%q is not a plugin name (letters, digits, '.', '_' and '-', starting with a letter or digit)", clip(d.Name))
			}
			if d.Marketplace != "" && !depName.MatchString(d.Marketplace) {
				return nil, bad(at, "%q is not a marketplace name", clip(d.Marketplace))
			}
			if d.Version != "" {
				if _, err := semver.NewConstraint(d.Version); err != nil {
					return nil, bad(at, "version %q is not a semantic version range: %v", clip(d.Version), err)
				}
			}
			key := d.Name + "@" + d.Marketplace
			if j, ok := seen[key]; ok {
				switch {
				case out[j].SHA == "":
					out[j].SHA = d.SHA
				case d.SHA != "" && d.SHA != out[j].SHA:
					return nil, bad(at+".sha", "pins %s to %s, and an earlier item pins it to %s", d.Name, d.SHA[:12], out[j].SHA[:12])
				}
				if out[j].Version == "" {
					out[j].Version = d.Version
				} else if d.Version != "" && d.Version != out[j].Version {
					out[j].Version += ", " + d.Version // both must hold
				}
				continue
			}
			seen[key] = len(out)
			out = append(out, d)
		}
	}
	return out, nil
}

// clip keeps an author's string short enough to quote in an error.
func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
