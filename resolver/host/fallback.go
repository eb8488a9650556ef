package host

import (
	"context"
	"errors"
	"fmt"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/source"
)

// Fallback tries Primary and, when it fails for a reason another transport
// might not share (a network error, a refused protocol), Secondary: GitHub's
// git → archive fallback for content, REST → git for refs. A definitive
// answer — not found, unreachable, unsafe, over budget, cancelled, offline —
// is returned as is: the other transport would only repeat it, or, for
// reachability, must not be asked to overrule it. Every fallback is said in
// a warning, except one for a spent API budget, which the plan says once
// for all its repositories (WatchBudgets).
type Fallback struct {
	Primary, Secondary Repo
	// Label names the two for warnings ("git", "the GitHub API").
	PrimaryLabel, SecondaryLabel string
}

func (f *Fallback) definitive(ctx context.Context, err error) bool {
	return ctx.Err() != nil || IsNotFound(err) || Fatal(err) || errors.Is(err, ErrOffline) ||
		plugind.CodeOf(err) == plugind.CodeOfflineMiss || plugind.CodeOf(err) == plugind.CodeInvalidSource
}

func (f *Fallback) warn(op string, err error) string {
	return fmt.Sprintf("%s of %s over %s failed (%v); used %s", op, f.Primary.Source().Key(), f.PrimaryLabel, err, f.SecondaryLabel)
}

// Source implements Repo.
func (f *Fallback) Source() source.Source { return f.Primary.Source() }

// Refs implements Repo.
func (f *Fallback) Refs(ctx context.Context) (*Refs, error) {
	refs, err := f.Primary.Refs(ctx)
	if err == nil || f.definitive(ctx, err) {
		return refs, err
	}
	return f.Secondary.Refs(ctx)
}

// Resolve implements Repo.
func (f *Fallback) Resolve(ctx context.Context, ref string, known *Pin) (Pin, error) {
	pin, err := f.Primary.Resolve(ctx, ref, known)
	if err == nil || f.definitive(ctx, err) {
		return pin, err
	}
	pin, err2 := f.Secondary.Resolve(ctx, ref, known)
	if err2 != nil {
		return Pin{}, err
	}
	if pin.Warning == "" && !IsRateLimited(err) {
		pin.Warning = f.warn("resolving "+DescribeRef(ref), err)
	}
	return pin, nil
}

// Reachable implements Repo.
func (f *Fallback) Reachable(ctx context.Context, sha, hint string) error {
	err := f.Primary.Reachable(ctx, sha, hint)
	if err == nil || f.definitive(ctx, err) {
		return err
	}
	return f.Secondary.Reachable(ctx, sha, hint)
}

// Fetch implements Repo.
func (f *Fallback) Fetch(ctx context.Context, sha, dest string, opts FetchOptions) (*Fetched, error) {
	got, err := f.Primary.Fetch(ctx, sha, dest, opts)
	if err == nil || f.definitive(ctx, err) {
		return got, err
	}
	got, err2 := f.Secondary.Fetch(ctx, sha, dest, opts)
	if err2 != nil {
		if f.definitive(ctx, err2) {
			return nil, err2
		}
		return nil, fmt.Errorf("%w; %s also failed: %v", err, f.SecondaryLabel, err2)
	}
	if !IsRateLimited(err) {
		got.Warnings = append(got.Warnings, f.warn("fetching "+Short(sha), err))
	}
	return got, nil
}
