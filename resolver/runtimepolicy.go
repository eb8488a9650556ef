package resolver

import (
	"context"
	"errors"

	"reasonix.io/plugind/mirror/policy"
	"reasonix.io/plugind/resolver/host"
)

// HasMirror reports a team mirror in front of every repository.
func (h *Hosts) HasMirror() bool { return h != nil && h.mirror != nil }

// RuntimePolicy reads the team mirror's rule for code plugins fetch at run
// time (SPEC §15, §17). When it cannot be read, unread says why and the
// plan goes on without it, as a fetch goes upstream when the mirror is
// down; but with REASONIX_MIRROR_ONLY=1, or when the mirror refused the
// token, nothing goes around the mirror, and err says so: what the rule
// might block is blocked. No mirror: allow.
func (h *Hosts) RuntimePolicy(ctx context.Context) (rule policy.Runtime, unread string, err error) {
	if !h.HasMirror() {
		return policy.RuntimeAllow, "", nil
	}
	rule, err = h.mirror.RuntimePolicy(ctx)
	switch {
	case err == nil:
		return rule, "", nil
	case h.mirror.MirrorOnly() || errors.Is(err, host.ErrRefused) || ctx.Err() != nil:
		return "", "", err
	}
	return "", err.Error(), nil
}
