package installer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Registered roots (SPEC §9). The copy of plugin NAME lives in a folder
// this home owns: plugins/NAME, or plugins/NAME@<digest> while a
// replacement is published beside the old copy. The registry is a file a
// person (or someone else) can edit, so a root is checked before it is
// used: one that is not such a folder — outside plugins/ after cleaning
// or with symlinks resolved, with "..", relative, the plugins folder
// itself, another plugin's folder, a symbolic link — is excluded from
// loading with a repair warning, reported by doctor, never read and never
// deleted. A linked plugin's root is the user's own folder anywhere: it is
// read, and never deleted (its registry entry goes; the folder stays).

// rootProblem says why e's registered root is not one this home may read
// as an installed copy or delete; "" when it is. A missing root is not
// this kind of problem (checkRoot reports it): there is nothing to follow.
func (in *Installer) rootProblem(e Entry) string {
	root := e.Root
	switch {
	case root == "":
		return "the registry names no root"
	case !filepath.IsAbs(root):
		return fmt.Sprintf("root %s is not an absolute path", root)
	case filepath.Clean(root) != root:
		return fmt.Sprintf("root %s is not a clean path (\"..\", \".\" or a trailing separator)", root)
	}
	if e.Link {
		return "" // the user's folder, wherever it is
	}
	if root == in.Home.PluginsDir() {
		return fmt.Sprintf("root %s is the plugins folder itself, not a plugin's folder in it", root)
	}
	if !in.inPluginsDir(root) {
		return fmt.Sprintf("root %s is outside %s", root, in.Home.PluginsDir())
	}
	if name, suffix, at := strings.Cut(filepath.Base(root), "@"); name != e.Name || (at && suffix == "") {
		return fmt.Sprintf("root %s is not %s's folder in %s (an installed copy lives at %s)", root, e.Name, in.Home.PluginsDir(), in.Home.PluginRoot(e.Name))
	}
	if info, err := os.Lstat(root); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(root)
		return fmt.Sprintf("root %s is a symbolic link (to %s); an installed copy is a folder of its own", root, target)
	}
	return ""
}

// inPluginsDir reports whether p names an entry directly in the plugins
// folder: clean, and in a folder that is the plugins folder by its path
// or, when the home is reached through another path (a symlinked home),
// with symlinks resolved. Whatever p itself is (a folder, a link) is left
// to the caller.
func (in *Installer) inPluginsDir(p string) bool {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return false
	}
	switch filepath.Base(p) {
	case ".", "..", string(filepath.Separator):
		return false
	}
	parent, plugins := filepath.Dir(p), in.Home.PluginsDir()
	if parent == plugins {
		return true
	}
	realParent, err := filepath.EvalSymlinks(parent)
	if err != nil {
		return false
	}
	realPlugins, err := filepath.EvalSymlinks(plugins)
	return err == nil && realParent == realPlugins
}

// retire deletes the copy e no longer names once the registry has let go
// of it: a root this home owns. A linked plugin's folder is the user's and
// stays; a root that is not the home's is left where it is, and a warning
// appended to warnings says so.
func (in *Installer) retire(e Entry, warnings *[]string) {
	if e.Link {
		return
	}
	if problem := in.rootProblem(e); problem != "" {
		*warnings = append(*warnings, fmt.Sprintf("%s's registered root was left in place, not deleted: %s", e.Name, problem))
	} else if err := in.discard(e.Root); err != nil {
		*warnings = append(*warnings, fmt.Sprintf("%s's old copy was not deleted: %v", e.Name, err))
	}
}

// errNotInPlugins refuses a delete outside the plugins folder.
var errNotInPlugins = errors.New("not an entry of the plugins folder; nothing outside it is ever deleted")
