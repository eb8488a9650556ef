package cache

import (
	"context"
	"log/slog"
	"sync"
)

// The cache is an optimization (SPEC §8): an install must not fail because
// its cache could not remember something (a full disk, a read-only file, a
// page gone bad under a running daemon). So lookups that fail at the storage
// level answer a miss, writes that fail are still returned to the caller
// (which, by convention, drops them), and every such failure is counted here
// so the operation can say once, at the end, that the cache did not keep up.
type failureLog struct {
	log *slog.Logger

	mu     sync.Mutex
	n      int64
	last   error
	lastOp string
}

// Failures reports how many cache operations failed at the storage level
// since Open (each read answered as a miss, each write dropped by its
// caller), the operation of the last one ("read" or "write") and its error.
// n is 0 when the cache kept up. Callers show it once per command; the
// first failure is also logged at warning level when Options.Log is set.
func (db *DB) Failures() (n int64, op string, last error) {
	db.settle()
	db.failures.mu.Lock()
	defer db.failures.mu.Unlock()
	return db.failures.n, db.failures.lastOp, db.failures.last
}

// failed records err, unless it only says ctx was cancelled: the caller gave
// up, the storage did not fail.
func (db *DB) failed(ctx context.Context, op string, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	f := &db.failures
	f.mu.Lock()
	f.n++
	first := f.n == 1
	f.last, f.lastOp = err, op
	f.mu.Unlock()
	if first && f.log != nil {
		f.log.Warn("cache operation failed; going on without it (further failures are counted, not logged)", "op", op, "err", err)
	}
}

// readFailed turns a failed lookup into a miss: it records err and returns
// nil, except when ctx was cancelled, whose error the caller must see.
func (db *DB) readFailed(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return err
	}
	db.failed(ctx, "read", err)
	return nil
}
