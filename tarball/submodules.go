package tarball

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/secrets"
)

// Submodules (SPEC §8). A gitlink pins a submodule's commit; Finish fetches
// each one the kept folders need through Options.Submodules, straight into
// its folder of the destination, before links are materialized (so a link
// may lead into a submodule), and accounts for what it wrote as for any
// file: the name checks, the budget, the hashes. Over git the gitlinks come
// from the tree (Gitlink); an archive shows a submodule as an empty folder,
// so Options.FindGitlinks is asked which .gitmodules folders are gitlinks.

// Submodule is a gitlink to fetch.
type Submodule struct {
	Path   string // its folder in the tree
	URL    string // as .gitmodules says it (maybe relative to the parent's)
	Commit string // what the parent pins
	// Paths are the folders of it that the fetch keeps, relative to it;
	// nil keeps all of it.
	Paths []string
}

// SubmoduleTree is what a SubmoduleFunc wrote.
type SubmoduleTree struct {
	// URL is the repository it came from, resolved, as the plan shows it.
	URL string
	// Files and Dirs are relative to the submodule's folder, hashed as
	// Result.Tree and Result.Dirs list them.
	Files []plugind.File
	Dirs  []string
	// Submodules are its own, with paths relative to its folder.
	Submodules []plugind.Submodule
}

// SubmoduleFunc fetches sm into dest, which does not exist (its parent
// does), within budget. Errors name the submodule and its URL.
type SubmoduleFunc func(ctx context.Context, sm Submodule, dest string, budget plugind.Budget) (*SubmoduleTree, error)

// SubmoduleError is a submodule that could not be fetched: the tree
// cannot be completed, whichever transport brought the rest of it, so no
// other transport is tried for it (host.Fatal).
type SubmoduleError struct {
	Path, Commit string
	Err          error // names the URL; its code is the cause's, sealed
}

func (e *SubmoduleError) Error() string {
	return fmt.Sprintf("%s: %v", describeSubmodule(e.Path, e.Commit), e.Err)
}

func (e *SubmoduleError) Unwrap() error { return e.Err }

// sealed keeps err's code and words but none of its sentinels: a commit or
// repository the submodule's host does not have is the submodule's, and
// must not be taken (remembered, reported) for the parent's.
func sealed(err error) error {
	return &plugind.Error{Code: cmp.Or(plugind.CodeOf(err), plugind.CodeSourceUnreadable), Msg: err.Error()}
}

// gitlink is a submodule entry of the tree.
type gitlink struct{ rel, entry, commit string }

// Gitlink records a submodule entry (git mode 160000) pinned at commit.
func (x *Writer) Gitlink(name, commit string) error {
	rel, _, err := x.place(name, false)
	if err != nil {
		return err
	}
	if _, err := x.paths.Add(rel, plugind.EntryDir); err != nil {
		return refuseAt(rel, name, "%v", err)
	}
	c := strings.ToLower(commit)
	if !plugind.IsCommitID(c) {
		return refuseAt(rel, name, "a submodule pinned to %q, which is not a commit id", commit)
	}
	x.gitlinks = append(x.gitlinks, gitlink{rel: rel, entry: name, commit: c})
	return nil
}

// materializeSubmodules fetches every submodule the kept folders need.
func (x *Writer) materializeSubmodules() error {
	links, err := x.findGitlinks()
	if err != nil {
		return err
	}
	var wanted []gitlink
	for _, g := range links {
		if x.git != nil {
			if err := x.git.gitlink(g.rel, g.commit); err != nil {
				return err
			}
		}
		if x.sel.wants(g.rel) {
			wanted = append(wanted, g)
		} else {
			x.notFetched(g.rel)
		}
	}
	if len(wanted) == 0 {
		return nil
	}
	urls, err := x.parseGitmodules()
	if err != nil {
		return err
	}
	sort.Slice(wanted, func(i, j int) bool { return wanted[i].rel < wanted[j].rel })
	for _, g := range wanted {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		url, ok := urls[g.rel]
		if !ok || url == "" {
			return plugind.Errorf(plugind.CodeSourceUnreadable, "%s: %s gives no URL for it", describeSubmodule(g.rel, g.commit), gitmodulesFile)
		}
		if err := x.submodule(g, url); err != nil {
			return err
		}
	}
	sort.Slice(x.subs, func(i, j int) bool { return x.subs[i].Path < x.subs[j].Path })
	return nil
}

// findGitlinks returns the tree's gitlinks: those recorded, or for an
// archive those FindGitlinks names among the empty .gitmodules folders the
// kept folders need.
func (x *Writer) findGitlinks() ([]gitlink, error) {
	if x.opts.FindGitlinks == nil || len(x.gitlinks) > 0 || x.gitmodules == nil {
		return x.gitlinks, nil
	}
	var empty []string // .gitmodules folders the tree holds empty
	urls, perr := x.parseGitmodules()
	for p := range urls {
		if n := x.paths.Lookup(p); n != nil && n.IsDir() && len(x.paths.Below(p)) == 0 {
			empty = append(empty, p)
		}
	}
	sort.Strings(empty)
	var ask []string
	for _, p := range empty {
		// With Options.GitTree every one is asked about, kept or not: the
		// tree's id depends on it.
		if x.sel.wants(p) || x.git != nil {
			ask = append(ask, p)
		} else {
			x.notFetched(p)
		}
	}
	if perr != nil {
		// Unreadable, so which folders are submodules is unknown: refused
		// as over git, when a kept folder could be one.
		for _, d := range x.paths.Below("") {
			if d.IsDir() && x.sel.wants(d.Name) && len(x.paths.Below(d.Name)) == 0 {
				return nil, perr
			}
		}
		return nil, nil
	}
	if len(ask) == 0 {
		return nil, nil
	}
	found, err := x.opts.FindGitlinks(x.ctx, ask)
	if err != nil {
		return nil, fmt.Errorf("find the submodules of the tree: %w", err)
	}
	var out []gitlink
	for _, p := range ask {
		if c, ok := found[p]; ok {
			if !plugind.IsCommitID(strings.ToLower(c)) {
				return nil, refuseAt(p, p, "a submodule pinned to %q, which is not a commit id", c)
			}
			out = append(out, gitlink{rel: p, entry: p, commit: strings.ToLower(c)})
		}
	}
	return out, nil
}

// notFetched remembers a submodule folder this pass left empty.
func (x *Writer) notFetched(rel string) { x.subFolders[rel] = false }

// inSubmodule reports whether p lies in a submodule whose content this
// pass did not fetch whole: a link to it needs that content kept.
func (x *Writer) inSubmodule(p string) bool {
	for rel, whole := range x.subFolders {
		if !whole && p != rel && within(p, rel) {
			return true
		}
	}
	return false
}

// submodule fetches gitlink g from url into its folder and accounts for
// what was written.
func (x *Writer) submodule(g gitlink, url string) error {
	what := describeSubmodule(g.rel, g.commit)
	if x.opts.Submodules == nil {
		return plugind.Errorf(plugind.CodeSourceUnreadable, "%s from %s: this fetch does not follow submodules", what, secrets.Mask(url))
	}
	if below := x.paths.Below(g.rel); len(below) > 0 {
		return refuseAt(g.rel, g.entry, "the %s collides with %q, an entry of the tree inside its folder", what, below[0].Name)
	}
	if x.made[g.rel] {
		// An archive's empty folder for it: the fetch creates it afresh.
		x.handles.Forget(g.rel)
		if err := x.root.Remove(g.rel); err != nil {
			return confined(g.entry, "replace the folder of the "+what, err)
		}
		delete(x.made, g.rel)
		x.dirList = slices.DeleteFunc(x.dirList, func(d string) bool { return d == g.rel })
		x.dirs--
	}
	if err := x.ensureDir(path.Dir(g.rel), g.entry); err != nil {
		return err
	}
	left := plugind.Budget{MaxBytes: max(1, x.budget.MaxBytes-x.bytes), MaxFiles: max(1, x.budget.MaxFiles-x.files)}
	sm := Submodule{Path: g.rel, URL: url, Commit: g.commit, Paths: x.sel.under(g.rel)}
	dest := filepath.Join(x.dest, filepath.FromSlash(g.rel))
	tree, err := x.opts.Submodules(x.ctx, sm, dest, left)
	if err != nil {
		if cerr := x.ctx.Err(); cerr != nil {
			return cerr
		}
		return &SubmoduleError{Path: g.rel, Commit: g.commit, Err: sealed(err)}
	}
	if _, err := os.Lstat(dest); err != nil {
		return fmt.Errorf("%s: nothing was written: %w", what, err)
	}
	x.made[g.rel] = true
	x.dirs++
	if x.sums != nil {
		x.dirList = append(x.dirList, g.rel)
	}
	for _, d := range tree.Dirs {
		rel := g.rel + "/" + d
		x.made[rel] = true
		x.dirs++
		if x.sums != nil {
			x.dirList = append(x.dirList, rel)
		}
	}
	for _, f := range tree.Files {
		if _, err := plugind.CleanEntryName(f.Path, false); err != nil {
			return fmt.Errorf("%s: it listed %q: %w", what, f.Path, err)
		}
		rel := g.rel + "/" + f.Path
		n, err := x.paths.Add(rel, plugind.EntryFile)
		if err != nil {
			return refuseAt(rel, rel, "%v", err)
		}
		n.Exec, n.Size = f.Executable, f.Size
		x.files++
		x.bytes += f.Size
		if x.sums != nil {
			if f.SHA256 == "" {
				return fmt.Errorf("%s: %q was not hashed", what, f.Path)
			}
			x.sums[rel] = writtenFile{sum: f.SHA256, size: f.Size, exec: f.Executable}
		}
	}
	if err := x.budget.Check(x.files, x.bytes); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	x.subFolders[g.rel] = sm.Paths == nil
	x.subs = append(x.subs, plugind.Submodule{Path: g.rel, URL: tree.URL, Commit: g.commit})
	for _, s := range tree.Submodules {
		x.subs = append(x.subs, plugind.Submodule{Path: g.rel + "/" + s.Path, URL: s.URL, Commit: s.Commit})
	}
	x.report(true)
	return nil
}
