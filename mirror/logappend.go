package mirror

import (
	"context"
	"sync"

	"reasonix.io/plugind/mirror/meta"
)

// logAppender gathers the appends of concurrent lookups into one
// transaction each time (meta.AppendLogRecords): a cold bulk install asks
// for hundreds of records the log lacks at once, and appending them one
// transaction at a time, serialized across replicas, made it queue behind
// the lock (issue 27). There is no timer: the first lookup to append
// leads, appending what is pending then; the lookups that arrive while it
// does wait, and are the next batch, led by a goroutine of their own so
// the leader answers as soon as its own record is in.
type logAppender struct {
	db     *meta.DB
	detach func(context.Context) (context.Context, context.CancelFunc)

	mu       sync.Mutex
	pending  []*pendingAppend
	flushing bool // a batch is being appended; the pending wait for it
}

type pendingAppend struct {
	rec  meta.LogAppend
	done chan struct{}
	res  meta.Appended
	err  error
}

// append appends rec, with whatever else is pending, and returns its id.
func (a *logAppender) append(ctx context.Context, rec meta.LogAppend) (meta.Appended, error) {
	p := &pendingAppend{rec: rec, done: make(chan struct{})}
	a.mu.Lock()
	a.pending = append(a.pending, p)
	lead := !a.flushing
	a.flushing = true
	a.mu.Unlock()
	if lead {
		a.flush(ctx)
	}
	select {
	case <-p.done:
		return p.res, p.err
	case <-ctx.Done():
		return meta.Appended{}, ctx.Err() // appended all the same, by the batch
	}
}

// flush appends one batch, everything pending, then hands what arrived
// meanwhile to a goroutine of its own, or ends the flushing.
func (a *logAppender) flush(ctx context.Context) {
	a.mu.Lock()
	batch := a.pending
	a.pending = nil
	a.mu.Unlock()
	ctx, cancel := a.detach(ctx) // what was fetched is logged even if its client left
	recs := make([]meta.LogAppend, len(batch))
	for i, p := range batch {
		recs[i] = p.rec
	}
	res, err := a.db.AppendLogRecords(ctx, recs)
	cancel()
	for i, p := range batch {
		if err == nil {
			p.res = res[i]
		}
		p.err = err
		close(p.done)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.pending) == 0 {
		a.flushing = false
		return
	}
	go a.flush(context.WithoutCancel(ctx))
}
