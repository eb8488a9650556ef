package fakegithub

import (
	"context"
	"errors"
	"sort"
	"strings"
)

// ref is a branch or tag with the commit it designates (annotated tags
// peeled).
type ref struct {
	name   string // full name, refs/heads/x or refs/tags/x
	object string // what the ref stores (a tag object for annotated tags)
	commit string
}

func (q ref) short() string {
	return strings.TrimPrefix(strings.TrimPrefix(q.name, "refs/heads/"), "refs/tags/")
}

// refs lists branches and tags, sorted by name.
func (r *Repo) refs(ctx context.Context) ([]ref, error) {
	out, err := r.s.runGit(ctx, r.gitDir, nil, "for-each-ref",
		"--format=%(refname)%00%(objectname)%00%(*objectname)", "refs/heads", "refs/tags")
	if err != nil {
		return nil, err
	}
	var refs []ref
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\x00")
		if len(f) != 3 {
			continue
		}
		q := ref{name: f[0], object: f[1], commit: f[1]}
		if f[2] != "" {
			q.commit = f[2]
		}
		refs = append(refs, q)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].name < refs[j].name })
	return refs, nil
}

var errNoRef = errors.New("no such ref")

// resolve turns what GitHub accepts as a ref (branch, tag, full or short
// hex SHA, refs/heads/…, heads/…, HEAD) into a commit SHA. errNoRef means
// nothing matched.
func (r *Repo) resolve(ctx context.Context, name string) (string, error) {
	if name == "" || name == "HEAD" {
		name = "refs/heads/" + r.DefaultBranch()
	}
	if isHex40(name) {
		return r.commitOf(ctx, name)
	}
	refs, err := r.refs(ctx)
	if err != nil {
		return "", err
	}
	for _, full := range []string{name, "refs/" + name, "refs/heads/" + name, "refs/tags/" + name} {
		for _, q := range refs {
			if q.name == full {
				return q.commit, nil
			}
		}
	}
	if len(name) >= 4 && isHex(name) {
		return r.commitOf(ctx, name)
	}
	return "", errNoRef
}

// commitOf verifies that hex names a commit (peeling tags) and returns its
// full SHA.
func (r *Repo) commitOf(ctx context.Context, hex string) (string, error) {
	out, err := r.s.runGit(ctx, r.gitDir, nil, "rev-parse", "--quiet", "--verify", "--end-of-options", hex+"^{commit}")
	var ge *gitError
	if errors.As(err, &ge) && ge.exitCode() != -1 {
		return "", errNoRef
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
