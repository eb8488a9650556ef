package host

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Credentials finds HTTPS credentials for git hosts other than github.com
// (SPEC §4), asked only once a server has answered 401 (as git does: a
// public repository never costs a helper's run, and no credential goes to
// a host that did not ask for one). In order:
//
//  1. git's credential helpers: `git credential fill` for the exact
//     protocol, host (with its port) and path, git applying its own
//     configuration (credential.helper, credential.<url>.*, useHttpPath:
//     the path reaches a helper only where git would pass it). Bounded by
//     Timeout (a helper that hangs is killed with its process group),
//     stdin closed after the request, never a prompt
//     (GIT_TERMINAL_PROMPT=0, GIT_ASKPASS and SSH_ASKPASS empty);
//  2. ~/.netrc: the host's "machine" entry, else "default".
//
// github.com keeps GITHUB_TOKEN/GH_TOKEN (resolver.HostConfig.Token) and
// is never asked here.
type Credentials struct {
	// Home holds .netrc; "" skips it.
	Home string
	// Git is the git program; "" looks "git" up in PATH, and a missing git
	// skips the helpers.
	Git string
	// Env is the helpers' environment (GIT_CONFIG_GLOBAL, HOME…); nil is
	// this process's.
	Env []string
	// Timeout bounds each git credential run (default 10s).
	Timeout time.Duration
	Log     *slog.Logger
}

// Credential is what Fill found for one origin.
type Credential struct {
	Username, Password string
	// Origin is scheme://host[:port]: the only place it may be sent.
	Origin string
	// From says where it came from, for messages ("a git credential
	// helper", "~/.netrc"): never the value.
	From string
	// request is what git was asked, for approve and reject.
	request string
}

// DefaultCredentialTimeout bounds a credential helper.
const DefaultCredentialTimeout = 10 * time.Second

// Fill finds a credential for rawURL (a transport URL), or nil with a
// note saying why none was found (a helper that failed or hung); err only
// for a URL that cannot carry one.
func (c *Credentials) Fill(ctx context.Context, rawURL string) (cred *Credential, note string, err error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, "", fmt.Errorf("no credentials for a non-HTTP URL")
	}
	origin := u.Scheme + "://" + u.Host
	req := fmt.Sprintf("protocol=%s\nhost=%s\npath=%s\n", u.Scheme, u.Host, strings.TrimPrefix(u.Path, "/"))
	if strings.ContainsAny(u.Host+u.Path, "\n\x00") {
		return nil, "", fmt.Errorf("no credentials for a URL with a newline")
	}
	out, err := c.git(ctx, "fill", req)
	switch {
	case err == nil:
		if cred := parseCredential(out); cred != nil {
			cred.Origin, cred.From, cred.request = origin, "a git credential helper", req
			return cred, "", nil
		}
	case errors.Is(err, exec.ErrNotFound):
	default:
		note = err.Error()
		c.log().Warn("git credential fill failed; trying ~/.netrc", "host", u.Host, "err", err)
	}
	if c.Home == "" {
		return nil, note, nil
	}
	path := filepath.Join(c.Home, ".netrc")
	login, password, found, nerr := netrcLookup(path, u.Hostname(), func(w string) { c.log().Warn(w) })
	if nerr != nil {
		c.log().Warn("cannot read .netrc", "err", nerr)
	}
	if found && password != "" {
		return &Credential{Username: login, Password: password, Origin: origin, From: path}, note, nil
	}
	return nil, note, nil
}

// Approve tells git's helpers that cred worked (a helper may store it);
// Reject that it was refused (a helper may erase it). Only a credential
// a helper gave is reported back. Failures are logged, not returned.
func (c *Credentials) Approve(ctx context.Context, cred *Credential) { c.report(ctx, "approve", cred) }

// Reject: see Approve.
func (c *Credentials) Reject(ctx context.Context, cred *Credential) { c.report(ctx, "reject", cred) }

func (c *Credentials) report(ctx context.Context, verb string, cred *Credential) {
	if cred == nil || cred.request == "" {
		return
	}
	in := cred.request + "username=" + cred.Username + "\npassword=" + cred.Password + "\n"
	if _, err := c.git(ctx, verb, in); err != nil {
		c.log().Debug("git credential "+verb+" failed", "err", err)
	}
}

// git runs `git credential VERB` with input on stdin, bounded.
func (c *Credentials) git(ctx context.Context, verb, input string) ([]byte, error) {
	bin := c.Git
	if bin == "" {
		p, err := exec.LookPath("git")
		if err != nil {
			return nil, exec.ErrNotFound
		}
		bin = p
	}
	timeout := cmp.Or(c.Timeout, DefaultCredentialTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "credential", verb)
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=", "GCM_INTERACTIVE=never")
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	killGroup(cmd)
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("git credential %s did not answer within %s (a credential helper hangs or waits for input?); it was stopped", verb, timeout)
	}
	if err != nil {
		// Its stderr is git's ("terminal prompts disabled" when no
		// helper had one), never a password: git does not echo them.
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "terminal prompts disabled") || strings.Contains(msg, "could not read") {
			return nil, nil
		}
		return nil, fmt.Errorf("git credential %s: %v: %s", verb, err, firstLine(msg))
	}
	return stdout.Bytes(), nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// parseCredential reads git credential's answer: username= and password=.
func parseCredential(out []byte) *Credential {
	var cred Credential
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "username":
			cred.Username = v
		case "password":
			cred.Password = v
		}
	}
	if cred.Password == "" {
		return nil
	}
	return &cred
}

func (c *Credentials) log() *slog.Logger { return cmp.Or(c.Log, slog.New(slog.DiscardHandler)) }

// OriginOnly returns a client whose requests carry an Authorization
// header only to origin (scheme://host[:port]): a redirect elsewhere, or a
// transport that moved its endpoint after one, sends nothing, whatever
// Go's or go-git's own redirect rules would forward.
func OriginOnly(c *http.Client, origin string) *http.Client {
	cp := *c
	cp.Transport = originOnly{rt: cmp.Or[http.RoundTripper](c.Transport, http.DefaultTransport), origin: origin}
	return &cp
}

type originOnly struct {
	rt     http.RoundTripper
	origin string
}

func (o originOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" && !sameOrigin(req.URL, o.origin) {
		req = req.Clone(req.Context())
		req.Header.Del("Authorization")
	}
	return o.rt.RoundTrip(req)
}

// sameOrigin compares u's scheme://host[:port] with origin, a default
// port written out or not.
func sameOrigin(u *url.URL, origin string) bool {
	o, err := url.Parse(origin)
	if err != nil {
		return false
	}
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		return map[string]string{"https": "443", "http": "80"}[strings.ToLower(u.Scheme)]
	}
	return strings.EqualFold(u.Scheme, o.Scheme) && strings.EqualFold(u.Hostname(), o.Hostname()) && port(u) == port(o)
}
