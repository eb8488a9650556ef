package plugind

import (
	"path"
	"sort"
	"strings"
)

// Submodule is a git submodule as a fetched tree holds it (SPEC §8): the
// folder a gitlink occupies, the repository its .gitmodules entry names
// (resolved against the parent's URL), and the commit the parent pins.
// Nested submodules are listed with their paths from the outer tree's root.
type Submodule struct {
	Path   string `json:"path"`
	URL    string `json:"url"`
	Commit string `json:"commit"`
}

// SubmodulesOf lists the submodules that make up folder dir ("" for the
// root) of a tree: those inside it, and those it lies inside (a folder of
// a submodule is that submodule's content). Sorted by path; nil when none.
func SubmodulesOf(all []Submodule, dir string) []Submodule {
	dir = strings.Trim(path.Clean("/"+dir), "/")
	var out []Submodule
	for _, s := range all {
		if dir == "" || s.Path == dir || strings.HasPrefix(s.Path, dir+"/") || strings.HasPrefix(dir, s.Path+"/") {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
