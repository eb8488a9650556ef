package mirror

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/secrets"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/store"
	"reasonix.io/plugind/tarball"
)

// The mirror's answers, as the mirror (package reasonix.io/plugind/mirror)
// writes them and this client reads them.

// Response headers of GET /v1/snapshot.
const (
	HeaderDigest   = "X-Reasonix-Digest"   // the tree digest of the archive's content
	HeaderVerified = "X-Reasonix-Verified" // "true": the commit is proven on a branch or tag
	HeaderFiles    = "X-Reasonix-Files"
	HeaderBytes    = "X-Reasonix-Bytes" // file content bytes
)

// ResolveResponse is GET /v1/resolve's answer.
type ResolveResponse struct {
	SHA string `json:"sha"`
	Ref string `json:"ref"`
}

// ETag is the mirror's validator for a resolved ref: the commit itself.
func ETag(sha string) string { return `"` + sha + `"` }

// ErrorBody is what a /v1 route answers when it cannot serve: the HTTP
// status, the SPEC §11 error code and, for "does not exist" answers, which
// thing is missing, so the client rebuilds the host package's typed error
// (and its cache remembers it as it would upstream's).
type ErrorBody struct {
	Status int          `json:"-"`
	Msg    string       `json:"error"`
	Code   plugind.Code `json:"errorCode"`
	// Kind is repo, ref, commit, unreachable or path for a not-found.
	Kind string `json:"kind,omitempty"`
	// Rule is the policy rule that blocked the request.
	Rule string `json:"rule,omitempty"`
}

func (e *ErrorBody) Error() string { return e.Msg }

// Unwrap gives the answer's code to plugind.CodeOf, so an answer met
// inside another operation (a policy block on a submodule's repository)
// keeps its code when that operation wraps or seals it.
func (e *ErrorBody) Unwrap() error {
	if e.Code == "" {
		return nil
	}
	return &plugind.Error{Code: e.Code, Msg: e.Msg}
}

// maxErrorBody bounds what is read of an error answer.
const maxErrorBody = 64 << 10

// Repo is one repository as the mirror serves it.
type Repo struct {
	c   *Client
	src source.Source
}

// Source implements host.Repo.
func (r *Repo) Source() source.Source { return r.src }

// errorOf rebuilds the host package's typed error from a mirror's error
// answer, so every layer above treats it as it would upstream's: a
// not-found is remembered, install.blocked, a refused token and refused
// content are final, anything else may fall back to upstream.
func (r *Repo) errorOf(resp *http.Response, base string) error {
	var e ErrorBody
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if json.Unmarshal(body, &e) != nil || e.Msg == "" {
		e.Msg = cmp.Or(strings.TrimSpace(string(body)), resp.Status)
	}
	msg := secrets.Mask(e.Msg)
	switch {
	case resp.StatusCode == http.StatusForbidden && e.Code == plugind.CodeBlocked:
		return &plugind.Error{Code: plugind.CodeBlocked, Msg: "the team mirror refused it: " + msg}
	case resp.StatusCode == http.StatusNotFound && e.Kind != "":
		return &plugind.Error{Code: cmp.Or(e.Code, plugind.CodeNotFound), Msg: msg, Err: sentinel(e.Kind)}
	case resp.StatusCode == http.StatusUnprocessableEntity && (e.Code == plugind.CodeBudgetExceeded || e.Code == plugind.CodeUnsafeArchive):
		return &plugind.Error{Code: e.Code, Msg: msg}
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return r.c.refused(base, resp.Status)
	}
	return &replicaError{status: resp.StatusCode, err: plugind.Errorf(plugind.CodeSourceUnreadable, "team mirror %s answered %s: %s", base, resp.Status, msg)}
}

// sentinel is what a replica's not-found kind means; a kind this client
// does not know is still a not-found, of the path asked for.
func sentinel(kind string) error {
	if err := host.SentinelOf(kind); err != nil {
		return err
	}
	return host.ErrPathNotFound
}

// replicaError is a failure of one replica (it is down, overloaded, or
// upstream failed for it): the next replica may do better.
type replicaError struct {
	status int
	err    error
}

func (e *replicaError) Error() string { return e.err.Error() }
func (e *replicaError) Unwrap() error { return e.err }

// retryable reports whether another replica is worth asking.
func retryable(err error) bool {
	if re, ok := errors.AsType[*replicaError](err); ok {
		// A 4xx other than those rebuilt as typed errors (a 400: the request)
		// would be the same on every replica.
		return re.status == 0 || re.status >= 500 || re.status == http.StatusTooManyRequests
	}
	return false
}

// do sends the request built for each replica in turn, starting with the
// one that answered last, until one gives an answer that is not a replica
// failure; handle (nil: nothing to read) reads that answer when its status
// is one of accept, errorOf any other (a replica failure in either — a body
// cut short — moves on too). Two rounds, so a replica restarting between
// them is not fatal.
func (r *Repo) do(ctx context.Context, op, path string, q url.Values, hdr http.Header, accept []int, handle func(resp *http.Response, base string) error) error {
	urls := r.c.cfg.URLs
	start := int(r.c.preferred.Load())
	var last error
	for round := 0; round < 2; round++ {
		if round > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
		}
		for k := range urls {
			i := (start + k) % len(urls)
			err := r.try(ctx, urls[i], path, q, hdr, accept, handle)
			if err == nil {
				r.c.preferred.Store(int32(i))
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !retryable(err) {
				return err
			}
			r.c.cfg.Log.Debug("mirror replica failed; trying the next", "op", op, "mirror", urls[i], "err", err)
			last = err
		}
	}
	if r.src.IsZero() { // a question about the mirror itself
		return fmt.Errorf("%s: every team mirror replica failed (%d tried): %w", op, len(urls), last)
	}
	return fmt.Errorf("%s of %s: every team mirror replica failed (%d tried): %w", op, r.src.Key(), len(urls), last)
}

func (r *Repo) try(ctx context.Context, base, path string, q url.Values, hdr http.Header, accept []int, handle func(*http.Response, string) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path+"?"+q.Encode(), nil)
	if err != nil {
		return fmt.Errorf("team mirror %s: %w", base, err)
	}
	maps.Copy(req.Header, hdr)
	if r.c.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.c.cfg.Token)
	}
	resp, err := r.c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &replicaError{err: plugind.Errorf(plugind.CodeSourceUnreadable, "team mirror %s: %v", base, source.StripURLError(err))}
	}
	defer resp.Body.Close()
	switch {
	case !slices.Contains(accept, resp.StatusCode):
		return r.errorOf(resp, base)
	case handle == nil:
		return nil
	}
	return handle(resp, base)
}

func (r *Repo) query() url.Values { return url.Values{"repo": {r.src.URL()}} }

// decode reads a JSON answer.
func decode(resp *http.Response, base string, v any) error {
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(v); err != nil {
		return &replicaError{err: plugind.Errorf(plugind.CodeSourceUnreadable, "team mirror %s: unreadable answer: %v", base, err)}
	}
	return nil
}

// Refs implements host.Repo.
func (r *Repo) Refs(ctx context.Context) (*host.Refs, error) {
	var out *host.Refs
	err := r.do(ctx, "listing the refs", "/v1/refs", r.query(), nil, []int{http.StatusOK}, func(resp *http.Response, base string) error {
		var refs host.Refs
		if err := decode(resp, base, &refs); err != nil {
			return err
		}
		if refs.Commits == nil {
			refs.Commits = map[string]string{}
		}
		out = &refs
		return nil
	})
	return out, err
}

// Resolve implements host.Repo: conditional on the known commit, so an
// unchanged ref is a 304.
func (r *Repo) Resolve(ctx context.Context, ref string, known *host.Pin) (host.Pin, error) {
	if source.IsSHA(ref) {
		return host.Pin{SHA: ref}, nil
	}
	q := r.query()
	q.Set("ref", ref)
	hdr := http.Header{}
	if known != nil && source.IsSHA(known.SHA) {
		hdr.Set("If-None-Match", ETag(known.SHA))
	}
	var pin host.Pin
	err := r.do(ctx, "resolving "+host.DescribeRef(ref), "/v1/resolve", q, hdr, []int{http.StatusOK, http.StatusNotModified}, func(resp *http.Response, base string) error {
		if resp.StatusCode == http.StatusNotModified {
			pin = host.Pin{SHA: known.SHA, ETag: resp.Header.Get("ETag"), NotModified: true, At: time.Now()}
			return nil
		}
		var body ResolveResponse
		if err := decode(resp, base, &body); err != nil {
			return err
		}
		if !source.IsSHA(body.SHA) {
			return &replicaError{err: plugind.Errorf(plugind.CodeSourceUnreadable, "team mirror %s answered %q for %s of %s, not a commit id", base, body.SHA, host.DescribeRef(ref), r.src.Key())}
		}
		pin = host.Pin{SHA: body.SHA, ETag: resp.Header.Get("ETag"), At: time.Now()}
		return nil
	})
	return pin, err
}

// Reachable implements host.Repo.
func (r *Repo) Reachable(ctx context.Context, sha, hint string) error {
	q := r.query()
	q.Set("sha", sha)
	if hint != "" {
		q.Set("hint", hint)
	}
	return r.do(ctx, "checking commit "+host.Short(sha), "/v1/reachable", q, nil, []int{http.StatusNoContent, http.StatusOK}, nil)
}

// Fetch implements host.Repo: the mirror's archive of the commit (or of
// the folders in opts.Paths), extracted by tarball with every refusal and
// budget of SPEC §8, then hashed: a tree whose digest is not the one the
// mirror named is removed and refused as install.digest_mismatch, and no
// other replica or upstream is asked to overrule that.
func (r *Repo) Fetch(ctx context.Context, sha, dest string, opts host.FetchOptions) (*host.Fetched, error) {
	q := r.query()
	q.Set("sha", sha)
	for _, p := range opts.Paths {
		q.Add("path", p)
	}
	var got *host.Fetched
	err := r.do(ctx, "fetching "+host.Short(sha), "/v1/snapshot", q, nil, []int{http.StatusOK}, func(resp *http.Response, base string) error {
		want := resp.Header.Get(HeaderDigest)
		if store.ValidateDigest(want) != nil {
			return &replicaError{err: plugind.Errorf(plugind.CodeSourceUnreadable, "team mirror %s sent a snapshot of %s@%s without a valid %s header", base, r.src.Key(), host.Short(sha), HeaderDigest)}
		}
		var err error
		got, err = r.extract(ctx, resp, base, sha, want, dest, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	if opts.Verify && !got.Verified {
		if err := r.Reachable(ctx, sha, ""); err != nil {
			_ = os.RemoveAll(dest)
			return nil, err
		}
		got.Verified = true
	}
	return got, nil
}

func (r *Repo) extract(ctx context.Context, resp *http.Response, base, sha, want, dest string, opts host.FetchOptions) (*host.Fetched, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body := host.NewStallReader(resp.Body, base, r.c.cfg.Net.Timeout, cancel)
	defer body.Close()
	release, err := opts.Writing(sctx)
	if err != nil {
		return nil, err
	}
	defer release()
	// Hashed as written: the mirror's digest is checked without reading
	// the tree back.
	res, err := tarball.ExtractTarGz(sctx, body, dest, tarball.Options{
		Budget: opts.Budget, Paths: opts.Paths, Progress: opts.Progress,
		Hash: true, ReadOnly: opts.Hash, SingleThreaded: opts.Concurrent,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		switch plugind.CodeOf(err) {
		case plugind.CodeBudgetExceeded, plugind.CodeUnsafeArchive:
			return nil, fmt.Errorf("%s@%s from team mirror %s: %w", r.src.Key(), host.Short(sha), base, err)
		}
		// Cut short or damaged in transit: another replica may send it whole.
		return nil, &replicaError{err: plugind.WithCode(plugind.CodeSourceUnreadable, fmt.Errorf("%s@%s from team mirror %s: %w", r.src.Key(), host.Short(sha), base, err))}
	}
	if d := plugind.DigestFiles(res.Tree); d != want {
		_ = os.RemoveAll(dest)
		return nil, plugind.Errorf(plugind.CodeDigestMismatch, "%s@%s from team mirror %s: the snapshot's tree digest is %s, but the mirror named it %s; refusing it (the mirror's object store holds altered content)", r.src.Key(), host.Short(sha), base, d, want)
	}
	verified, _ := strconv.ParseBool(resp.Header.Get(HeaderVerified))
	got := &host.Fetched{Transport: "mirror", Verified: verified, Files: res.Files, Bytes: res.Bytes}
	if opts.Hash {
		got.Tree, got.Dirs = res.Tree, res.Dirs
	}
	return got, nil
}
