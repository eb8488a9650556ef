package github

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
	"github.com/hashicorp/go-retryablehttp"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/tarball"
)

// restRepo is a GitHub repository through the REST API alone: what no-git
// mode (REASONIX_GIT=off) uses for everything, and the fallback otherwise.
type restRepo struct {
	h   *Host
	src source.Source
	// commits reads a commit's tree over git (prove.go); nil when git is
	// off.
	commits host.CommitTrees
}

func (r *restRepo) Source() source.Source { return r.src }

// Refs lists branches and tags (paginated) and the default branch.
func (r *restRepo) Refs(ctx context.Context) (*host.Refs, error) {
	owner, name := r.src.Owner(), r.src.Name()
	out := &host.Refs{Commits: map[string]string{}}
	bopt := &gh.BranchListOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		bs, resp, err := r.h.api.Repositories.ListBranches(ctx, owner, name, bopt)
		if err != nil {
			return nil, r.apiError(ctx, "list branches", resp, err, host.ErrRefNotFound)
		}
		for _, b := range bs {
			out.Commits[b.GetName()] = b.GetCommit().GetSHA()
		}
		if resp.NextPage == 0 {
			break
		}
		bopt.Page = resp.NextPage
	}
	topt := &gh.ListOptions{PerPage: 100}
	for {
		ts, resp, err := r.h.api.Repositories.ListTags(ctx, owner, name, topt)
		if err != nil {
			return nil, r.apiError(ctx, "list tags", resp, err, host.ErrRefNotFound)
		}
		for _, t := range ts {
			out.Commits[t.GetName()] = t.GetCommit().GetSHA()
		}
		if resp.NextPage == 0 {
			break
		}
		topt.Page = resp.NextPage
	}
	if repo, resp, err := r.h.api.Repositories.Get(ctx, owner, name); err == nil {
		out.Head = repo.GetDefaultBranch()
		if sha, ok := out.Commits[out.Head]; ok {
			out.Commits[host.HeadRef] = sha
		}
	} else if resp == nil || resp.StatusCode != http.StatusNotFound {
		return nil, r.apiError(ctx, "read", resp, err, host.ErrRepoNotFound)
	}
	return out, nil
}

// Resolve asks commits/{ref} with the sha media type, conditionally on the
// last answer's ETag: an unchanged ref costs one 304.
func (r *restRepo) Resolve(ctx context.Context, ref string, known *host.Pin) (host.Pin, error) {
	if source.IsSHA(ref) {
		return host.Pin{SHA: ref}, nil
	}
	ref = host.RefName(ref)
	last := ""
	if known != nil {
		last = known.SHA
	}
	sha, resp, err := r.h.api.Repositories.GetCommitSHA1(ctx, r.src.Owner(), r.src.Name(), ref, last)
	now := time.Now()
	switch {
	case err != nil && resp != nil && resp.StatusCode == http.StatusNotModified && known != nil:
		return host.Pin{SHA: known.SHA, ETag: known.ETag, NotModified: true, At: now}, nil
	case err == nil:
		sha = strings.TrimSpace(sha)
		if !source.IsSHA(sha) {
			return host.Pin{}, plugind.Errorf(plugind.CodeSourceUnreadable, "resolve %s of %s: the API answered %q, not a commit id", host.DescribeRef(ref), r.src.Key(), jsondoc.Clip(sha, 60))
		}
		return host.Pin{SHA: sha, ETag: `"` + sha + `"`, At: now}, nil
	}
	return host.Pin{}, r.apiError(ctx, host.DescribeRef(ref), resp, err, host.ErrRefNotFound)
}

// maxCompares bounds how many refs a reachability check compares against
// before it gives up and calls the commit unreachable.
const maxCompares = 8

// Reachable compares the commit with the hint, the default branch, then the
// other branches and tags: "behind" or "identical" means it is an ancestor
// of that ref. A compare that 404s means the commit is not in the
// repository at all.
func (r *restRepo) Reachable(ctx context.Context, sha, hint string) error {
	owner, name := r.src.Owner(), r.src.Name()
	bases := slices.Compact([]string{cmp.Or(hint, host.HeadRef), host.HeadRef}) // the hint, unless none or HEAD, then HEAD
	tried := map[string]bool{}
	check := func(base string) (bool, error) {
		tried[base] = true
		cmp, resp, err := r.h.api.Repositories.CompareCommits(ctx, owner, name, base, sha, &gh.ListOptions{PerPage: 1})
		if err != nil {
			if resp != nil && resp.StatusCode == http.StatusNotFound {
				if !r.repoExists(ctx) {
					return false, plugind.Errorf(plugind.CodeNotFound, "%s: %w", r.src.Key(), host.ErrRepoNotFound)
				}
				if base == host.HeadRef {
					return false, plugind.Errorf(plugind.CodeNotFound, "commit %s: %w %s", sha, host.ErrCommitNotFound, r.src.Key())
				}
				return false, nil // the hint may be a ref that is gone
			}
			return false, r.apiError(ctx, "compare "+host.Short(sha)+" with "+host.DescribeRef(base), resp, err, host.ErrCommitNotFound)
		}
		switch cmp.GetStatus() {
		case "behind", "identical":
			// The merge base of a commit behind a ref is the commit
			// itself, and the answer names its tree: an archive of it is
			// proven without another request (prove.go).
			if mb := cmp.GetMergeBaseCommit(); mb.GetSHA() == sha {
				r.rememberTree(sha, mb.GetCommit().GetTree().GetSHA())
			}
			return true, nil
		}
		return false, nil
	}
	for _, b := range bases {
		ok, err := check(b)
		if err != nil || ok {
			return err
		}
	}
	refs, err := r.Refs(ctx)
	if err != nil {
		return err
	}
	if refs.Has(sha) {
		return nil
	}
	names := refs.Names()
	slices.Sort(names)
	n := 0
	for _, b := range names {
		if tried[b] || b == refs.Head {
			continue
		}
		if n++; n > maxCompares {
			break
		}
		ok, err := check(b)
		if err != nil || ok {
			return err
		}
	}
	return plugind.Errorf(plugind.CodeNotFound, "commit %s of %s: %w (compared with the default branch and %d other refs); GitHub serves commits of any fork of a repository, so a pin must name one its own branches or tags reach", sha, r.src.Key(), host.ErrUnreachable, min(n, maxCompares))
}

// Fetch downloads the commit's archive (following the REST archive link's
// redirect) and extracts it as it streams in. The archive's root folder and
// pax comment must name the commit, and its content, hashed as git hashes
// a tree, the commit's tree (prove.go). An archive endpoint proves nothing
// about reachability, so with Verify the commit is checked first.
func (r *restRepo) Fetch(ctx context.Context, sha, dest string, opts host.FetchOptions) (*host.Fetched, error) {
	if !source.IsSHA(sha) {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "fetch %s: %q is not a commit id", r.src.Key(), sha)
	}
	if attrs := r.exportAttributes(sha); len(attrs) > 0 {
		return nil, r.needsGit(sha, attrs, "")
	}
	if opts.Verify {
		if err := r.Reachable(ctx, sha, ""); err != nil {
			return nil, err
		}
	}
	link, err := r.h.api.BaseURL.Parse(fmt.Sprintf("repos/%s/%s/tarball/%s", r.src.Owner(), r.src.Name(), sha))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The commit's tree is read while the archive downloads.
	type commitTree struct {
		tree host.CommitTree
		err  error
	}
	want := make(chan commitTree, 1)
	go func() {
		ct, err := r.commitTree(ctx, sha)
		want <- commitTree{ct, err}
	}()
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, link.String(), nil)
	if err != nil {
		return nil, err
	}
	if r.h.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.h.cfg.Token)
	}
	resp, err := r.h.cfg.REST.Do(req)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		if rl := r.rateLimited(nil, err); rl != nil {
			err = rl
		}
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "download the archive of %s@%s: %w", r.src.Key(), host.Short(sha), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// Answered as any REST call is: which is missing, the repository
		// or the commit; refused credentials; a spent rate limit.
		return nil, r.apiError(ctx, "download the archive at "+host.Short(sha), &gh.Response{Response: resp},
			fmt.Errorf("%s answered %s", resp.Request.URL.Host, resp.Status), host.ErrCommitNotFound)
	}
	body := host.NewStallReader(resp.Body, resp.Request.URL.Host, r.h.cfg.Timeout, cancel)
	defer body.Close()
	release, err := opts.Writing(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	res, err := tarball.ExtractTarGz(ctx, io.Reader(body), dest, tarball.Options{
		Budget: opts.Budget, StripRoot: true, ExpectCommit: sha,
		Paths: opts.Paths, Progress: opts.Progress,
		Hash: opts.Hash, ReadOnly: opts.Hash, SingleThreaded: opts.Concurrent,
		Submodules: opts.Submodules, FindGitlinks: r.gitlinks(sha), GitTree: true,
	})
	if err != nil {
		return nil, fmt.Errorf("archive of %s@%s: %w", r.src.Key(), host.Short(sha), err)
	}
	ct := <-want
	if err = ct.err; err == nil {
		err = r.proven(ctx, sha, ct.tree, res)
	} else {
		err = fmt.Errorf("prove the archive of %s@%s against the commit: %w", r.src.Key(), host.Short(sha), err)
	}
	if err != nil {
		if rmErr := os.RemoveAll(dest); rmErr != nil {
			err = fmt.Errorf("%w (and removing the extraction failed: %v)", err, rmErr)
		}
		return nil, err
	}
	return &host.Fetched{Transport: "archive", Verified: opts.Verify, Files: res.Files, Bytes: res.Bytes, Tree: res.Tree, Dirs: res.Dirs, Submodules: res.Submodules,
		Proof: host.ProofGitTree, GitTrees: res.GitTrees}, nil
}

// gitlinks answers tarball.Options.FindGitlinks for the archive of sha: an
// archive holds a submodule as an empty folder, and only the contents API
// says which commit the folder pins (one request per folder asked about,
// which the Writer limits to .gitmodules folders the fetch keeps).
func (r *restRepo) gitlinks(sha string) func(ctx context.Context, paths []string) (map[string]string, error) {
	return func(ctx context.Context, paths []string) (map[string]string, error) {
		out := map[string]string{}
		for _, p := range paths {
			fc, _, resp, err := r.h.api.Repositories.GetContents(ctx, r.src.Owner(), r.src.Name(), p, &gh.RepositoryContentGetOptions{Ref: sha})
			switch {
			case err != nil && resp != nil && resp.StatusCode == http.StatusNotFound:
				continue // not there: not a submodule
			case err != nil:
				return nil, r.apiError(ctx, fmt.Sprintf("folder %q at %s", p, host.Short(sha)), resp, err, host.ErrPathNotFound)
			}
			// A submodule asked for by its path is "submodule"; in folder
			// listings GitHub calls it a "file" with a submodule URL.
			if fc != nil && (fc.GetType() == "submodule" || fc.SubmoduleGitURL != nil) {
				out[p] = fc.GetSHA()
			}
		}
		return out, nil
	}
}
