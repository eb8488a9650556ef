package git

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
)

// advertisement is what one info/refs request told us.
type advertisement struct {
	refs *host.Refs
	caps *capability.List
}

// session opens an upload-pack session on the repository's transport URL.
// go-git's transport is used directly (not Remote.Fetch) so that the HTTP
// client is ours — timeouts, safe redirects, no process-wide registration —
// and so that the pack comes to us as a stream (see pack.go).
func (r *Repo) session() (transport.UploadPackSession, error) {
	ep, err := transport.NewEndpoint(r.cfg.URL)
	if err != nil {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s: transport address: %v", r.src.Key(), err)
	}
	if ep.Protocol == "ssh" {
		return r.newSSHSession(ep)
	}
	if ep.Protocol != "https" && ep.Protocol != "http" {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "%s: the %s transport is not used", r.src.Key(), ep.Protocol)
	}
	client := r.cfg.Client
	var auth transport.AuthMethod
	switch cred := r.credential(); {
	case r.cfg.Token != "":
		auth = &githttp.BasicAuth{Username: "x-access-token", Password: r.cfg.Token}
		client = host.OriginOnly(client, originOf(ep))
	case cred != nil:
		auth = &githttp.BasicAuth{Username: cred.Username, Password: cred.Password}
		client = host.OriginOnly(client, cred.Origin)
	}
	return githttp.NewClient(client).NewUploadPackSession(ep, auth)
}

// originOf is scheme://host[:port] of an endpoint (host.OriginOnly
// compares origins with and without their scheme's default port alike).
func originOf(ep *transport.Endpoint) string {
	u := ep.Protocol + "://" + ep.Host
	if ep.Port > 0 {
		u += fmt.Sprintf(":%d", ep.Port)
	}
	return u
}

// credential is the credential this Repo sends, once a 401 made it ask.
func (r *Repo) credential() *host.Credential {
	r.credMu.Lock()
	defer r.credMu.Unlock()
	return r.cred
}

// login asks for a credential after a 401 to a request sent without one
// (SPEC §4: only then, as git does). ok reports that one was found and
// the request is worth repeating; note says why none was.
func (r *Repo) login(ctx context.Context) (ok bool, note string) {
	if r.cfg.Credentials == nil || r.cfg.Token != "" || r.credential() != nil {
		return false, ""
	}
	cred, note, err := r.cfg.Credentials.Fill(ctx, r.cfg.URL)
	if err != nil || cred == nil {
		return false, note
	}
	r.credMu.Lock()
	r.cred = cred
	r.credMu.Unlock()
	return true, ""
}

// advertise asks the remote for its refs and capabilities (info/refs), once
// per Repo.
func (r *Repo) advertise(ctx context.Context) (transport.UploadPackSession, *advertisement, error) {
	sess, err := r.session()
	if err != nil {
		return nil, nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.adv != nil {
		return sess, r.adv, nil
	}
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if errors.Is(err, transport.ErrAuthenticationRequired) {
		ok, note := r.login(ctx)
		r.loginNote = note
		if ok {
			_ = sess.Close()
			if sess, err = r.session(); err != nil {
				return nil, nil, err
			}
			ar, err = sess.AdvertisedReferencesContext(ctx)
			if cred := r.credential(); err == nil {
				r.cfg.Credentials.Approve(ctx, cred)
			} else if errors.Is(err, transport.ErrAuthenticationRequired) {
				r.cfg.Credentials.Reject(ctx, cred)
			}
		}
	}
	if err != nil {
		_ = sess.Close()
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			return nil, nil, plugind.Errorf(plugind.CodeNotFound, "%s is an empty repository: %w", r.src.Key(), host.ErrRefNotFound)
		}
		return nil, nil, r.classify(ctx, "list refs", err)
	}
	r.adv = &advertisement{refs: refsOf(ar), caps: ar.Capabilities}
	return sess, r.adv, nil
}

// refsOf turns an advertisement into short names. Annotated tags count by
// the commit they peel to.
func refsOf(ar *packp.AdvRefs) *host.Refs {
	out := &host.Refs{Commits: map[string]string{}}
	for name, h := range ar.References {
		rn := plumbing.ReferenceName(name)
		if !rn.IsBranch() && !rn.IsTag() {
			continue
		}
		if peeled, ok := ar.Peeled[name]; ok {
			h = peeled
		}
		out.Commits[rn.Short()] = h.String()
	}
	if ar.Capabilities != nil {
		for _, v := range ar.Capabilities.Get(capability.SymRef) {
			if src, dst, ok := strings.Cut(v, ":"); ok && src == "HEAD" {
				out.Head = plumbing.ReferenceName(dst).Short()
			}
		}
	}
	switch {
	case out.Head != "" && out.Commits[out.Head] != "":
		out.Commits[host.HeadRef] = out.Commits[out.Head]
	case ar.Head != nil:
		out.Commits[host.HeadRef] = ar.Head.String()
		// No symref: name the branch whose tip HEAD is, preferring main.
		for _, b := range []string{"main", "master"} {
			if out.Commits[b] == ar.Head.String() {
				out.Head = b
				break
			}
		}
	}
	return out
}

// classify turns a transport error into a coded one that names the cause.
func (r *Repo) classify(ctx context.Context, what string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	key := r.src.Key()
	var herr *githttp.Err
	var keyErr *HostKeyError
	switch {
	case errors.As(err, &keyErr) || plugind.CodeOf(err) != "":
		return err
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return plugind.Errorf(plugind.CodeNotFound, "%s: %w (the host answered 404)", key, host.ErrRepoNotFound)
	case errors.Is(err, transport.ErrAuthenticationRequired) && r.cfg.Token != "":
		// Sent with credentials, a 401 is their refusal (a repository they
		// cannot see is a 404): never remembered as "not found", and final.
		return &plugind.Error{Code: plugind.CodeSourceUnreadable, Err: host.ErrRefused,
			Msg: fmt.Sprintf("%s: the host refused the credentials sent with the request (check GITHUB_TOKEN): %v", key, err)}
	case errors.Is(err, transport.ErrAuthenticationRequired) && r.credential() != nil:
		return &plugind.Error{Code: plugind.CodeSourceUnreadable, Err: host.ErrRefused,
			Msg: fmt.Sprintf("%s: the host refused the credentials from %s: %v", key, r.credential().From, err)}
	case errors.Is(err, transport.ErrAuthenticationRequired) && r.cfg.Credentials != nil && r.loginNote != "":
		// The helpers failed (one hung, say): final, so neither retried
		// (another bounded wait each) nor remembered as "not found".
		return &plugind.Error{Code: plugind.CodeSourceUnreadable, Err: host.ErrRefused,
			Msg: fmt.Sprintf("%s: the host asks for credentials, and none could be had: %s; ~/.netrc has none for it", key, r.loginNote)}
	case errors.Is(err, transport.ErrAuthenticationRequired) && r.cfg.Credentials != nil:
		// A generic host asked for credentials and none were found.
		return plugind.Errorf(plugind.CodeNotFound, "%s: %w or not accessible without credentials (%v; no git credential helper and no ~/.netrc entry had any)", key, host.ErrRepoNotFound, err)
	case errors.Is(err, transport.ErrAuthenticationRequired):
		// GitHub answers 401 for a repository that does not exist as for a
		// private one it will not show: say both.
		return plugind.Errorf(plugind.CodeNotFound, "%s: %w or not accessible without credentials (%v)", key, host.ErrRepoNotFound, err)
	case errors.As(err, &herr) && herr.Response != nil && herr.Response.StatusCode == http.StatusNotFound:
		return plugind.Errorf(plugind.CodeNotFound, "%s: %w (the host answered 404)", key, host.ErrRepoNotFound)
	}
	return plugind.Errorf(plugind.CodeSourceUnreadable, "%s over git of %s: %w", what, key, err)
}

// notOurRef reports the server's refusal of a wanted commit: git's
// upload-pack says "not our ref" whether the commit is absent or merely
// unreachable from the advertised refs.
func notOurRef(err error) bool {
	return err != nil && strings.Contains(err.Error(), "not our ref")
}

// errNoSuchCommit is the answer to a want the server refused, or to a
// commit no branch or tag reaches on a host that does not say whether it
// exists at all: it is either, and says so (errors.Is finds both).
func (r *Repo) errNoSuchCommit(sha string) error {
	return plugind.Errorf(plugind.CodeNotFound, "commit %s: %w of %s, or %w (the host serves only what its branches and tags reach, so it does not say which)", sha, host.ErrUnreachable, r.src.Key(), host.ErrCommitNotFound)
}
