package resolver

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-github/v62/github"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/resolver/source"
)

// headRef is how the default branch is asked for and cached: GitHub's
// commits/HEAD answers with the default branch's head.
const headRef = "HEAD"

// remoteKey names a repository in the cache, independent of where its
// transport points.
func remoteKey(r *source.Remote) string { return "github.com/" + r.FullName() }

// resolvedRef is a ref pinned to a commit, and how we know.
type resolvedRef struct {
	SHA     string
	Warning string
}

// resolveRef pins ref ("" = the default branch) to a commit. Online it asks
// the REST API with the cached SHA as ETag, so an unchanged ref costs one
// 304; offline, or when the network fails and the cache can answer, the
// cache answers and the result says how old it is.
func (s *Sources) resolveRef(ctx context.Context, r *source.Remote, ref string, offline bool) (resolvedRef, error) {
	if source.IsSHA(ref) {
		return resolvedRef{SHA: ref}, nil
	}
	if ref == "" {
		ref = headRef
	}
	key := remoteKey(r)
	cached, hit, err := s.getRef(ctx, key, ref)
	if err != nil {
		return resolvedRef{}, err
	}
	if offline {
		if !hit {
			return resolvedRef{}, plugind.Errorf(plugind.CodeOfflineMiss, "offline: %s of %s was never resolved, so it is not in the cache", describeRef(ref), key)
		}
		s.count(ctx, cache.KindRef, true)
		return resolvedRef{SHA: cached.SHA, Warning: fmt.Sprintf("offline: %s of %s is %s as cached %s", describeRef(ref), key, short(cached.SHA), s.age(cached.ResolvedAt))}, nil
	}
	last := ""
	if hit {
		last = cached.SHA
	}
	sha, resp, err := s.gh.Repositories.GetCommitSHA1(ctx, r.Owner, r.Repo, ref, last)
	if err != nil && resp != nil && resp.StatusCode == http.StatusNotModified && hit {
		s.count(ctx, cache.KindRef, true)
		cached.ResolvedAt = s.cfg.Now()
		_ = s.putRef(ctx, cached)
		return resolvedRef{SHA: cached.SHA}, nil
	}
	if err == nil {
		sha = strings.TrimSpace(sha)
		if !source.IsSHA(sha) {
			return resolvedRef{}, plugind.Errorf(plugind.CodeSourceUnreadable, "resolve %s of %s: the API answered %q, not a commit id", describeRef(ref), key, truncate(sha, 60))
		}
		s.count(ctx, cache.KindRef, false)
		_ = s.putRef(ctx, cache.Ref{Remote: key, Ref: ref, SHA: sha, ETag: `"` + sha + `"`, ResolvedAt: s.cfg.Now()})
		return resolvedRef{SHA: sha}, nil
	}
	if resp != nil && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusUnprocessableEntity) {
		return resolvedRef{}, plugind.Errorf(plugind.CodeNotFound, "%s of %s does not exist (HTTP %d)", describeRef(ref), key, resp.StatusCode)
	}
	// The API failed. Git may still answer; failing that, the cache.
	apiErr := err
	if !s.cfg.GitOff {
		if sha, gerr := s.lsRemoteRef(ctx, r, ref); gerr == nil {
			_ = s.putRef(ctx, cache.Ref{Remote: key, Ref: ref, SHA: sha, ResolvedAt: s.cfg.Now()})
			return resolvedRef{SHA: sha, Warning: fmt.Sprintf("the GitHub API failed (%v); resolved %s of %s from the git remote", apiErr, describeRef(ref), key)}, nil
		}
	}
	if hit {
		return resolvedRef{SHA: cached.SHA, Warning: fmt.Sprintf("network failed (%v); planned from cache: %s of %s is %s as cached %s", apiErr, describeRef(ref), key, short(cached.SHA), s.age(cached.ResolvedAt))}, nil
	}
	return resolvedRef{}, plugind.Errorf(plugind.CodeSourceUnreadable, "resolve %s of %s: %w", describeRef(ref), key, apiErr)
}

func describeRef(ref string) string {
	if ref == headRef {
		return "the default branch"
	}
	return "ref " + ref
}

func (s *Sources) age(t time.Time) string {
	d := s.cfg.Now().Sub(t).Round(time.Second)
	if d < 0 {
		d = 0
	}
	return d.String() + " ago"
}

func (s *Sources) getRef(ctx context.Context, remote, ref string) (cache.Ref, bool, error) {
	if s.cfg.Cache == nil {
		return cache.Ref{}, false, nil
	}
	return s.cfg.Cache.GetRef(ctx, remote, ref)
}

func (s *Sources) putRef(ctx context.Context, r cache.Ref) error {
	if s.cfg.Cache == nil {
		return nil
	}
	return s.cfg.Cache.PutRef(ctx, r)
}

func (s *Sources) count(ctx context.Context, kind string, hit bool) {
	if s.cfg.Cache != nil {
		_ = s.cfg.Cache.Count(ctx, kind, hit)
	}
}

// gitURL is the smart-HTTP address of a repository on the configured host.
func (s *Sources) gitURL(r *source.Remote) string {
	return s.cfg.GitHubURL + "/" + r.FullName() + ".git"
}

// advertised lists the remote's refs over git (ls-remote), as short names
// ("main", "release/v2", "v1.0") mapped to commits.
func (s *Sources) advertised(ctx context.Context, r *source.Remote) (map[string]string, string, error) {
	rem := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{s.gitURL(r)}})
	refs, err := rem.ListContext(ctx, &git.ListOptions{Auth: s.gitAuth()})
	if err != nil {
		return nil, "", fmt.Errorf("list refs of %s over git: %w", remoteKey(r), err)
	}
	out := map[string]string{}
	head := ""
	for _, ref := range refs {
		name := ref.Name()
		switch {
		case name == plumbing.HEAD:
			if ref.Type() == plumbing.SymbolicReference {
				head = ref.Target().Short()
			} else {
				out[headRef] = ref.Hash().String()
			}
		case name.IsBranch() || name.IsTag():
			out[name.Short()] = ref.Hash().String()
		}
	}
	if head != "" {
		if sha, ok := out[head]; ok {
			out[headRef] = sha
		}
	}
	return out, head, nil
}

func (s *Sources) lsRemoteRef(ctx context.Context, r *source.Remote, ref string) (string, error) {
	refs, _, err := s.advertised(ctx, r)
	if err != nil {
		return "", err
	}
	if sha, ok := refs[ref]; ok {
		return sha, nil
	}
	return "", fmt.Errorf("%s is not advertised by %s", describeRef(ref), remoteKey(r))
}

// refNames lists branch and tag names, for splitting a tree URL's REF from
// its PATH: over git when it is on, else from the REST API.
func (s *Sources) refNames(ctx context.Context, r *source.Remote) ([]string, error) {
	if !s.cfg.GitOff {
		refs, _, err := s.advertised(ctx, r)
		if err == nil {
			names := make([]string, 0, len(refs))
			for n := range refs {
				names = append(names, n)
			}
			sort.Strings(names)
			return names, nil
		}
		s.cfg.Log.Warn("listing refs over git failed; asking the API", "repo", remoteKey(r), "err", err)
	}
	var names []string
	opt := &github.BranchListOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		bs, resp, err := s.gh.Repositories.ListBranches(ctx, r.Owner, r.Repo, opt)
		if err != nil {
			return nil, fmt.Errorf("list branches of %s: %w", remoteKey(r), err)
		}
		for _, b := range bs {
			names = append(names, b.GetName())
		}
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	topt := &github.ListOptions{PerPage: 100}
	for {
		ts, resp, err := s.gh.Repositories.ListTags(ctx, r.Owner, r.Repo, topt)
		if err != nil {
			return nil, fmt.Errorf("list tags of %s: %w", remoteKey(r), err)
		}
		for _, t := range ts {
			names = append(names, t.GetName())
		}
		if resp.NextPage == 0 {
			break
		}
		topt.Page = resp.NextPage
	}
	return names, nil
}

// splitTree splits a tree URL into REF and PATH. Offline, the refs this
// cache has resolved before stand in for the remote's list.
func (s *Sources) splitTree(ctx context.Context, r *source.Remote, offline bool) {
	if !r.IsTree() {
		return
	}
	segs := strings.Split(r.TreeRest, "/")
	if len(segs) == 1 || source.IsSHA(segs[0]) {
		r.SplitTree(nil)
		return
	}
	if offline {
		var known []string
		for i := len(segs); i >= 1; i-- {
			cand := strings.Join(segs[:i], "/")
			if _, hit, err := s.getRef(ctx, remoteKey(r), cand); err == nil && hit {
				known = append(known, cand)
			}
		}
		r.SplitTree(known)
		return
	}
	names, err := s.refNames(ctx, r)
	if err != nil {
		// SPEC §5: only when the refs cannot be listed, take the first segment.
		s.cfg.Log.Warn("cannot list refs; taking the first segment as the ref", "repo", remoteKey(r), "err", err)
		names = nil
	}
	r.SplitTree(names)
}

// gitAuth is the token as HTTP basic auth, or nil (no auth) without one.
func (s *Sources) gitAuth() transport.AuthMethod {
	if s.cfg.Token == "" {
		return nil
	}
	return &githttp.BasicAuth{Username: "x-access-token", Password: s.cfg.Token}
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
