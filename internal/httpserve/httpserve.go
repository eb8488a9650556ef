// Package httpserve is the one graceful shutdown of the daemon (server)
// and the team mirror: serve until told to stop, let in-flight requests
// finish, then cancel their work and wait, bounded, for them to answer.
package httpserve

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// CancelWait bounds how long Serve waits for cancelled handlers to return.
const CancelWait = 10 * time.Second

// Serve serves srv on ln until ctx is done, then shuts down gracefully: no
// new connections, in-flight requests get grace to finish (an install in
// progress completes), and after it cancel is called, which must cancel
// their work (an unfinished install is discarded whole: publication checks
// its context before the registry write, the single commit point). Serve
// then waits (at most CancelWait) for the cancelled handlers to clean up
// and answer before it closes their connections. cancel is called however
// Serve returns; after a shutdown it returns nil.
func Serve(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration, cancel func(), log *slog.Logger) error {
	defer cancel()
	var inflight atomic.Int64 // for the shutdown log
	h := srv.Handler
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inflight.Add(1)
		defer inflight.Add(-1)
		h.ServeHTTP(w, r)
	})
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "inflight", inflight.Load(), "grace", grace.String())
	graceCtx, stop := context.WithTimeout(context.Background(), max(grace, 0))
	err := srv.Shutdown(graceCtx)
	stop()
	if err != nil {
		log.Warn("in-flight requests did not finish in time; cancelling them", "inflight", inflight.Load())
		cancel()
		// Cancelled handlers still run to their end (a cancelled install
		// removes what it staged) and answer; wait for that, bounded.
		waitCtx, stop := context.WithTimeout(context.Background(), CancelWait)
		err = srv.Shutdown(waitCtx)
		stop()
		if errors.Is(err, context.DeadlineExceeded) {
			log.Error("requests still running after cancellation; closing their connections", "inflight", inflight.Load())
			_ = srv.Close()
		}
	}
	<-errc
	log.Info("stopped")
	return nil
}
