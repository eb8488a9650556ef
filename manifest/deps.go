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

// PluginNameRE is Claude's grammar for the plugin and marketplace names a
// dependency or a marketplace's renames map names.
var PluginNameRE = lazyregexp.New(`^[A-Za-z0-9][-A-Za-z0-9._]*$`)

// parseDependencies reads the "dependencies" each declaration makes (the
// plugin's own, then its marketplace entry's): a list of "NAME",
// "NAME@MARKETPLACE", either followed by "@^RANGE", or objects {"name",
// "marketplace"?, "version"?, "sha"?}. The plugin's table (dependencies())
// has refused any other shape before they get here; the "sha" it does not
// list is checked here, naming the item: a plugin whose dependencies cannot
// be read cannot be installed with them. Repeats are merged.
func parseDependencies(decls []declaration) ([]Dependency, error) {
	var out []Dependency
	seen := map[string]int{}
	for _, decl := range decls {
		for i := range decl.n.Items {
			it := &decl.n.Items[i]
			at := fmt.Sprintf("dependencies[%d].sha", i)
			bad := func(format string, args ...any) error {
				return plugind.Errorf(plugind.CodeInvalidSource, "%s: %s: %s", decl.src, at, fmt.Sprintf(format, args...))
			}
			var d Dependency
			if it.Kind == jsondoc.String {
				rest, rng, ranged := strings.Cut(it.Str, "@^")
				d.Name, d.Marketplace, _ = strings.Cut(rest, "@")
				if ranged {
					d.Version = "^" + rng
				}
			} else {
				d.Name, d.Marketplace, d.Version = it.GetStr("name"), it.GetStr("marketplace"), strings.TrimSpace(it.GetStr("version"))
				switch sha := it.Get("sha"); {
				case sha == nil:
				case sha.Kind != jsondoc.String:
					return nil, bad("must be a string, not %s", sha.Kind)
				case !plugind.IsCommitID(sha.Str):
					return nil, bad("%q is not a full commit id (40 lowercase hex digits)", clip(sha.Str))
				default:
					d.SHA = sha.Str
				}
			}
			key := d.Name + "@" + d.Marketplace
			if j, ok := seen[key]; ok {
				switch {
				case out[j].SHA == "":
					out[j].SHA = d.SHA
				case d.SHA != "" && d.SHA != out[j].SHA:
					return nil, bad("pins %s to %s, and an earlier item pins it to %s", d.Name, d.SHA[:12], out[j].SHA[:12])
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
