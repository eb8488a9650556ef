package policy

import (
	"fmt"
	"slices"
)

// Scopes are a mirror token's scopes (SPEC §15): RULEs in the policy's own
// syntax, parsed by its parser and matched as its allow rules match, naming
// what the token may fetch. A token with none may fetch anything the
// policy allows; the policy still applies to a scoped token (block wins).
// The zero value has none.
type Scopes struct {
	rules []rule
}

// ParseScopes checks each RULE as a policy rule is checked; the error
// names the bad one.
func ParseScopes(rules []string) (Scopes, error) {
	var s Scopes
	for _, text := range rules {
		r, err := parseRule(text)
		if err != nil {
			return Scopes{}, fmt.Errorf("scope %w", err)
		}
		s.rules = append(s.rules, r)
	}
	return s, nil
}

// Limited reports whether there are scopes at all.
func (s Scopes) Limited() bool { return len(s.rules) > 0 }

// Allows reports whether the repository key (as source.Key spells it) is
// inside the scopes: always, when there are none; else when one of them
// covers it, as an allow rule would.
func (s Scopes) Allows(key string) bool {
	return !s.Limited() || slices.ContainsFunc(s.rules, keyMatcher(key))
}

// Rules returns the scopes as they were written, for storage and messages.
func (s Scopes) Rules() []string {
	out := make([]string, len(s.rules))
	for i, r := range s.rules {
		out[i] = r.text
	}
	return out
}
