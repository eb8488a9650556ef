package github

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/gitobj"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/tarball"
)

// Archives proven against the commit (SPEC §17). An archive endpoint (or
// anything between it and us) can serve any bytes for a commit, so the
// extraction hashes the archive as git hashes a tree (tarball
// Options.GitTree) and the root's id must be the one the commit object
// names. The commit's tree id comes over git when git is on (the commit
// and its root tree alone, a few KiB, no REST request: the REST budget is
// 60 an hour without a token and archives spend it already), through the
// REST API (git/commits/{sha}) when git is off or cannot — unless the
// reachability check already compared the commit with a ref through the
// API, whose answer names it (the merge base). It is asked while the
// archive downloads, and remembered: a commit's tree never changes.
//
// A mismatch is rare, and only then is the commit's tree walked down to
// the first entry that differs (git/trees/{sha}, one request per level:
// the root's entries come with the commit over git) to name it. An archive
// that differs because git archive was told to make it differ
// (export-ignore, export-subst in a .gitattributes; an LFS filter, whose
// files GitHub may put in archives in place of their pointers) is not a
// lie but cannot be proven either: it is fetched over git instead, and without
// git it is refused as needing git.

// ErrExportAttributes: the commit's archive differs from its tree because
// its .gitattributes tell git archive to leave out or rewrite files.
var ErrExportAttributes = errors.New("its .gitattributes use export-ignore, export-subst or LFS, so its archive is not its tree")

// maxDescent bounds the walk down to the first differing entry.
const maxDescent = 64

// treeMemo remembers, per repository and commit, the commit's tree and
// whether its archives differ by their attributes. In memory, for as long
// as the host lives (the daemon's, across its plans): a fetch is asked
// again only when the store lost the tree, so a lasting cache would save
// little, and the cache's schema and the mirror's tables stay as they are.
type treeMemo struct {
	mu sync.Mutex
	m  map[string]memo
}

type memo struct {
	tree  host.CommitTree
	attrs []string // the .gitattributes files that make archives differ
}

// maxMemo bounds treeMemo; past it, it starts afresh.
const maxMemo = 4096

func (t *treeMemo) get(key string) (memo, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, ok := t.m[key]
	return m, ok
}

func (t *treeMemo) update(key string, f func(*memo)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil || len(t.m) >= maxMemo {
		t.m = map[string]memo{}
	}
	m := t.m[key]
	f(&m)
	t.m[key] = m
}

func (r *restRepo) memoKey(sha string) string { return r.src.Key() + "@" + sha }

// commitTree is the tree id commit sha names (and, over git, its root's
// entries): git first when it is on, the REST API otherwise or when git
// cannot.
func (r *restRepo) commitTree(ctx context.Context, sha string) (host.CommitTree, error) {
	key := r.memoKey(sha)
	if m, ok := r.h.trees.get(key); ok && m.tree.ID != "" {
		return m.tree, nil
	}
	ct, err := host.CommitTree{}, errors.ErrUnsupported
	if r.commits != nil {
		if ct, err = r.commits.CommitTree(ctx, sha); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			r.h.cfg.Log.Debug("reading the commit over git failed; asking the API", "repo", r.src.Key(), "sha", sha, "err", err)
		}
	}
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return ct, cerr
		}
		c, resp, gerr := r.h.api.Git.GetCommit(ctx, r.src.Owner(), r.src.Name(), sha)
		if gerr != nil {
			return ct, r.apiError(ctx, "read commit "+host.Short(sha), resp, gerr, host.ErrCommitNotFound)
		}
		ct = host.CommitTree{ID: c.GetTree().GetSHA()}
	}
	if _, err := gitobj.ParseID(ct.ID); err != nil {
		return host.CommitTree{}, plugind.Errorf(plugind.CodeSourceUnreadable, "commit %s of %s: its tree: %v", host.Short(sha), r.src.Key(), err)
	}
	r.h.trees.update(key, func(m *memo) { m.tree = ct })
	return ct, nil
}

// rememberTree records the tree id an API answer gave for commit sha (a
// compare's merge base), when it is one.
func (r *restRepo) rememberTree(sha, tree string) {
	if _, err := gitobj.ParseID(tree); err == nil {
		r.h.trees.update(r.memoKey(sha), func(m *memo) { m.tree = host.CommitTree{ID: tree} })
	}
}

// exportAttributes returns the attribute files remembered to make the
// archive of sha differ.
func (r *restRepo) exportAttributes(sha string) []string {
	m, _ := r.h.trees.get(r.memoKey(sha))
	return m.attrs
}

// needsGit is the refusal of an archive that differs by its attributes.
func (r *restRepo) needsGit(sha string, attrs []string, at string) error {
	where := ""
	if at != "" {
		where = fmt.Sprintf(" (first at %q)", at)
	}
	return &plugind.Error{Code: plugind.CodeSourceUnreadable, Err: ErrExportAttributes,
		Msg: fmt.Sprintf("the archive of %s@%s cannot be proven against the commit%s: %s use export-ignore, export-subst or LFS (filter=lfs), with which an archive leaves out, rewrites or replaces files; it must be fetched over git (REASONIX_GIT=off cannot)",
			r.src.Key(), host.Short(sha), where, strings.Join(attrs, ", "))}
}

// proven checks what the archive of sha held (res) against the commit's
// tree: nil when they are the same tree, the refusal otherwise.
func (r *restRepo) proven(ctx context.Context, sha string, want host.CommitTree, res *tarball.Result) error {
	got := res.GitTrees[""]
	if got == want.ID {
		return nil
	}
	at, d, hidden, derr := r.firstDifference(ctx, want, res.GitEntries)
	attrs := slices.Clone(res.GitAttributes)
	if hidden != "" {
		attrs = append(attrs, hidden+" (which the archive leaves out)")
	}
	if len(attrs) > 0 {
		r.h.trees.update(r.memoKey(sha), func(m *memo) { m.attrs = attrs })
		return r.needsGit(sha, attrs, at)
	}
	what := "differs"
	if at != "" {
		what = fmt.Sprintf("differs at %q: %s", at, describe(d))
	}
	if derr != nil {
		what += fmt.Sprintf(" (looking further down failed: %v)", derr)
	}
	// Not a tarball.EntryError: the whole archive is suspect, not the
	// folder the difference lies in.
	return plugind.Errorf(plugind.CodeDigestMismatch,
		"the archive of %s@%s is not the commit's tree: it %s; the commit's tree is %s, the archive hashes to %s — the archive endpoint, or something between it and us, served other content for this commit",
		r.src.Key(), host.Short(sha), what, want.ID, got)
}

// describe says how an entry differs.
func describe(d gitobj.Difference) string {
	switch {
	case d.Ours == nil && d.Theirs == nil:
		return "the listings differ"
	case d.Ours == nil:
		return fmt.Sprintf("the commit has %s there, the archive nothing", aMode(d.Theirs.Mode))
	case d.Theirs == nil:
		return fmt.Sprintf("the archive has %s there, the commit nothing", aMode(d.Ours.Mode))
	case d.Ours.Mode != d.Theirs.Mode:
		return fmt.Sprintf("%s in the archive, %s in the commit", aMode(d.Ours.Mode), aMode(d.Theirs.Mode))
	}
	return fmt.Sprintf("other content (git id %s in the archive, %s in the commit)", d.Ours.ID, d.Theirs.ID)
}

// aMode names a mode with its article.
func aMode(m uint32) string {
	if n := gitobj.ModeName(m); strings.HasPrefix(n, "e") {
		return "an " + n
	}
	return "a " + gitobj.ModeName(m)
}

// firstDifference walks the commit's tree down from the root, along the
// first entry that differs from the archive's, to the path where they
// part: a file, or a folder one side lacks. hidden names a .gitattributes
// the commit has on the way and the archive lacks (export-ignore can leave
// itself out). derr says why the walk stopped early (at is then as deep as
// it got).
func (r *restRepo) firstDifference(ctx context.Context, want host.CommitTree, ours func(string) ([]gitobj.Entry, bool)) (at string, d gitobj.Difference, hidden string, derr error) {
	theirs := want.Entries
	if theirs == nil {
		if theirs, derr = r.treeEntries(ctx, want.ID); derr != nil {
			return "", d, "", derr
		}
	}
	dir := ""
	for range maxDescent {
		our, _ := ours(dir)
		if hidden == "" && hasEntry(theirs, ".gitattributes") && !hasEntry(our, ".gitattributes") {
			hidden = path.Join(dir, ".gitattributes")
		}
		var ok bool
		if d, ok = gitobj.FirstDifference(our, theirs); !ok {
			return dir, d, hidden, nil
		}
		at = path.Join(dir, d.Name)
		if d.Ours == nil || d.Theirs == nil || d.Ours.Mode != gitobj.ModeTree || d.Theirs.Mode != gitobj.ModeTree {
			return at, d, hidden, nil
		}
		if theirs, derr = r.treeEntries(ctx, d.Theirs.ID.String()); derr != nil {
			return at, d, hidden, derr
		}
		dir = at
	}
	return at, d, hidden, nil
}

func hasEntry(es []gitobj.Entry, name string) bool {
	return slices.ContainsFunc(es, func(e gitobj.Entry) bool { return e.Name == name })
}

// treeEntries reads one tree of the repository through the REST API.
func (r *restRepo) treeEntries(ctx context.Context, id string) ([]gitobj.Entry, error) {
	t, resp, err := r.h.api.Git.GetTree(ctx, r.src.Owner(), r.src.Name(), id, false)
	if err != nil {
		return nil, r.apiError(ctx, "read tree "+host.Short(id), resp, err, host.ErrPathNotFound)
	}
	if t.GetTruncated() {
		return nil, fmt.Errorf("the API truncated tree %s", host.Short(id))
	}
	out := make([]gitobj.Entry, 0, len(t.Entries))
	for _, e := range t.Entries {
		mode, merr := strconv.ParseUint(e.GetMode(), 8, 32)
		oid, ierr := gitobj.ParseID(e.GetSHA())
		if merr != nil || ierr != nil {
			return nil, fmt.Errorf("tree %s: the API listed %q with mode %q and id %q", host.Short(id), e.GetPath(), e.GetMode(), e.GetSHA())
		}
		out = append(out, gitobj.Entry{Name: e.GetPath(), Mode: uint32(mode), ID: oid})
	}
	return out, nil
}
