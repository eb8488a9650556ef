package installer

import (
	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/lazyregexp"
)

// PlanID names one plan (SPEC §9): the plan's top risk, then ":sha256:" and
// 32 hex digits of the hash of what approving it covers. It is parsed once,
// where an approval comes in — the CLI's --plan-id (a flag.Value), the
// daemon's "planId" (a TextUnmarshaler) — so a PlanID is always well formed
// and nothing past the edge checks its form again. The zero value is no
// plan id.
type PlanID struct{ text string }

// planIDForm is what every planId looks like.
var planIDForm = lazyregexp.New(`^(low|medium|high):sha256:[0-9a-f]{32}$`)

// ParsePlanID reads a planId, refusing (install.invalid_source) a string
// that cannot be one and naming the form, so a mistyped or truncated id is
// not mistaken for a plan that changed.
func ParsePlanID(s string) (PlanID, error) {
	if s == "" {
		return PlanID{}, plugind.Errorf(plugind.CodeInvalidSource, "plan id is empty: a plan id is low, medium or high, then :sha256: and 32 hex digits (copy it from the plan's planId)")
	}
	if !planIDForm.MatchString(s) {
		shown := s
		if len(shown) > 80 {
			shown = shown[:77] + "..."
		}
		return PlanID{}, plugind.Errorf(plugind.CodeInvalidSource, "plan id %q is malformed: a plan id is low, medium or high, then :sha256: and 32 hex digits (copy it from the plan's planId)", shown)
	}
	return PlanID{s}, nil
}

// String is the planId as it is written ("" for none).
func (id PlanID) String() string { return id.text }

// IsZero reports no plan id (and lets `json:",omitzero"` leave it out).
func (id PlanID) IsZero() bool { return id.text == "" }

// Set parses a --plan-id value (flag.Value). An empty one is refused: given
// on a command line it is most often an unset shell variable, and reading
// it as "no plan id" would approve whatever the fresh plan is.
func (id *PlanID) Set(s string) error {
	var err error
	*id, err = ParsePlanID(s)
	return err
}

// Type names the flag's value in usage (pflag.Value): --plan-id ID.
func (id *PlanID) Type() string { return "ID" }

// MarshalText writes the planId as text ("" for none).
func (id PlanID) MarshalText() ([]byte, error) { return []byte(id.text), nil }

// UnmarshalText parses a planId from JSON. "" is no plan id, as it is
// when the key is left out: the route that needs one says so.
func (id *PlanID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*id = PlanID{}
		return nil
	}
	return id.Set(string(b))
}
