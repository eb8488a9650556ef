// Package host is where the bytes of a remote repository come from. A Repo
// is a small interface in the spirit of cmd/go's codehost.Repo — list refs,
// pin a ref to a commit, check that a commit is on a branch or tag, write the
// tree of a commit — with one implementation per subpackage (github: REST,
// git and archives; git: any smart-HTTP host) and every cross-cutting
// behaviour as a layer around the interface, each in a file of its own:
// Cached (refs with ETags, reachability verdicts, negative results),
// Offline, Fallback (git → archive), Retry and WithSubmodules. The resolver
// stacks them, in one function (resolver.Hosts.stack); the layers never
// know which host is underneath.
package host

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"golang.org/x/sync/semaphore"

	"reasonix.io/plugind"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/tarball"
)

// Repo is one remote repository.
type Repo interface {
	// Source is the repository this Repo reaches (its Key names it in
	// caches and messages).
	Source() source.Source
	// Refs lists the branches and tags the remote advertises.
	Refs(ctx context.Context) (*Refs, error)
	// Resolve pins ref ("" = the default branch) to a commit. known, when
	// not nil, is the previous answer: a host that can asks conditionally,
	// and an unchanged ref answers known.SHA with NotModified set.
	Resolve(ctx context.Context, ref string, known *Pin) (Pin, error)
	// Reachable returns nil when commit sha is on one of the remote's
	// branches or tags (SPEC §6), an error wrapping ErrUnreachable or
	// ErrCommitNotFound when it is not. hint is a ref to check first.
	Reachable(ctx context.Context, sha, hint string) error
	// Fetch writes the tree of commit sha into dest, which must not exist
	// (its parent must), with every refusal and budget of SPEC §8.
	Fetch(ctx context.Context, sha, dest string, opts FetchOptions) (*Fetched, error)
}

// Refs is what a remote advertises; in JSON, the team mirror's answer to
// GET /v1/refs.
type Refs struct {
	// Head is the default branch's short name ("main"); "" when unknown.
	Head string `json:"head"`
	// Commits maps short names ("main", "release/v2", "v1.0") to commits;
	// HeadRef maps to the default branch's head.
	Commits map[string]string `json:"commits"`
}

// HeadRef names the default branch where a ref is expected.
const HeadRef = "HEAD"

// RefName is ref as a name: "" (the default branch) is HeadRef.
func RefName(ref string) string { return cmp.Or(ref, HeadRef) }

// Names lists the branch and tag names, HEAD left out.
func (r *Refs) Names() []string {
	return slices.DeleteFunc(slices.Collect(maps.Keys(r.Commits)), func(n string) bool { return n == HeadRef })
}

// Has reports whether sha is the tip of an advertised branch or tag.
func (r *Refs) Has(sha string) bool {
	for _, c := range r.Commits {
		if c == sha {
			return true
		}
	}
	return false
}

// Pin is a ref pinned to a commit.
type Pin struct {
	SHA  string
	ETag string // for the next conditional request
	// NotModified: the host confirmed the previous answer (a 304).
	NotModified bool
	// At is when the host answered (or, from a cache, when it last did).
	At time.Time
	// Warning says how the answer was obtained when that is worth knowing
	// (from the cache while offline, from git when the API failed).
	Warning string
	// Unchecked says why the host could not be asked although it should
	// have been (UncheckedNetwork): SHA is what the cache remembered, and
	// the ref may have moved since. Offline, nobody asks: it stays "".
	Unchecked string
}

// UncheckedNetwork is why a ref could not be checked: its host could not
// be reached (Pin.Unchecked).
const UncheckedNetwork = "network"

// FetchOptions tune one Fetch.
type FetchOptions struct {
	// Paths, when not empty, are the folders (slash paths from the
	// repository root) to write; everything else is left out. Names are
	// checked everywhere; links are followed only from the kept folders
	// (tarball.Options.Paths).
	Paths []string
	// Budget bounds what is written (SPEC §8).
	Budget plugind.Budget
	// Verify asks for proof that sha is on a branch or tag: the transport
	// proves it (a git server that refuses unadvertised commits) or the
	// host checks before downloading. Fetched.Verified reports it.
	Verify bool
	// Progress, when set, receives the content bytes written so far.
	Progress func(n int64)
	// Hash asks for Fetched.Tree: each file hashed as it is written, so
	// the store names the tree without reading it back. dest is then the
	// caller's private staging area, and files are written read-only as
	// the store keeps them.
	Hash bool
	// Concurrent says other fetches run beside this one: a transport
	// that could use more cores or memory for one fetch should not
	// (tarball.Options.SingleThreaded).
	Concurrent bool
	// Submodules fetches the submodules the kept folders hold (SPEC §8);
	// nil refuses a tree that has any there.
	Submodules tarball.SubmoduleFunc
	// Writes bounds how many fetches write a tree at once. A slot is taken
	// only once the content is at hand (an archive's answer has come, a
	// pack is indexed), so a bulk plan can keep more requests in flight
	// than the disk takes extractions: the network wants the one, the
	// disk the other (issue 24). A submodule's fetch, which runs inside
	// its parent's extraction, is given none. nil: no bound.
	Writes *semaphore.Weighted
}

// Writing takes a slot of o.Writes, when there is one, for the tree about
// to be written; release gives it back.
func (o FetchOptions) Writing(ctx context.Context) (release func(), err error) {
	if o.Writes == nil {
		return func() {}, nil
	}
	if err := o.Writes.Acquire(ctx, 1); err != nil {
		return nil, err
	}
	return func() { o.Writes.Release(1) }, nil
}

// Fetched describes a finished Fetch.
type Fetched struct {
	Transport string // "git", "archive", "mirror"
	Verified  bool   // reachability of the commit was proven
	Files     int
	Bytes     int64
	Warnings  []string
	// Tree and Dirs, with FetchOptions.Hash and a transport that can,
	// list what was written below dest (tarball.Result.Tree and Dirs);
	// nil means the caller must scan dest itself.
	Tree []plugind.File
	Dirs []string
	// Submodules lists the submodules written into the tree, nested ones
	// included (tarball.Result.Submodules).
	Submodules []plugind.Submodule
	// Proof says how the content was proven to be the commit's
	// (ProofGitTree), "" when it was not.
	Proof string
	// GitTrees are the git tree ids of what was fetched: "" the root's,
	// and each kept folder's (FetchOptions.Paths) that is a folder of the
	// commit's tree (not one inside a submodule); without Paths, every
	// folder's. Filled by the git transport and by a proven archive.
	GitTrees map[string]string
}

// Errors a Repo returns, wrapped in a plugind.Error carrying the code.
var (
	ErrRepoNotFound   = errors.New("repository not found")
	ErrRefNotFound    = errors.New("ref not found")
	ErrCommitNotFound = errors.New("commit not found in the repository")
	ErrUnreachable    = errors.New("commit is not on any branch or tag")
	ErrPathNotFound   = errors.New("path not found at that commit")
	ErrOffline        = errors.New("offline")
	// ErrRefused: a service refused this client's credentials (the team
	// mirror its token). Like a policy block it is final: no fallback,
	// retry or cached answer may stand in for it.
	ErrRefused = errors.New("credentials refused")
)

// Refused reports whether err is a refusal that nothing may paper over: a
// policy block (install.blocked) or refused credentials (ErrRefused).
func Refused(err error) bool {
	return plugind.CodeOf(err) == plugind.CodeBlocked || errors.Is(err, ErrRefused)
}

// IsNotFound reports whether err says something does not exist (and may be
// remembered as such for a while).
func IsNotFound(err error) bool { return KindOf(err) != "" }

// Fatal reports whether a fetch error is about the content itself (unsafe,
// over budget, cancelled, provably absent, a submodule that could not be
// fetched) or a refusal no transport may overrule (a mirror's policy or
// token, a snapshot that failed its digest check, an address PublicOnly
// refused),
// so trying another transport would give the same answer or must not be
// tried.
func Fatal(err error) bool {
	if err == nil {
		return false
	}
	var addr *AddressRefusedError
	var sub *tarball.SubmoduleError
	if Refused(err) || errors.As(err, &addr) || errors.As(err, &sub) {
		return true
	}
	switch plugind.CodeOf(err) {
	case plugind.CodeBudgetExceeded, plugind.CodeUnsafeArchive, plugind.CodeCancelled, plugind.CodeDigestMismatch:
		return true
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, ErrUnreachable) || errors.Is(err, ErrCommitNotFound) || errors.Is(err, ErrRepoNotFound)
}

// final reports whether err is an answer no other transport or attempt
// could change: one Fatal names, a not-found, an offline miss, a source
// refused as such — or any error once the caller has given up. Fallback
// returns it as is, Retry does not repeat it: one rule for both.
func final(ctx context.Context, err error) bool {
	return ctx.Err() != nil || IsNotFound(err) || Fatal(err) || errors.Is(err, ErrOffline) ||
		slices.Contains([]plugind.Code{plugind.CodeOfflineMiss, plugind.CodeInvalidSource, plugind.CodeNotPinnable}, plugind.CodeOf(err))
}

// DescribeRef names a ref in messages.
func DescribeRef(ref string) string {
	if ref == "" || ref == HeadRef {
		return "the default branch"
	}
	return "ref " + ref
}

// Short abbreviates a commit id for messages.
func Short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
