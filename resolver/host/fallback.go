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

// Refs implements Repo.
func (f *Fallback) Refs(ctx context.Context) (*Refs, error) {
	refs, err := f.Primary.Refs(ctx)
	if err == nil || final(ctx, err) {
		return refs, err
	}
	refs, err2 := f.Secondary.Refs(ctx)
	if err2 != nil {
		return nil, f.bothFailed(ctx, err, err2)
	}
	return refs, nil
}

// Resolve implements Repo.
func (f *Fallback) Resolve(ctx context.Context, ref string, known *Pin) (Pin, error) {
	pin, err := f.Primary.Resolve(ctx, ref, known)
	if err == nil || final(ctx, err) {
		return pin, err
	}
	pin, err2 := f.Secondary.Resolve(ctx, ref, known)
	if err2 != nil {
		return Pin{}, f.bothFailed(ctx, err, err2)
	}
	if pin.Warning == "" && !IsRateLimited(err) {
		pin.Warning = f.warn("resolving "+DescribeRef(ref), err)
	}
	return pin, nil
}

// Reachable implements Repo.
func (f *Fallback) Reachable(ctx context.Context, sha, hint string) error {
	err := f.Primary.Reachable(ctx, sha, hint)
	if err == nil || final(ctx, err) {
		return err
	}
	if err2 := f.Secondary.Reachable(ctx, sha, hint); err2 != nil {
		return f.bothFailed(ctx, err, err2)
	}
	return nil
}

// Fetch implements Repo.
func (f *Fallback) Fetch(ctx context.Context, sha, dest string, opts FetchOptions) (*Fetched, error) {
	got, err := f.Primary.Fetch(ctx, sha, dest, opts)
	if err == nil || final(ctx, err) {
		return got, err
	}
	got, err2 := f.Secondary.Fetch(ctx, sha, dest, opts)
	if err2 != nil {
		return nil, f.bothFailed(ctx, err, err2)
	}
	if !IsRateLimited(err) {
		got.Warnings = append(got.Warnings, f.warn("fetching "+Short(sha), err))
	}
	return got, nil
}
