package installer

import (
	"context"

	"reasonix.io/plugind"
)

// copyMismatch explains why a staged copy of action a hashes to got instead
// of its approved digest, and repairs what can be repaired.
//
// A copy made from a local folder means the folder changed after approval.
// A copy made from a store snapshot cannot mean that: snapshots are
// content-addressed and immutable. Either the snapshot itself was damaged
// (edited, tampered with, a disk error) or the digest recorded for it was.
// Blaming the source then would be wrong, and leaving the snapshot in place
// would fail every later install of it the same way (the failed plan that
// names it keeps it from GC). So the snapshot is re-verified whole: damaged,
// it is quarantined and what the cache derived from it forgotten, and the
// next plan fetches it afresh; intact, only the cached records are dropped.
// Either way nothing is installed and the answer is install.digest_mismatch.
func (in *Installer) copyMismatch(ctx context.Context, a *Action, got string) error {
	digest, ok := "", false
	if in.Store != nil {
		digest, ok = in.Store.SnapshotOf(a.origin)
	}
	if !ok {
		return plugind.Errorf(plugind.CodeDigestMismatch, "%s changed after it was approved: approved %s, copied %s", a.Name, a.ContentDigest, got)
	}
	damage := in.Store.CheckSnapshot(digest)
	if damage == nil {
		in.forgetSnapshot(ctx, digest)
		return plugind.Errorf(plugind.CodeDigestMismatch, "%s: the copy from stored snapshot %s hashes to %s, not the approved %s, yet the snapshot verifies: the digest recorded for it was wrong and has been forgotten; nothing was installed, plan again", a.Name, digest, got, a.ContentDigest)
	}
	if plugind.CodeOf(damage) == plugind.CodeNotFound {
		return plugind.Errorf(plugind.CodeDigestMismatch, "%s: stored snapshot %s vanished while it was copied (approved %s, copied %s); nothing was installed, plan again", a.Name, digest, a.ContentDigest, got)
	}
	if err := in.Store.Quarantine(digest); err != nil && plugind.CodeOf(err) != plugind.CodeNotFound {
		return plugind.Errorf(plugind.CodeDigestMismatch, "%s: %v, and it could not be quarantined (%v); nothing was installed; run `reasonix cache verify --repair`", a.Name, damage, err)
	}
	in.forgetSnapshot(ctx, digest)
	in.Log.Warn("stored snapshot failed verification; quarantined", "plugin", a.Name, "snapshot", digest, "problem", damage)
	return plugind.Errorf(plugind.CodeDigestMismatch, "%s: %v; it was quarantined and nothing was installed. The source is not to blame: plan again and %s is fetched afresh", a.Name, damage, describeSource(a.Source))
}

// forgetSnapshot drops the cache's records derived from snapshot digest.
// The cache is an optimization: a failure here is logged, not returned.
func (in *Installer) forgetSnapshot(ctx context.Context, digest string) {
	if in.Cache == nil {
		return
	}
	if err := in.Cache.ForgetDigest(ctx, digest); err != nil {
		in.Log.Warn("could not forget the cache records of a quarantined snapshot", "snapshot", digest, "err", err)
	}
}
