// Package mirror is the client of the team mirror (SPEC §15): a host.Repo
// that asks a mirror — any of a list of replicas, failing over in order —
// for refs, reachability and snapshots, and verifies every snapshot's tree
// digest before it is used. InFront puts it in front of the upstream hosts:
// whatever the mirror cannot answer (it is down, or fails) goes upstream
// with a warning, unless REASONIX_MIRROR_ONLY=1; what it answers
// definitively (not found, install.blocked by its policy, a refused token,
// a digest mismatch) is final. resolver.Hosts stacks it (InFront) under the
// cache and offline layers like any other Repo.
package mirror

import (
	"cmp"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/secrets"
	"reasonix.io/plugind/source"
)

// Environment variables (SPEC §4).
const (
	EnvURLs  = "REASONIX_MIRROR"       // URL[,URL…]
	EnvToken = "REASONIX_MIRROR_TOKEN" // bearer token
	EnvOnly  = "REASONIX_MIRROR_ONLY"  // "1": never contact upstream directly
)

// DefaultWait bounds how long a client waits for a mirror's answer to
// start: the mirror may be fetching from upstream, or waiting for the
// replica that is.
const DefaultWait = 3 * time.Minute

// Config is how the mirror is reached.
type Config struct {
	URLs  []string // replicas, tried in order
	Token string
	// Only: never fall back to upstream (REASONIX_MIRROR_ONLY=1).
	Only bool
	// Wait bounds the wait for a response's headers (default DefaultWait);
	// Net.Timeout bounds connecting and a stalled body.
	Wait time.Duration
	Net  host.NetConfig
	Log  *slog.Logger
	// Transport overrides the connection pool (tests).
	Transport http.RoundTripper
	// PolicyFile, when set, remembers the runtime rule last read
	// ($REASONIX_HOME/mirror/policy.json): a plan that cannot ask (offline,
	// or every replica down) applies it (RememberedPolicy).
	PolicyFile string
}

// ConfigFromEnv reads REASONIX_MIRROR, REASONIX_MIRROR_TOKEN and
// REASONIX_MIRROR_ONLY; ok is false when no mirror is configured.
func ConfigFromEnv(getenv func(string) string) (cfg Config, ok bool, err error) {
	raw := strings.TrimSpace(getenv(EnvURLs))
	only := getenv(EnvOnly)
	switch strings.ToLower(only) {
	case "", "0", "false":
	case "1", "true":
		cfg.Only = true
	default:
		return Config{}, false, plugind.Errorf(plugind.CodeInvalidSource, "%s=%q: want 1 or 0", EnvOnly, only)
	}
	if raw == "" {
		if cfg.Only {
			return Config{}, false, plugind.Errorf(plugind.CodeInvalidSource, "%s=1 needs %s (the mirror's URL)", EnvOnly, EnvURLs)
		}
		return Config{}, false, nil
	}
	for _, u := range strings.Split(raw, ",") {
		u = strings.TrimSpace(u)
		if u == "" {
			continue
		}
		clean, err := checkURL(u)
		if err != nil {
			return Config{}, false, err
		}
		cfg.URLs = append(cfg.URLs, clean)
	}
	if len(cfg.URLs) == 0 {
		return Config{}, false, plugind.Errorf(plugind.CodeInvalidSource, "%s holds no URL", EnvURLs)
	}
	cfg.Token = strings.TrimSpace(getenv(EnvToken))
	return cfg, true, nil
}

// checkURL accepts https://HOST[:PORT][/PATH], and http:// only on this
// machine: the token travels with every request.
func checkURL(raw string) (string, error) {
	bad := func(why string) error {
		return plugind.Errorf(plugind.CodeInvalidSource, "%s: %q %s", EnvURLs, secrets.Mask(raw), why)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", bad("is not a URL (want https://HOST[:PORT])")
	}
	if u.User != nil {
		return "", bad("holds credentials; give the token in " + EnvToken)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", bad("has a query or fragment")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !host.IsLoopbackHost(u.Hostname()) {
			return "", bad("is plain http to another machine; the token would travel in the clear: use https")
		}
	default:
		return "", bad("must be https (or http on this machine)")
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// Client talks to the replicas of one mirror.
type Client struct {
	cfg       Config
	http      *http.Client
	preferred atomic.Int32 // the replica that answered last
	policy    policyCache  // the runtime rule last read (policy.go)
}

// New returns a client of cfg's mirror.
func New(cfg Config) (*Client, error) {
	if len(cfg.URLs) == 0 {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "no mirror URL given")
	}
	for i, u := range cfg.URLs {
		clean, err := checkURL(u)
		if err != nil {
			return nil, err
		}
		cfg.URLs[i] = clean
	}
	cfg.Log = cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	cfg.Wait = plugind.PositiveOr(cfg.Wait, DefaultWait)
	cfg.Net.Timeout = plugind.PositiveOr(cfg.Net.Timeout, host.DefaultTimeout)
	rt := cfg.Transport
	if rt == nil {
		t := host.NewTransport(cfg.Net)
		t.ResponseHeaderTimeout = cfg.Wait
		t.MaxIdleConnsPerHost = 64
		// Requests report to their context's Watcher (the CLI's progress).
		rt = host.Watch(t, cfg.Wait)
	}
	return &Client{cfg: cfg, http: &http.Client{
		Transport: rt,
		// The token goes to the mirror and nowhere else.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// refused is the error of a 401 or 403 that is not a policy block: the
// mirror refused this client's token. That is never "the mirror is down":
// every replica shares the tokens, and going upstream instead would let a
// revoked client past the mirror's policy. It names the mirror, never the
// token.
func (c *Client) refused(base, status string) error {
	why := "refused the token in " + EnvToken + " (revoked, expired or mistyped)"
	if c.cfg.Token == "" {
		why = "needs a token and " + EnvToken + " is not set"
	}
	return &plugind.Error{Code: plugind.CodeSourceUnreadable, Err: host.ErrRefused, Msg: fmt.Sprintf(
		"team mirror %s %s (it answered %s); ask the mirror's operator for a token (reasonix mirror token create). Nothing was fetched from upstream instead: the mirror's policy would be bypassed",
		base, why, status)}
}

// Open opens src at the mirror alone.
func (c *Client) Open(src source.Source) (host.Repo, error) {
	if !src.IsRemote() {
		return nil, fmt.Errorf("%s is not a remote source", src)
	}
	return &Repo{c: c, src: src}, nil
}

// InFront puts the mirror in front of upstream, src's repository reached
// directly (upErr: why it cannot be): each operation goes to the mirror
// first and, when the mirror cannot answer, upstream (with a warning) —
// never when Config.Only is set, nor when upstream cannot take src (git
// off for a generic host), where the mirror alone may still.
func (c *Client) InFront(src source.Source, upstream host.Repo, upErr error) (host.Repo, error) {
	m, err := c.Open(src)
	if err != nil {
		return nil, err
	}
	if c.cfg.Only {
		return m, nil
	}
	if upErr != nil {
		c.cfg.Log.Debug("no upstream fallback", "repo", src.Key(), "err", upErr)
		return m, nil
	}
	return &host.Fallback{Primary: m, Secondary: upstream, PrimaryLabel: "the mirror", SecondaryLabel: "upstream directly"}, nil
}
