package resolver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"reasonix.io/plugind/mirror/policy"
	"reasonix.io/plugind/resolver/host"
)

// HasMirror reports a team mirror in front of every repository.
func (h *Hosts) HasMirror() bool { return h != nil && h.mirror != nil }

// RuntimeRule is the team mirror's rule for code plugins fetch at run
// time (SPEC §15, §17) as a plan applies it.
type RuntimeRule struct {
	// Rule is "" when it could not be read and this home never read it.
	Rule policy.Runtime
	// Note, when the rule was not read now, says why, and, when Rule is
	// set, when it was read: the plan says so.
	Note string
}

// RuntimePolicy reads the team mirror's rule for run-time fetches.
// Offline, or when the mirror cannot be read, the rule this home read
// last from it applies, saying when; when there is none, Note says why and
// the plan goes on without it, as a fetch goes upstream when the mirror is
// down. But with REASONIX_MIRROR_ONLY=1, or when the mirror refused the
// token, nothing goes around the mirror, and err says so: what the rule
// might block is blocked. No mirror: allow.
func (h *Hosts) RuntimePolicy(ctx context.Context, offline bool) (RuntimeRule, error) {
	if !h.HasMirror() {
		return RuntimeRule{Rule: policy.RuntimeAllow}, nil
	}
	why := "offline: the mirror is not asked"
	if !offline {
		rule, err := h.mirror.RuntimePolicy(ctx)
		switch {
		case err == nil:
			return RuntimeRule{Rule: rule}, nil
		case h.mirror.MirrorOnly() || errors.Is(err, host.ErrRefused) || ctx.Err() != nil:
			return RuntimeRule{}, err
		}
		why = err.Error()
	}
	if rule, at, ok := h.mirror.RememberedPolicy(); ok {
		return RuntimeRule{Rule: rule, Note: fmt.Sprintf("%s; the rule it gave at %s applies", why, at.UTC().Format(time.DateTime+" UTC"))}, nil
	}
	return RuntimeRule{Note: why}, nil
}
