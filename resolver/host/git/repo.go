// Package git is the host for any git repository over smart HTTP(S)
// (GitLab, Bitbucket, Gitea, Gerrit, GitHub's git side) or SSH (ssh.go):
// refs from the advertisement, content by a depth-1 fetch of the wanted
// commit, indexed and written with bounded memory, reachability from the
// advertised refs.
package git

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// Config is how one repository is reached.
type Config struct {
	// URL is the transport address, after any rewrite
	// ("https://github.com/o/r.git", or a loopback fake in tests).
	URL string
	// Client makes the requests (timeouts, safe redirects).
	Client *http.Client
	// Token, when set, is sent as basic auth. Only ever set for the host
	// the token belongs to (GitHub).
	Token string
	// Credentials, when set, are asked once the host answers 401 to a
	// request without any (generic HTTPS hosts; never with Token).
	Credentials *host.Credentials
	// SSH reaches ssh:// URLs; nil refuses them.
	SSH *SSHConfig
	// Timeout fails a pack download that stalls this long (default 30s).
	Timeout time.Duration
	Log     *slog.Logger
}

// Repo is a repository over git. One Repo serves one plan: the first
// advertisement it gets is kept, so listing refs, resolving, checking and
// fetching cost one info/refs request together.
type Repo struct {
	src source.Source
	cfg Config

	mu  sync.Mutex
	adv *advertisement
	// loginNote says why no credential was found after a 401 (under mu).
	loginNote string

	credMu sync.Mutex
	cred   *host.Credential
}

// New returns the git Repo of src, reached as cfg says.
func New(src source.Source, cfg Config) *Repo {
	cfg.Client = cmp.Or(cfg.Client, host.NewHTTPClient(http.DefaultTransport))
	cfg.Timeout = cmp.Or(cfg.Timeout, host.DefaultTimeout)
	cfg.Log = cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	return &Repo{src: src, cfg: cfg}
}

// Source implements host.Repo.
func (r *Repo) Source() source.Source { return r.src }

// Refs implements host.Repo: one info/refs request.
func (r *Repo) Refs(ctx context.Context) (*host.Refs, error) {
	sess, adv, err := r.advertise(ctx)
	if err != nil {
		return nil, err
	}
	_ = sess.Close()
	return adv.refs, nil
}

// Resolve implements host.Repo from the advertisement (git has no
// conditional requests: one info/refs each time).
func (r *Repo) Resolve(ctx context.Context, ref string, _ *host.Pin) (host.Pin, error) {
	if source.IsSHA(ref) {
		return host.Pin{SHA: ref}, nil
	}
	refs, err := r.Refs(ctx)
	if err != nil {
		return host.Pin{}, err
	}
	name := host.RefName(ref)
	sha, ok := refs.Commits[name]
	if !ok {
		if name == host.HeadRef {
			return host.Pin{}, plugind.Errorf(plugind.CodeNotFound, "%s advertises no default branch (HEAD): %w", r.src.Key(), host.ErrRefNotFound)
		}
		return host.Pin{}, plugind.Errorf(plugind.CodeNotFound, "%s has no branch or tag %q: %w", r.src.Key(), ref, host.ErrRefNotFound)
	}
	return host.Pin{SHA: sha, At: time.Now()}, nil
}

// Reachable implements host.Repo. A tip is reachable. Otherwise the
// history of every branch and tag is fetched — commits only, where the
// server supports filters — and the commit must be in it: a server sends
// exactly what its wants reach. Nothing here trusts the server's own want
// checks, which many servers (git's protocol v2, hosts that serve any
// object by id) do not make.
func (r *Repo) Reachable(ctx context.Context, sha, _ string) error {
	sess, adv, err := r.advertise(ctx)
	if err != nil {
		return err
	}
	defer sess.Close()
	if adv.refs.Has(sha) {
		return nil
	}
	scratch, err := os.MkdirTemp("", "reasonix-history-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	return r.history(ctx, sess, adv, sha, scratch)
}

// history fetches the tips' histories into scratch and looks for sha.
func (r *Repo) history(ctx context.Context, sess transport.UploadPackSession, adv *advertisement, sha, scratch string) error {
	req := r.tipsRequest(adv)
	if len(req.Wants) == 0 {
		return r.errNoSuchCommit(sha)
	}
	if adv.caps.Supports(capability.Filter) {
		req.Filter = packp.FilterTreeDepth(0) // commits, no trees, no blobs
		_ = req.Capabilities.Set(capability.Filter)
	}
	px, err := r.fetchPack(ctx, sess, req, filepath.Join(scratch, "history.pack"), historyLimits(maxHistoryPack))
	if err != nil {
		return err
	}
	defer px.Close()
	if _, ok := px.find(plumbing.NewHash(sha)); !ok {
		return r.notInHistory(ctx, sess, adv, sha, scratch)
	}
	return nil
}

// notInHistory says why a commit no branch or tag reaches is refused. A
// host that serves objects by SHA (git's allowAnySHA1InWant, what stock
// git does) shows whether the commit exists at all, at the price of one
// small request: only the commit, no trees. A host that serves only what
// its refs reach answers "not our ref" either way, and the error says it
// cannot tell.
func (r *Repo) notInHistory(ctx context.Context, sess transport.UploadPackSession, adv *advertisement, sha, scratch string) error {
	if !adv.caps.Supports(capability.Filter) ||
		!(adv.caps.Supports(capability.AllowReachableSHA1InWant) || adv.caps.Supports(capability.AllowTipSHA1InWant)) {
		return r.errNoSuchCommit(sha)
	}
	req := packp.NewUploadPackRequestFromCapabilities(adv.caps)
	req.Wants = []plumbing.Hash{plumbing.NewHash(sha)}
	req.Depth = packp.DepthCommits(1)
	_ = req.Capabilities.Set(capability.Shallow)
	req.Filter = packp.FilterTreeDepth(0)
	_ = req.Capabilities.Set(capability.Filter)
	if adv.caps.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	px, err := r.fetchPack(ctx, sess, req, filepath.Join(scratch, "probe.pack"), historyLimits(maxProbePack))
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if errors.Is(err, host.ErrUnreachable) {
			return r.errNoSuchCommit(sha) // "not our ref": cannot tell
		}
		return err
	}
	defer px.Close()
	if _, ok := px.find(plumbing.NewHash(sha)); !ok {
		return r.errNoSuchCommit(sha)
	}
	return plugind.Errorf(plugind.CodeNotFound, "commit %s is in %s, but %w; a pin must name a commit one of its branches or tags reaches", sha, r.src.Key(), host.ErrUnreachable)
}

// maxProbePack bounds the one-commit pack notInHistory asks for.
const maxProbePack = 1 << 20

// maxHistoryPack bounds the commit history a reachability check downloads.
const maxHistoryPack = 512 << 20

// tipsRequest wants every branch and tag tip, with history.
func (r *Repo) tipsRequest(adv *advertisement) *packp.UploadPackRequest {
	req := packp.NewUploadPackRequestFromCapabilities(adv.caps)
	for _, c := range slices.Compact(slices.Sorted(maps.Values(adv.refs.Commits))) {
		req.Wants = append(req.Wants, plumbing.NewHash(c))
	}
	if adv.caps.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	return req
}

// Fetch implements host.Repo: the commit at depth 1 when the server lets it
// be wanted (a tip, or allow-tip/reachable-sha1-in-want), else every branch
// and tag with history, which proves reachability by construction. With
// Verify, a commit that is not a tip is first looked for in the history
// (Reachable). The pack is indexed and the tree written with bounded
// memory; the object store lives in a scratch folder beside dest and is
// removed.
func (r *Repo) Fetch(ctx context.Context, sha, dest string, opts host.FetchOptions) (*host.Fetched, error) {
	if !source.IsSHA(sha) {
		return nil, plugind.Errorf(plugind.CodeInvalidSource, "fetch %s: %q is not a commit id", r.src.Key(), sha)
	}
	scratch := dest + ".git"
	if err := os.Mkdir(scratch, plugind.PrivateDirMode); err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)

	sess, adv, err := r.advertise(ctx)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	tip := adv.refs.Has(sha)
	verified := tip
	if opts.Verify && !tip {
		if err := r.history(ctx, sess, adv, sha, scratch); err != nil {
			return nil, err
		}
		verified = true
	}
	want := plumbing.NewHash(sha)
	var req *packp.UploadPackRequest
	byConstruction := false
	if tip || adv.caps.Supports(capability.AllowReachableSHA1InWant) || adv.caps.Supports(capability.AllowTipSHA1InWant) {
		req = packp.NewUploadPackRequestFromCapabilities(adv.caps)
		req.Wants = []plumbing.Hash{want}
		req.Depth = packp.DepthCommits(1)
		_ = req.Capabilities.Set(capability.Shallow)
		if adv.caps.Supports(capability.NoProgress) {
			_ = req.Capabilities.Set(capability.NoProgress)
		}
	} else {
		// Only tips may be wanted: take every branch and tag, whole.
		req, byConstruction = r.tipsRequest(adv), true
		if len(req.Wants) == 0 {
			return nil, r.errNoSuchCommit(sha)
		}
	}
	budget := opts.Budget.OrDefault()
	limits := contentLimits(budget)
	if byConstruction {
		limits = historyContentLimits(budget)
	}
	packPath := filepath.Join(scratch, "incoming.pack")
	px, err := r.fetchPack(ctx, sess, req, packPath, limits)
	if err != nil {
		return nil, err
	}
	defer px.Close()
	if _, ok := px.find(want); !ok {
		if byConstruction {
			return nil, r.errNoSuchCommit(sha)
		}
		return nil, plugind.Errorf(plugind.CodeSourceUnreadable, "%s sent a pack without commit %s", r.src.Key(), sha)
	}
	res, err := writeCommitTree(ctx, px, want, dest, opts, budget)
	if err != nil {
		return nil, err
	}
	return &host.Fetched{Transport: "git", Verified: verified || byConstruction, Files: res.Files, Bytes: res.Bytes, Tree: res.Tree, Dirs: res.Dirs, Submodules: res.Submodules,
		Proof: host.ProofGitTree, GitTrees: res.GitTrees}, nil
}

// fetchPack runs req and indexes the pack it brings (at packPath), within
// limits.
func (r *Repo) fetchPack(ctx context.Context, sess transport.UploadPackSession, req *packp.UploadPackRequest, packPath string, limits packLimits) (*packIndex, error) {
	if err := r.download(ctx, sess, req, packPath, limits); err != nil {
		if notOurRef(err) {
			return nil, r.errNoSuchCommit(req.Wants[0].String())
		}
		return nil, err
	}
	px, err := indexPack(ctx, packPath, limits)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", r.src.Key(), err)
	}
	return px, nil
}

// download runs the upload-pack request and stores the pack stream.
func (r *Repo) download(ctx context.Context, sess transport.UploadPackSession, req *packp.UploadPackRequest, path string, limits packLimits) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := sess.UploadPack(ctx, req)
	if err != nil {
		if notOurRef(err) {
			return err
		}
		return r.classify(ctx, "fetch", err)
	}
	defer resp.Close()
	var body io.Reader = resp
	switch {
	case req.Capabilities.Supports(capability.Sideband64k):
		body = sideband.NewDemuxer(sideband.Sideband64k, resp)
	case req.Capabilities.Supports(capability.Sideband):
		body = sideband.NewDemuxer(sideband.Sideband, resp)
	}
	stall := host.NewStallReader(body, r.src.Host, r.cfg.Timeout, cancel)
	defer stall.Close()
	if _, err := receivePack(ctx, stall, path, limits); err != nil {
		if plugind.CodeOf(err) != "" || notOurRef(err) {
			return err
		}
		return r.classify(ctx, "fetch", err)
	}
	return nil
}

// packLimit bounds the bytes of one pack: a tree that fits the budget
// compresses to less than it, and history (the tips-only fallback) gets
// room on top.
func packLimit(b plugind.Budget) int64 { return max(4*b.MaxBytes, 64<<20) }
