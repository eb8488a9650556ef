package resolver

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/hashicorp/go-retryablehttp"
	"golang.org/x/sync/singleflight"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/store"
)

// Sources is the Resolver over every source kind of SPEC §5.
type Sources struct {
	cfg    Config
	http   *retryablehttp.Client
	gh     *github.Client
	flight singleflight.Group // one fetch per (repo, SHA) per process
}

// Config configures Sources. Zero values mean the defaults of SPEC §4.
type Config struct {
	Store  *store.Store
	Cache  *cache.DB // nil: no ref/snapshot memory (local sources only need the store)
	Budget plugind.Budget
	Log    *slog.Logger

	GitHubURL string // REASONIX_GITHUB_URL, default https://github.com
	APIURL    string // REASONIX_GITHUB_API_URL, default https://api.github.com
	Token     string // GITHUB_TOKEN / GH_TOKEN; never logged or stored
	GitOff    bool   // REASONIX_GIT=off
	Offline   bool   // REASONIX_OFFLINE=1: every request is offline

	Timeout       time.Duration // connect/header/stall timeout per request (default 30s)
	MaxRetryAfter time.Duration // longest Retry-After honoured (default 10s)
	Retries       int           // default 3
	// Progress, when set, receives a progress bar for downloads (the CLI
	// passes stderr only when it is a terminal).
	Progress io.Writer
	Now      func() time.Time
}

// New returns a Resolver over cfg.
func New(cfg Config) *Sources {
	if cfg.Budget == (plugind.Budget{}) {
		cfg.Budget = plugind.DefaultBudget
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.GitHubURL == "" {
		cfg.GitHubURL = "https://github.com"
	}
	if cfg.APIURL == "" {
		cfg.APIURL = "https://api.github.com"
	}
	cfg.GitHubURL = strings.TrimSuffix(cfg.GitHubURL, "/")
	cfg.APIURL = strings.TrimSuffix(cfg.APIURL, "/")
	if cfg.Timeout == 0 {
		cfg.Timeout = defaultTimeout
	}
	if cfg.MaxRetryAfter == 0 {
		cfg.MaxRetryAfter = defaultMaxRetryAfter
	}
	if cfg.Retries == 0 {
		cfg.Retries = defaultRetries
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Sources{cfg: cfg}
	s.http = newHTTPClient(cfg.Log, cfg.Timeout, cfg.MaxRetryAfter, cfg.Retries)
	gh := github.NewClient(s.http.StandardClient())
	if cfg.Token != "" {
		gh = gh.WithAuthToken(cfg.Token)
	}
	if base, err := url.Parse(cfg.APIURL + "/"); err == nil {
		gh.BaseURL = base
	}
	s.gh = gh
	return s
}

// Resolve implements Resolver.
func (s *Sources) Resolve(ctx context.Context, req Request) (*Fetched, error) {
	if s.cfg.Offline {
		req.Offline = true
	}
	if isLocal(req.Source) {
		return s.resolveLocal(ctx, req)
	}
	return s.resolveRemote(ctx, req)
}
