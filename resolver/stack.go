package resolver

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/resolver/host/git"
	"reasonix.io/plugind/resolver/host/github"
	"reasonix.io/plugind/resolver/host/mirror"
	"reasonix.io/plugind/source"
)

// HostConfig is where remote sources are fetched from (SPEC §4, §15).
type HostConfig struct {
	GitHubURL string // REASONIX_GITHUB_URL
	APIURL    string // REASONIX_GITHUB_API_URL
	Token     string // GITHUB_TOKEN / GH_TOKEN: sent to GitHub only
	GitOff    bool   // REASONIX_GIT=off
	// Rewrite maps repository URLs to transport URLs
	// (REASONIX_URL_REWRITE), for any host.
	Rewrite *host.Rewrite
	// Mirror, when set, is the team mirror every repository is asked
	// first (REASONIX_MIRROR…; mirror.ConfigFromEnv).
	Mirror *mirror.Config
	// Credentials answers a generic HTTPS host's 401 (git's credential
	// helpers, then ~/.netrc; host.Credentials); nil: none are sent.
	Credentials *host.Credentials
	// Home is the user's home directory: ~/.ssh (keys, known_hosts) and
	// ~/.netrc are read there; "" reads neither.
	Home string
	// SSHAuthSock is the SSH agent's socket (SSH_AUTH_SOCK); User the
	// account an SSH URL without one logs in as (USER, as ssh does).
	SSHAuthSock, User string
	Net               host.NetConfig
	Log               *slog.Logger
}

// HostConfigFromEnv reads the environment of SPEC §4, all but the mirror's
// (a mirror's own upstream is reached directly).
func HostConfigFromEnv(getenv func(string) string, log *slog.Logger) (HostConfig, error) {
	rw, err := host.ParseRewrite(getenv("REASONIX_URL_REWRITE"))
	if err != nil {
		return HostConfig{}, plugind.Errorf(plugind.CodeInvalidSource, "%v", err)
	}
	return HostConfig{
		GitHubURL:   getenv("REASONIX_GITHUB_URL"),
		APIURL:      getenv("REASONIX_GITHUB_API_URL"),
		Token:       cmp.Or(getenv("GITHUB_TOKEN"), getenv("GH_TOKEN")),
		GitOff:      strings.EqualFold(getenv("REASONIX_GIT"), "off"),
		Rewrite:     rw,
		Home:        getenv("HOME"),
		Credentials: &host.Credentials{Home: getenv("HOME"), Env: helperEnv(getenv), Log: log},
		SSHAuthSock: getenv("SSH_AUTH_SOCK"),
		User:        getenv("USER"),
		Net:         host.NetConfig{Log: log},
		Log:         log,
	}, nil
}

// helperEnv is git credential's environment: the process's, with what
// getenv says of where git finds its configuration (the same in
// production; a test's throwaway home and GIT_CONFIG_GLOBAL otherwise).
func helperEnv(getenv func(string) string) []string {
	env := os.Environ()
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "PATH"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v) // the last of a name wins (os/exec)
		}
	}
	return env
}

// Hosts holds what every repository's host stack shares, for as long as
// the process plans: one connection pool, GitHub's REST client and API
// budget, the mirror's client. Hosts.stack layers them for one repository.
type Hosts struct {
	cfg       HostConfig
	github    *github.Host
	githubGit string // github.com's git side, after REASONIX_GITHUB_URL or a rewrite
	git       *http.Client
	ssh       *git.SSHConfig
	mirror    *mirror.Client // nil: no team mirror
}

// NewHosts builds the hosts of cfg.
func NewHosts(cfg HostConfig) (*Hosts, error) {
	cfg.Log = cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	cfg.Net.Log = cmp.Or(cfg.Net.Log, cfg.Log)
	// Every request reports to its context's Watcher (the CLI's progress).
	rt := host.Watch(host.NewTransport(cfg.Net), cfg.Net.Timeout)
	// REASONIX_GITHUB_URL and _API_URL win; a rewrite rule for github.com
	// works too.
	gitURL := cmp.Or(cfg.GitHubURL, cfg.Rewrite.Apply("https://github.com/"))
	apiURL := cmp.Or(cfg.APIURL, strings.TrimSuffix(cfg.Rewrite.Apply("https://api.github.com/"), "/"))
	// One budget for GitHub's REST API, for as long as these hosts live
	// (the daemon's, across its requests): every API call and archive
	// link goes through it, git does not (SPEC §14).
	budget := host.NewAPIBudget(host.BudgetConfig{Name: github.APIName, BaseURL: apiURL, Token: cfg.Token != "", Log: cfg.Log})
	gh, err := github.New(github.Config{
		APIURL: apiURL, Token: cfg.Token,
		REST: host.NewRetryingClient(budget.RoundTripper(rt), cfg.Net), Budget: budget,
		Timeout: cfg.Net.Timeout, Log: cfg.Log,
	})
	if err != nil {
		return nil, err
	}
	h := &Hosts{cfg: cfg, github: gh, githubGit: strings.TrimSuffix(gitURL, "/"), git: host.NewHTTPClient(rt), ssh: sshConfig(cfg)}
	if cfg.Mirror != nil {
		mcfg := *cfg.Mirror
		mcfg.Log, mcfg.Net.Log = cfg.Log, cfg.Log
		if h.mirror, err = mirror.New(mcfg); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// sshConfig is how SSH sources are reached: the user's ~/.ssh and agent,
// over the stack's dialer (its timeout, and PublicOnly for the mirror's
// upstream dials). Without a home no key file or known host is read, so
// every host key is refused as unknown.
func sshConfig(cfg HostConfig) *git.SSHConfig {
	dir := ""
	if cfg.Home != "" {
		dir = filepath.Join(cfg.Home, ".ssh")
	}
	return &git.SSHConfig{
		Dial: host.NewDialer(cfg.Net).DialContext, Dir: dir, AgentSock: cfg.SSHAuthSock,
		User: cfg.User, Timeout: cfg.Net.Timeout, Log: cfg.Log,
	}
}

// layers is what one request asks of the host stack.
type layers struct {
	offline bool
	// meta, when not nil, is where the Cached layer remembers answers.
	meta      host.MetaStore
	cacheOpts host.CacheOptions
	// around, when not nil, wraps what the Cached layer asks on a miss
	// (the team mirror's leases).
	around func(host.Repo) host.Repo
}

// Upstream opens src's repository as the team mirror goes upstream (SPEC
// §15): online, remembered in meta by the Cached layer (with opts), and
// around — the mirror's leases — between that layer and the hosts, so
// only what the mirror has not remembered is shared out among replicas.
func (h *Hosts) Upstream(src source.Source, meta host.MetaStore, opts host.CacheOptions, around func(host.Repo) host.Repo) (host.Repo, error) {
	return h.stack(src, layers{meta: meta, cacheOpts: opts, around: around})
}

// stack opens src's repository with every host layer, outermost first:
//
//   - Cached: what the cache remembers (refs with ETags, reachability
//     verdicts, negative results) answers first, and everything below is
//     asked only on a miss; it must sit above Offline, which only misses.
//     In the team mirror, its leases sit right below it (layers.around).
//   - Submodules: the submodules a fetched tree holds (SPEC §8) are opened
//     through this same stack, with the same layers, so a submodule is
//     cached, offline, mirrored and retried as its parent is.
//   - Offline: when offline, it replaces everything below: a miss of the
//     cache is install.offline_miss, and no network is touched.
//   - Fallback (mirror → upstream): with a team mirror (§15), the mirror
//     answers first, upstream directly when it cannot (not with
//     REASONIX_MIRROR_ONLY=1); the mirror's own client fails over between
//     replicas.
//   - github: per operation, the REST API or git goes first and the other
//     is the Fallback (refs: REST → git; content: git → archive; some
//     folders: archive → git), git alone while the API budget is spent.
//     A generic git host has git alone, and no archive.
//   - Retry: on every git transport, GitHub's as a generic host's: git's
//     smart HTTP has no retries of its own (the REST API and archives
//     retry inside their retryablehttp client), and on GitHub git is
//     alone whenever the API budget is spent, so it must retry as well.
//   - Rewrite: the transport URL (REASONIX_URL_REWRITE,
//     REASONIX_GITHUB_URL); sources keep naming the real host.
//   - git / REST: the raw transports, over one connection pool and one
//     dialer (host.NewDialer: PublicOnly holds for SSH dials as well).
//     Credentials: GitHub's token to github.com's git side only; a generic
//     HTTPS host's from git's helpers or ~/.netrc after a 401
//     (host.Credentials); SSH keys and known_hosts (git.SSHConfig).
func (h *Hosts) stack(src source.Source, l layers) (host.Repo, error) {
	var r host.Repo
	switch {
	case l.offline:
		r = host.NewOffline(src)
	case h == nil:
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "%s: no host is configured for remote sources", src.Key())
	default:
		// Every git transport retries, GitHub's as a generic host's.
		viaGit := func(url, token string) host.Repo {
			cfg := git.Config{URL: url, Client: h.git, Token: token, SSH: h.ssh, Timeout: h.cfg.Net.Timeout, Log: h.cfg.Log}
			if src.Kind == source.Git && !src.IsSSH() {
				cfg.Credentials = h.cfg.Credentials // github.com has its token
			}
			return host.NewRetry(git.New(src, cfg), h.cfg.Log)
		}
		var direct host.Repo
		var err error
		switch src.Kind {
		case source.GitHub:
			var g host.Repo // nil: git is off, the REST API and archives serve alone
			if !h.cfg.GitOff {
				g = viaGit(h.githubGit+"/"+src.Repo()+".git", h.cfg.Token)
			}
			direct, err = h.github.Open(src, g)
		case source.Git:
			if h.cfg.GitOff {
				err = plugind.Errorf(plugind.CodeNotPinnable, "%s is a git repository on %s, and git is off (REASONIX_GIT=off); only GitHub sources have an archive fallback", src.Key(), src.Host)
				break
			}
			direct = viaGit(h.cfg.Rewrite.Apply(src.URL()), "")
		default:
			err = fmt.Errorf("%s is not a remote source", src)
		}
		if h.mirror != nil {
			direct, err = h.mirror.InFront(src, direct, err)
		}
		if err != nil {
			return nil, err
		}
		r = direct
	}
	r = host.WithSubmodules(r, func(_ context.Context, sub source.Source) (host.Repo, error) { return h.stack(sub, l) })
	if l.around != nil {
		r = l.around(r)
	}
	if l.meta != nil {
		r = host.NewCached(r, l.meta, l.cacheOpts)
	}
	return r, nil
}

// repo opens src's repository for req (Hosts.stack).
func (s *resolve) repo(src source.Source, req Request) (host.Repo, error) {
	if repo, ok := s.repos[src]; ok {
		return repo, nil
	}
	l := layers{offline: req.Offline}
	if s.cache != nil {
		l.meta = s.cache
		l.cacheOpts = host.CacheOptions{
			NegativeTTL:  s.cfg.NegativeTTL,
			Refresh:      req.Refresh,
			Now:          s.cfg.Now,
			OnWriteError: s.cacheWriteFailed,
		}
	}
	repo, err := s.cfg.Hosts.stack(src, l)
	if err == nil {
		if s.repos == nil {
			s.repos = map[source.Source]host.Repo{}
		}
		s.repos[src] = repo
	}
	return repo, err
}

// cacheWriteFailed: the cache is an optimization, so a failed write costs
// only a warning in the log, once per process.
func (s *Sources) cacheWriteFailed(err error) {
	s.warn.Do(func() {
		s.cfg.Log.Warn("the cache could not be written; continuing without remembering results", "err", err)
	})
}

// missingPaths is the part of the Cached layer that remembers folders that
// do not exist at a commit (the resolver finds that out, not a host).
type missingPaths interface {
	MissingPath(ctx context.Context, sha, path string) error
	RememberMissingPath(ctx context.Context, sha, path string, err error)
}
