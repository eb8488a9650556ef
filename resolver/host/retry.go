package host

import (
	"cmp"
	"context"
	"log/slog"
	"time"
)

// Retry repeats an operation that failed for a transient reason (the
// connection dropped, the server answered 5xx) with backoff: git's smart
// HTTP has no retries of its own, unlike the REST client. Definitive
// answers and cancellations are returned at once. Attempts are logged at
// debug level; the last error is returned as is.
type Retry struct {
	Repo
	Attempts int           // default 3
	Wait     time.Duration // first backoff, doubled each time (default 200ms)
	Log      *slog.Logger
}

// NewRetry wraps r.
func NewRetry(r Repo, log *slog.Logger) *Retry {
	log = cmp.Or(log, slog.New(slog.DiscardHandler))
	return &Retry{Repo: r, Attempts: 3, Wait: 200 * time.Millisecond, Log: log}
}

func (r *Retry) do(ctx context.Context, op string, fn func() error) error {
	wait := r.Wait
	var err error
	for attempt := 1; ; attempt++ {
		err = fn()
		if err == nil || final(ctx, err) || attempt >= r.Attempts {
			return err
		}
		r.Log.Debug("retrying", "op", op, "repo", r.Source().Key(), "attempt", attempt, "err", err)
		WatcherFrom(ctx).Retrying(r.Source().Key(), attempt+1, r.Attempts, wait, err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// Refs implements Repo.
func (r *Retry) Refs(ctx context.Context) (refs *Refs, err error) {
	err = r.do(ctx, "refs", func() error { refs, err = r.Repo.Refs(ctx); return err })
	return refs, err
}

// Resolve implements Repo.
func (r *Retry) Resolve(ctx context.Context, ref string, known *Pin) (pin Pin, err error) {
	err = r.do(ctx, "resolve", func() error { pin, err = r.Repo.Resolve(ctx, ref, known); return err })
	return pin, err
}

// Reachable implements Repo.
func (r *Retry) Reachable(ctx context.Context, sha, hint string) error {
	return r.do(ctx, "reachable", func() error { return r.Repo.Reachable(ctx, sha, hint) })
}

// Fetch implements Repo.
func (r *Retry) Fetch(ctx context.Context, sha, dest string, opts FetchOptions) (got *Fetched, err error) {
	err = r.do(ctx, "fetch", func() error { got, err = r.Repo.Fetch(ctx, sha, dest, opts); return err })
	return got, err
}
