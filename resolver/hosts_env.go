package resolver

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/resolver/host/git"
	"reasonix.io/plugind/resolver/host/github"
	"reasonix.io/plugind/source"
)

// HostConfig is where remote sources are fetched from (SPEC §4).
type HostConfig struct {
	GitHubURL string // REASONIX_GITHUB_URL
	APIURL    string // REASONIX_GITHUB_API_URL
	Token     string // GITHUB_TOKEN / GH_TOKEN: sent to GitHub only
	GitOff    bool   // REASONIX_GIT=off
	// Rewrite maps repository URLs to transport URLs
	// (REASONIX_URL_REWRITE), for any host.
	Rewrite *host.Rewrite
	Net     host.NetConfig
	Log     *slog.Logger
}

// HostConfigFromEnv reads the environment of SPEC §4.
func HostConfigFromEnv(getenv func(string) string, log *slog.Logger) (HostConfig, error) {
	rw, err := host.ParseRewrite(getenv("REASONIX_URL_REWRITE"))
	if err != nil {
		return HostConfig{}, plugind.Errorf(plugind.CodeInvalidSource, "%v", err)
	}
	token := getenv("GITHUB_TOKEN")
	if token == "" {
		token = getenv("GH_TOKEN")
	}
	return HostConfig{
		GitHubURL: getenv("REASONIX_GITHUB_URL"),
		APIURL:    getenv("REASONIX_GITHUB_API_URL"),
		Token:     token,
		GitOff:    strings.EqualFold(getenv("REASONIX_GIT"), "off"),
		Rewrite:   rw,
		Net:       host.NetConfig{Log: log},
		Log:       log,
	}, nil
}

// Hosts opens GitHub sources on the GitHub host and every other git
// repository on the generic git host (with retries: git has none of its
// own), all over one connection pool.
type Hosts struct {
	github *github.Host
	git    *http.Client
	cfg    HostConfig
}

// NewHosts builds the hosts of cfg.
func NewHosts(cfg HostConfig) (*Hosts, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Net.Log == nil {
		cfg.Net.Log = cfg.Log
	}
	// Every request reports to its context's Watcher (the CLI's progress).
	rt := host.Watch(host.NewTransport(cfg.Net), cfg.Net.Timeout)
	// REASONIX_GITHUB_URL and _API_URL win; a rewrite rule for github.com
	// works too.
	gitURL := cfg.GitHubURL
	if gitURL == "" {
		gitURL = strings.TrimSuffix(cfg.Rewrite.Apply("https://github.com/"), "/")
	}
	apiURL := cfg.APIURL
	if apiURL == "" {
		apiURL = strings.TrimSuffix(cfg.Rewrite.Apply("https://api.github.com/"), "/")
	}
	gitClient := host.NewHTTPClient(rt)
	// One budget for GitHub's REST API, for as long as these hosts live
	// (the daemon's, across its requests): every API call and archive
	// link goes through it, git does not (SPEC §14).
	budget := host.NewAPIBudget(host.BudgetConfig{Name: github.APIName, BaseURL: apiURL, Token: cfg.Token != "", Log: cfg.Log})
	gh, err := github.New(github.Config{
		GitURL: gitURL, APIURL: apiURL, Token: cfg.Token, GitOff: cfg.GitOff,
		REST: host.NewRetryingClient(budget.RoundTripper(rt), cfg.Net), Budget: budget, Git: gitClient,
		Timeout: cfg.Net.Timeout, Log: cfg.Log,
	})
	if err != nil {
		return nil, err
	}
	return &Hosts{github: gh, git: gitClient, cfg: cfg}, nil
}

// Open implements host.Opener.
func (h *Hosts) Open(src source.Source) (host.Repo, error) {
	switch src.Kind {
	case source.GitHub:
		return h.github.Open(src)
	case source.Git:
		if h.cfg.GitOff {
			return nil, plugind.Errorf(plugind.CodeNotPinnable, "%s is a git repository on %s, and git is off (REASONIX_GIT=off); only GitHub sources have an archive fallback", src.Key(), src.Host)
		}
		r := git.New(src, git.Config{URL: h.cfg.Rewrite.Apply(src.URL()), Client: h.git, Timeout: h.cfg.Net.Timeout, Log: h.cfg.Log})
		return host.NewRetry(r, h.cfg.Log), nil
	}
	return nil, fmt.Errorf("%s is not a remote source", src)
}
