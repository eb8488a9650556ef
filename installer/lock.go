package installer

import (
	"context"
	"fmt"
	"time"

	"github.com/gofrs/flock"

	"reasonix.io/plugind"
)

// LockHome takes the inter-process mutation lock on the home, so the daemon
// and any number of CLI processes publish one at a time. Reads never take it:
// the registry is only ever replaced by an atomic rename.
func (in *Installer) LockHome(ctx context.Context) (unlock func(), err error) {
	if err := plugind.MkdirPrivate(in.Home.Dir); err != nil {
		return nil, fmt.Errorf("create home %s: %w", in.Home.Dir, err)
	}
	fl := flock.New(in.Home.LockPath())
	ok, err := fl.TryLockContext(ctx, 50*time.Millisecond)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", in.Home.LockPath(), err)
	}
	if !ok {
		return nil, fmt.Errorf("lock %s: not acquired", in.Home.LockPath())
	}
	return func() { _ = fl.Unlock() }, nil
}

// lockedState takes the home lock and reads the state file at path under
// it, as every mutation of the registry or the known marketplaces starts:
// what is saved is what was read under the lock. unlock is nil on error.
func lockedState[D any, P interface {
	*D
	stateDoc
}](ctx context.Context, in *Installer, path string) (doc *D, unlock func(), err error) {
	if unlock, err = in.LockHome(ctx); err != nil {
		return nil, nil, err
	}
	if doc, err = loadState[D, P](path, nil); err != nil {
		unlock()
		return nil, nil, err
	}
	return doc, unlock, nil
}
