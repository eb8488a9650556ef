package host

import (
	"context"
	"fmt"

	"reasonix.io/plugind/source"
)

// Fallback tries Primary and, when it fails for a reason another transport
// might not share (a network error, a refused protocol), Secondary: GitHub's
// git → archive fallback for content, REST → git for refs. A final answer
// (final: not found, unreachable, unsafe, over budget, cancelled, offline)
// is returned as is: the other transport would only repeat it, or, for
// reachability, must not be asked to overrule it. Every fallback is said in
// a warning, except one for a spent API budget, which the plan says once
// for all its repositories (WatchBudgets).
type Fallback struct {
	Primary, Secondary Repo
	// Label names the two for warnings ("git", "the GitHub API").
	PrimaryLabel, SecondaryLabel string
}

// bothFailed is the error when Secondary failed too, after Primary failed
// with err: Secondary's own when it is an answer (a ref git does not
// advertise, after the API was rate limited), which Primary's failure must
// not hide — nor let a cache above answer in its place; otherwise both,
// Primary's wrapped.
func (f *Fallback) bothFailed(ctx context.Context, err, err2 error) error {
	if final(ctx, err2) {
		return err2
	}
	return fmt.Errorf("%w; %s also failed: %v", err, f.SecondaryLabel, err2)
}

func (f *Fallback) warn(op string, err error) string {
	return fmt.Sprintf("%s of %s over %s failed (%v); used %s", op, f.Primary.Source().Key(), f.PrimaryLabel, err, f.SecondaryLabel)
}

// Source implements Repo.
func (f *Fallback) Source() source.Source { return f.Primary.Source() }

// try asks primary and, when that failed for a reason the other might not
// share, secondary; failed is primary's failure when secondary answered.
func try[T any](ctx context.Context, f *Fallback, ask func(Repo) (T, error)) (got T, failed, err error) {
	got, err = ask(f.Primary)
	if err == nil || final(ctx, err) {
		return got, nil, err
	}
	got, err2 := ask(f.Secondary)
	if err2 != nil {
		var none T
		return none, err, f.bothFailed(ctx, err, err2)
	}
	return got, err, nil
}

// Refs implements Repo.
func (f *Fallback) Refs(ctx context.Context) (*Refs, error) {
	refs, _, err := try(ctx, f, func(r Repo) (*Refs, error) { return r.Refs(ctx) })
	return refs, err
}

// Resolve implements Repo.
func (f *Fallback) Resolve(ctx context.Context, ref string, known *Pin) (Pin, error) {
	pin, failed, err := try(ctx, f, func(r Repo) (Pin, error) { return r.Resolve(ctx, ref, known) })
	if failed != nil && err == nil && pin.Warning == "" && !IsRateLimited(failed) {
		pin.Warning = f.warn("resolving "+DescribeRef(ref), failed)
	}
	return pin, err
}

// Reachable implements Repo.
func (f *Fallback) Reachable(ctx context.Context, sha, hint string) error {
	_, _, err := try(ctx, f, func(r Repo) (struct{}, error) { return struct{}{}, r.Reachable(ctx, sha, hint) })
	return err
}

// Fetch implements Repo.
func (f *Fallback) Fetch(ctx context.Context, sha, dest string, opts FetchOptions) (*Fetched, error) {
	got, failed, err := try(ctx, f, func(r Repo) (*Fetched, error) { return r.Fetch(ctx, sha, dest, opts) })
	if failed != nil && err == nil && !IsRateLimited(failed) {
		got.Warnings = append(got.Warnings, f.warn("fetching "+Short(sha), failed))
	}
	return got, err
}
