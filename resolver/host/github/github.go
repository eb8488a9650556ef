// Package github is the host for repositories on github.com: the REST API
// for refs (conditional, so an unchanged ref costs one 304), reachability
// (compare) and archives; git (a Repo the caller layers, see
// resolver.Hosts.stack) for content and ref listings, with the archive as
// the fallback when git is off or fails (SPEC §6).
package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/tarball"
)

// Config is how GitHub is reached.
type Config struct {
	// APIURL is the REST API base (REASONIX_GITHUB_API_URL; default
	// https://api.github.com).
	APIURL string
	// Token, when set, authenticates REST calls (git's transport carries
	// its own); it is sent to no other host.
	Token string
	// REST (required) makes API calls and archive downloads (retries,
	// Retry-After); its transport must count them against Budget
	// (APIBudget.RoundTripper).
	REST *host.RESTClient
	// Budget is the REST API's request budget, shared by every repository
	// of this host; while it is spent, git serves refs, reachability and
	// content without asking the API (SPEC §14). nil: never spent.
	Budget  *host.APIBudget
	Timeout time.Duration // stall limit of a download
	Log     *slog.Logger
}

// APIName names GitHub's REST API in messages (and its APIBudget).
const APIName = "the GitHub API"

// Host opens GitHub repositories.
type Host struct {
	cfg   Config
	api   *gh.Client
	trees *treeMemo // commits' trees, for proving archives (prove.go)
}

// New returns the GitHub host.
func New(cfg Config) (*Host, error) {
	cfg.APIURL = strings.TrimSuffix(cmp.Or(cfg.APIURL, "https://api.github.com"), "/")
	cfg.Log = cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	if cfg.REST == nil {
		return nil, errors.New("github host: no REST client")
	}
	cfg.Timeout = cmp.Or(cfg.Timeout, host.DefaultTimeout)
	api := gh.NewClient(cfg.REST.StandardClient())
	if cfg.Token != "" {
		api = api.WithAuthToken(cfg.Token)
	}
	base, err := url.Parse(cfg.APIURL + "/")
	if err != nil {
		return nil, fmt.Errorf("REASONIX_GITHUB_API_URL %q: %w", cfg.APIURL, err)
	}
	api.BaseURL = base
	return &Host{cfg: cfg, api: api, trees: &treeMemo{}}, nil
}

// Open opens src: git first for content and ref listings, the REST API
// first for resolving refs, each falling back to the other. git is src's
// git transport as the caller layered it (resolver.Hosts.stack); nil when
// git is off (REASONIX_GIT=off), and the REST API and archives serve alone.
func (h *Host) Open(src source.Source, git host.Repo) (host.Repo, error) {
	if src.Kind != source.GitHub {
		return nil, fmt.Errorf("github host: %s is not a GitHub source", src.Key())
	}
	rest := &restRepo{h: h, src: src}
	if git == nil {
		return rest, nil
	}
	rest.commits, _ = git.(host.CommitTrees)
	return &repo{
		rest:    rest,
		git:     git,
		content: &host.Fallback{Primary: git, Secondary: rest, PrimaryLabel: "git", SecondaryLabel: "the archive"},
		folders: &host.Fallback{Primary: rest, Secondary: git, PrimaryLabel: "the archive", SecondaryLabel: "git"},
		refs:    &host.Fallback{Primary: rest, Secondary: git, PrimaryLabel: "the GitHub API", SecondaryLabel: "the git remote"},
	}, nil
}

// repo picks, per operation, which transport goes first.
type repo struct {
	rest    *restRepo
	git     host.Repo
	content *host.Fallback // git → archive: Refs, Fetch of a whole tree
	folders *host.Fallback // archive → git: Fetch of some folders
	refs    *host.Fallback // REST → git: Resolve, Reachable
}

// folderFetch reports whether a fetch keeps only some folders of the tree
// (a git-subdir entry, a tree URL's path, a marketplace's plugin folders).
// Both transports then download the whole tree, but the archive is
// streamed and everything outside the folders dropped as it passes, while
// git must store and index the whole pack first: the archive is the
// cheaper way (SPEC §6), and gives the same files, so the same digest.
func folderFetch(paths []string) bool { return tarball.Keeps(paths) != nil }

func (r *repo) Source() source.Source { return r.rest.src }

// restSpent reports whether the REST API's budget is spent: every
// operation then goes to git straight away, without trying the API (SPEC
// §14), and the plan says so once (host.WatchBudgets).
func (r *repo) restSpent(ctx context.Context) bool { return r.rest.h.cfg.Budget.Spent(ctx) != nil }

// via is order, or git alone while the REST API's budget is spent (the
// archive is a REST request too).
func (r *repo) via(ctx context.Context, order *host.Fallback) host.Repo {
	if r.restSpent(ctx) {
		return r.git
	}
	return order
}

func (r *repo) Refs(ctx context.Context) (*host.Refs, error) { return r.via(ctx, r.content).Refs(ctx) }

func (r *repo) Resolve(ctx context.Context, ref string, known *host.Pin) (host.Pin, error) {
	return r.via(ctx, r.refs).Resolve(ctx, ref, known)
}

// Reachable asks the REST API (one compare per ref tried), and when the API
// fails or its budget is spent, git (the branches' and tags' history).
func (r *repo) Reachable(ctx context.Context, sha, hint string) error {
	return r.via(ctx, r.refs).Reachable(ctx, sha, hint)
}

// Fetch is git first, the archive when git fails — or, for a fetch of
// some folders only, the archive first (folderFetch). A pin is proven
// reachable before anything is downloaded, through the API: GitHub serves
// any commit of a repository's fork network by id, over git as through
// archives, so no transport's willingness to serve a commit proves
// anything. git's "not our ref" cannot tell an absent commit from an
// unreachable one; the API can, so a refusal is explained by it.
func (r *repo) Fetch(ctx context.Context, sha, dest string, opts host.FetchOptions) (*host.Fetched, error) {
	verified := false
	if opts.Verify {
		// A tip of a branch or tag needs no API call: git's advertisement,
		// which the fetch needs anyway, shows it.
		if refs, err := r.git.Refs(ctx); err != nil || !refs.Has(sha) {
			if err := r.Reachable(ctx, sha, ""); err != nil {
				return nil, err
			}
		}
		opts.Verify, verified = false, true
	}
	order := r.content
	if folderFetch(opts.Paths) {
		order = r.folders
	}
	got, err := r.via(ctx, order).Fetch(ctx, sha, dest, opts)
	if got != nil {
		got.Verified = got.Verified || verified
	}
	if errors.Is(err, host.ErrUnreachable) && !r.restSpent(ctx) {
		if rerr := r.rest.Reachable(ctx, sha, ""); rerr != nil && (errors.Is(rerr, host.ErrCommitNotFound) || errors.Is(rerr, host.ErrRepoNotFound) || errors.Is(rerr, host.ErrUnreachable)) {
			return nil, rerr
		}
	}
	return got, err
}

// apiError explains a failed REST call or archive download: not found
// (repository or ref), refused credentials, rate limiting (with the fix),
// or the transport failure.
func (r *restRepo) apiError(ctx context.Context, what string, resp *gh.Response, err error, notFound error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	key := r.src.Key()
	if resp != nil {
		switch resp.StatusCode {
		case http.StatusNotFound, http.StatusUnprocessableEntity:
			if !r.repoExists(ctx) {
				return plugind.Errorf(plugind.CodeNotFound, "%s: %w", key, host.ErrRepoNotFound)
			}
			return plugind.Errorf(plugind.CodeNotFound, "%s of %s: %w", what, key, notFound)
		case http.StatusUnauthorized:
			// Refused credentials are final (host.ErrRefused), as over git.
			return &plugind.Error{Code: plugind.CodeSourceUnreadable, Err: host.ErrRefused,
				Msg: fmt.Sprintf("%s of %s: GitHub refused the credentials (HTTP 401); check GITHUB_TOKEN", what, key)}
		case http.StatusForbidden, http.StatusTooManyRequests:
			if rl := r.rateLimited(resp.Response, err); rl != nil {
				return plugind.Errorf(plugind.CodeSourceUnreadable, "%s of %s: %w", what, key, rl)
			}
			var secondary *gh.AbuseRateLimitError
			if resp.StatusCode == http.StatusTooManyRequests || errors.As(err, &secondary) {
				return plugind.Errorf(plugind.CodeSourceUnreadable, "%s of %s: the GitHub API is rate limiting (HTTP %d); set GITHUB_TOKEN, or retry later (or plan --offline from the cache)", what, key, resp.StatusCode)
			}
		}
	}
	if rl := r.rateLimited(nil, err); rl != nil {
		return plugind.Errorf(plugind.CodeSourceUnreadable, "%s of %s: %w", what, key, rl)
	}
	return plugind.Errorf(plugind.CodeSourceUnreadable, "%s of %s: %w", what, key, err)
}

// rateLimited is the spent budget behind a failed REST call: a request the
// budget refused before sending it, a 403 or 429 answer with
// X-RateLimit-Remaining: 0, or go-github's own refusal after one; nil for
// any other failure.
func (r *restRepo) rateLimited(resp *http.Response, err error) *host.RateLimitedError {
	var rl *host.RateLimitedError
	var ghl *gh.RateLimitError
	switch {
	case errors.As(err, &rl):
		return rl
	case host.RateLimitedAnswer(resp), errors.As(err, &ghl):
		if rl = r.h.cfg.Budget.Err(); rl != nil {
			return rl
		}
		until := time.Now().Add(time.Minute)
		if reset := host.RateLimitReset(resp); reset.After(time.Now()) {
			until = reset
		} else if ghl != nil && ghl.Rate.Reset.After(time.Now()) {
			until = ghl.Rate.Reset.Time
		}
		return &host.RateLimitedError{API: APIName, Until: until, Token: r.h.cfg.Token != ""}
	}
	return nil
}

// repoExists tells a missing repository from a missing ref or commit (one
// request, only on an error path).
func (r *restRepo) repoExists(ctx context.Context) bool {
	_, resp, err := r.h.api.Repositories.Get(ctx, r.src.Owner(), r.src.Name())
	return err == nil || resp == nil || resp.StatusCode != http.StatusNotFound
}
