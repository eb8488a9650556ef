package installer

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/resolver/host"
)

// requirement is what the installed plugins that need one ask of it: the
// ranges and sha their manifests give, and who they are.
type requirement struct {
	resolver.Constraint
	by []string
}

// installedRequirements reads, for each of names, what the installed
// plugins that need it ask of its commit (their manifests' ranges and
// shas), as Claude Code's update reads its installed plugins' dependency
// constraints: an update of a dependency goes to the highest release tag
// its dependents allow, not past it. A dependent whose manifest cannot be
// read asks nothing (doctor reports it).
func (in *Installer) installedRequirements(reg *Registry, names []string) map[string]requirement {
	out := map[string]requirement{}
	for _, d := range reg.Plugins {
		var asks []string
		for _, n := range names {
			if slices.Contains(d.Dependencies, n) {
				asks = append(asks, n)
			}
		}
		if len(asks) == 0 || in.rootProblem(d) != "" {
			continue
		}
		pkg, err := manifest.Load(d.Root, d.loadOptions())
		if err != nil {
			continue
		}
		for _, dep := range pkg.Dependencies {
			if !slices.Contains(asks, dep.Name) || (dep.Version == "" && dep.SHA == "") {
				continue
			}
			r := out[dep.Name]
			if dep.Version != "" && !slices.Contains(r.Ranges, dep.Version) {
				r.Ranges = append(r.Ranges, dep.Version)
			}
			if dep.SHA != "" && r.SHA == "" {
				r.SHA = dep.SHA
			}
			r.by = append(r.by, d.Name)
			r.KeepPin = true
			out[dep.Name] = r
		}
	}
	for n, r := range out {
		sort.Strings(r.Ranges)
		sort.Strings(r.by)
		out[n] = r
	}
	return out
}

// constraintsOf is the requirements as the resolver takes them.
func constraintsOf(reqs map[string]requirement) map[string]resolver.Constraint {
	if len(reqs) == 0 {
		return nil
	}
	out := make(map[string]resolver.Constraint, len(reqs))
	for n, r := range reqs {
		out[n] = r.Constraint
	}
	return out
}

// unmet says why a planned update breaks what the installed plugins that
// need it ask ("" when it does not): it took no release tag, and its
// version is outside their ranges.
func (r requirement) unmet(a Action) string {
	if a.Tag != "" || len(r.Ranges) == 0 {
		return ""
	}
	for _, rng := range r.Ranges {
		if !(manifest.Dependency{Name: a.Name, Version: rng}).Allows(a.Version) {
			why := ""
			if a.tagMiss != "" {
				why = "; " + a.tagMiss
			}
			return fmt.Sprintf("%s need%s %s %s, and the marketplace's pin (%s at %s) has %s%s", strings.Join(r.by, ", "), plural(len(r.by), "s", ""), a.Name, strings.Join(r.Ranges, ", "), a.Name, host.Short(a.Commit), cmp.Or(a.Version, "no version"), why)
		}
	}
	return ""
}
