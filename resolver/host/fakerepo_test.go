package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/source"
	"reasonix.io/plugind/tarball"
)

// fakeRepo is the Repo under a layer in these tests, in the spirit of
// restic's mock backend: each method answers from its own script — every
// call takes the next answer and the last one repeats — and every call is
// recorded, so a test states what the layer asked of the host as well as
// what it answered. A call nobody scripted fails the test.
type fakeRepo struct {
	t   testing.TB
	src source.Source
	// files, when set, are written below dest by a successful Fetch (a
	// transport that does not hash as it writes leaves Fetched.Tree nil).
	files map[string]string

	mu        sync.Mutex
	refs      script[*Refs]
	resolve   script[Pin]
	reachable script[struct{}]
	fetch     script[*Fetched]
	calls     []fakeCall
}

// fakeCall is one call that reached the fake.
type fakeCall struct {
	Op        string // "refs", "resolve", "reachable", "fetch"
	Ref       string // resolve
	Known     *Pin   // resolve
	SHA, Hint string // reachable, fetch
	Dest      string
	Opts      FetchOptions
}

type answer[T any] struct {
	val T
	err error
}

// script is one method's answers, taken in order; the last one repeats.
type script[T any] struct {
	answers []answer[T]
	next    int
}

func (s *script[T]) take() (answer[T], bool) {
	if len(s.answers) == 0 {
		return answer[T]{}, false
	}
	a := s.answers[min(s.next, len(s.answers)-1)]
	s.next++
	return a, true
}

func newFakeRepo(t testing.TB, raw string) *fakeRepo {
	t.Helper()
	return &fakeRepo{t: t, src: parseSource(t, raw)}
}

// parseSource is the remote source raw names.
func parseSource(t testing.TB, raw string) source.Source {
	t.Helper()
	src, err := source.Parse(raw)
	if err != nil || !src.IsRemote() {
		t.Fatalf("source %q: %v (%v)", raw, src.Kind, err)
	}
	return src
}

func (f *fakeRepo) onRefs(r *Refs, err error) *fakeRepo {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refs.answers = append(f.refs.answers, answer[*Refs]{r, err})
	return f
}

func (f *fakeRepo) onResolve(p Pin, err error) *fakeRepo {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resolve.answers = append(f.resolve.answers, answer[Pin]{p, err})
	return f
}

func (f *fakeRepo) onReachable(err error) *fakeRepo {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reachable.answers = append(f.reachable.answers, answer[struct{}]{struct{}{}, err})
	return f
}

func (f *fakeRepo) onFetch(got *Fetched, err error) *fakeRepo {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fetch.answers = append(f.fetch.answers, answer[*Fetched]{got, err})
	return f
}

func (f *fakeRepo) record(c fakeCall) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
}

// unscripted fails the test: the layer asked the host something the test
// did not expect it to.
func (f *fakeRepo) unscripted(op string) error {
	f.t.Errorf("fake %s: unexpected %s", f.src.Key(), op)
	return fmt.Errorf("fake: %s not scripted", op)
}

// Calls returns what reached the fake, in order.
func (f *fakeRepo) Calls() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeCall(nil), f.calls...)
}

// Ops names the calls, one word each ("resolve", "fetch").
func (f *fakeRepo) Ops() string {
	var ops []string
	for _, c := range f.Calls() {
		ops = append(ops, c.Op)
	}
	return strings.Join(ops, " ")
}

func (f *fakeRepo) Source() source.Source { return f.src }

func (f *fakeRepo) Refs(ctx context.Context) (*Refs, error) {
	f.record(fakeCall{Op: "refs"})
	f.mu.Lock()
	a, ok := f.refs.take()
	f.mu.Unlock()
	if !ok {
		return nil, f.unscripted("refs")
	}
	if a.err != nil {
		return nil, a.err
	}
	// A copy, as a host answers each call anew: a layer must not share a
	// map the test (or the next call) holds.
	out := &Refs{Head: a.val.Head, Commits: map[string]string{}}
	for k, v := range a.val.Commits {
		out.Commits[k] = v
	}
	return out, nil
}

func (f *fakeRepo) Resolve(ctx context.Context, ref string, known *Pin) (Pin, error) {
	var k *Pin
	if known != nil {
		cp := *known
		k = &cp
	}
	f.record(fakeCall{Op: "resolve", Ref: ref, Known: k})
	f.mu.Lock()
	a, ok := f.resolve.take()
	f.mu.Unlock()
	if !ok {
		return Pin{}, f.unscripted("resolve")
	}
	return a.val, a.err
}

func (f *fakeRepo) Reachable(ctx context.Context, sha, hint string) error {
	f.record(fakeCall{Op: "reachable", SHA: sha, Hint: hint})
	f.mu.Lock()
	a, ok := f.reachable.take()
	f.mu.Unlock()
	if !ok {
		return f.unscripted("reachable")
	}
	return a.err
}

func (f *fakeRepo) Fetch(ctx context.Context, sha, dest string, opts FetchOptions) (*Fetched, error) {
	f.record(fakeCall{Op: "fetch", SHA: sha, Dest: dest, Opts: opts})
	f.mu.Lock()
	a, ok := f.fetch.take()
	files := f.files
	f.mu.Unlock()
	if !ok {
		return nil, f.unscripted("fetch")
	}
	if a.err != nil {
		return nil, a.err
	}
	if files != nil {
		if err := writeFiles(dest, files); err != nil {
			return nil, err
		}
	}
	got := *a.val // each caller gets its own (layers append warnings)
	got.Warnings = append([]string(nil), got.Warnings...)
	return &got, nil
}

func writeFiles(dest string, files map[string]string) error {
	if err := os.Mkdir(dest, 0o755); err != nil {
		return err
	}
	for name, content := range files {
		p := filepath.Join(dest, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Errors the tests script, each as a host would return it.
var (
	// errNetwork is a transient failure: the connection dropped.
	errNetwork    = plugind.Errorf(plugind.CodeSourceUnreadable, "fetch: connection reset by peer")
	errRepoGone   = plugind.Errorf(plugind.CodeNotFound, "acme/tools: %w", ErrRepoNotFound)
	errRefGone    = plugind.Errorf(plugind.CodeNotFound, "ref main: %w", ErrRefNotFound)
	errCommitGone = plugind.Errorf(plugind.CodeNotFound, "commit: %w", ErrCommitNotFound)
	errOffReach   = plugind.Errorf(plugind.CodeNotFound, "commit: %w", ErrUnreachable)
	// errEither is a commit a git host would not serve, which it cannot
	// tell absent from unreachable.
	errEither  = plugind.Errorf(plugind.CodeNotFound, "not our ref: %w", errors.Join(ErrUnreachable, ErrCommitNotFound))
	errBlocked = plugind.Errorf(plugind.CodeBlocked, "the mirror's policy blocks acme/tools")
	errToken   = plugind.Errorf(plugind.CodeSourceUnreadable, "mirror: %w", ErrRefused)
	errUnsafe  = plugind.Errorf(plugind.CodeUnsafeArchive, "entry ../x escapes the tree")
	errBudget  = plugind.Errorf(plugind.CodeBudgetExceeded, "more than 10 files")
)

// Commit ids the tests pin.
const (
	shaA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	shaC = "cccccccccccccccccccccccccccccccccccccccc"
)

// finalErrors are answers no other transport or attempt could change —
// it would repeat them, or must not be asked to overrule them — so
// Fallback returns them as is and Retry does not repeat them.
func finalErrors() map[string]error {
	return map[string]error{
		"repository not found":   errRepoGone,
		"ref not found":          errRefGone,
		"commit not found":       errCommitGone,
		"unreachable":            errOffReach,
		"not served (either)":    errEither,
		"path not found":         plugind.Errorf(plugind.CodeNotFound, "plugins/x: %w", ErrPathNotFound),
		"policy block":           errBlocked,
		"refused credentials":    errToken,
		"unsafe archive":         errUnsafe,
		"over budget":            errBudget,
		"digest mismatch":        plugind.Errorf(plugind.CodeDigestMismatch, "snapshot digest differs"),
		"cancelled (coded)":      plugind.Errorf(plugind.CodeCancelled, "cancelled"),
		"context cancelled":      fmt.Errorf("fetch: %w", context.Canceled),
		"deadline exceeded":      fmt.Errorf("fetch: %w", context.DeadlineExceeded),
		"address refused":        fmt.Errorf("dial: %w", &AddressRefusedError{Kind: "loopback"}),
		"submodule failed":       &tarball.SubmoduleError{Path: "lib", Commit: shaB, Err: errors.New("from x: gone")},
		"offline miss":           plugind.Errorf(plugind.CodeOfflineMiss, "offline: x: %w", ErrOffline),
		"offline":                fmt.Errorf("x: %w", ErrOffline),
		"invalid source":         plugind.Errorf(plugind.CodeInvalidSource, "submodule URL refused"),
		"not pinnable (git off)": plugind.Errorf(plugind.CodeNotPinnable, "git is off"),
	}
}

// transientErrors are failures another transport, or a second attempt,
// may get past.
func transientErrors() map[string]error {
	return map[string]error{
		"connection reset": errNetwork,
		"uncoded":          errors.New("unexpected EOF"),
		"server error":     plugind.Errorf(plugind.CodeSourceUnreadable, "giving up after 4 attempts: x answered 502 Bad Gateway"),
	}
}
