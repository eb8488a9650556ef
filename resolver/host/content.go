package host

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/tarball"
)

// KindContent is a remembered content verdict (SPEC §8): the tree of a
// commit, or of some folders of it, was refused as unsafe or over the
// budget. It is a negative answer like a missing commit — kept for
// NegativeTTL, ignored with --refresh — keyed by (repository, commit,
// folders, budget): the same pin and folders give the same verdict, so a
// re-plan does not download them again to hear it.
const KindContent = "content"

// contentKey is the negatives' path of a fetch of paths within budget.
func contentKey(paths []string, budget plugind.Budget) string {
	sorted := slices.Sorted(slices.Values(paths))
	if slices.ContainsFunc(sorted, func(p string) bool { return p == "" || p == "." }) {
		sorted = nil
	}
	return fmt.Sprintf("%d:%d:%s", budget.MaxBytes, budget.MaxFiles, strings.Join(sorted, "\n"))
}

// RefusedContent reports whether err is a verdict on the content itself.
func RefusedContent(err error) bool {
	return slices.Contains([]plugind.Code{plugind.CodeUnsafeArchive, plugind.CodeBudgetExceeded}, plugind.CodeOf(err))
}

// FolderOf finds the folder of paths that err, a refusal of one entry of
// the tree, is about.
func FolderOf(err error, paths []string) (string, bool) {
	at, ok := tarball.PathOf(err)
	i := slices.IndexFunc(paths, func(p string) bool { return at == p || strings.HasPrefix(at, p+"/") })
	if !ok || i < 0 {
		return "", false
	}
	return paths[i], true
}

// contentVerdict returns a remembered refusal of this fetch: of its folders
// together, or — when it keeps several — of one of them, as the
// tarball.EntryError a fresh refusal of that folder would be, so the
// caller can fetch the others without it.
func (c *Cached) contentVerdict(ctx context.Context, sha string, opts FetchOptions) error {
	keys := []cache.NegativeKey{{Kind: KindContent, SHA: sha, Path: contentKey(opts.Paths, opts.Budget)}}
	if len(opts.Paths) > 1 {
		for _, p := range opts.Paths {
			keys = append(keys, cache.NegativeKey{Kind: KindContent, SHA: sha, Path: contentKey([]string{p}, opts.Budget)})
		}
	}
	n, refused := c.recall(ctx, keys...)
	// keys[1:] are the folders', in the order of opts.Paths.
	if i := slices.IndexFunc(keys[1:], func(k cache.NegativeKey) bool { return k.Path == n.Path }); refused != nil && i >= 0 {
		return &tarball.EntryError{Path: opts.Paths[i], Err: refused}
	}
	return refused
}

// rememberContent records a refused fetch: for its folders together and,
// when the refusal names an entry in one of several folders, for that
// folder alone.
func (c *Cached) rememberContent(ctx context.Context, sha string, opts FetchOptions, err error) {
	if !RefusedContent(err) {
		return
	}
	c.putNegative(ctx, KindContent, sha, contentKey(opts.Paths, opts.Budget), err)
	if p, ok := FolderOf(err, opts.Paths); ok && len(opts.Paths) > 1 {
		c.putNegative(ctx, KindContent, sha, contentKey([]string{p}, opts.Budget), err)
	}
}
