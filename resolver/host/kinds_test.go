package host

import (
	"errors"
	"fmt"
	"testing"
)

// TestKindsRoundTrip: every not-found answer stored or sent by its kind
// comes back meaning the same (errors.Is holds for the same sentinels),
// the ambiguous commit included; anything else has no kind.
func TestKindsRoundTrip(t *testing.T) {
	all := []error{ErrRepoNotFound, ErrRefNotFound, ErrCommitNotFound, ErrUnreachable, ErrPathNotFound}
	for _, err := range []error{
		ErrRepoNotFound, ErrRefNotFound, ErrCommitNotFound, ErrUnreachable, ErrPathNotFound,
		fmt.Errorf("fetch x: %w", errors.Join(ErrUnreachable, ErrCommitNotFound)),
	} {
		kind := KindOf(err)
		if kind == "" {
			t.Fatalf("%v has no kind", err)
		}
		back := SentinelOf(kind)
		for _, s := range all {
			if errors.Is(err, s) != errors.Is(back, s) {
				t.Errorf("%v → %q → %v: errors.Is(%v) differs", err, kind, back, s)
			}
		}
	}
	if KindOf(errors.New("timeout")) != "" || SentinelOf("failed") != nil || SentinelOf("") != nil {
		t.Error("a failure that is not a not-found has a kind")
	}
}
