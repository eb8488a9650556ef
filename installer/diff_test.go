package installer

import (
	"strings"
	"testing"
)

// TestUpdateRiskOfAMove: a move to another place raises an update's risk
// by one level on top of what its contributions raise it to.
func TestUpdateRiskOfAMove(t *testing.T) {
	t.Parallel()
	const (
		from = "https://github.com/acme/q/tree/8e42d1a0000000000000000000000000000000aa"
		to   = "https://github.com/evil/q/tree/ea7f59c0000000000000000000000000000000bb"
		next = "https://github.com/acme/q/tree/ea7f59c0000000000000000000000000000000bb"
	)
	hook := Change{Kind: ChangeHook, Name: "SessionStart", Detail: "x.sh"}
	for _, c := range []struct {
		name           string
		newRisk, old   Risk
		to             string
		addsHook       bool
		want           Risk
		wantMoveInDiff bool
	}{
		{"same repository", RiskLow, RiskLow, next, false, RiskLow, false},
		{"swap at low", RiskLow, RiskLow, to, false, RiskMedium, true},
		{"swap at medium", RiskMedium, RiskMedium, to, false, RiskHigh, true},
		{"swap at high stays high", RiskHigh, RiskHigh, to, false, RiskHigh, true},
		{"a hook alone", RiskLow, RiskLow, next, true, RiskMedium, false},
		{"a hook and a swap", RiskLow, RiskLow, to, true, RiskHigh, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := emptyDiff()
			if c.addsHook {
				d.Added = append(d.Added, hook)
			}
			d.addMove(mustSource(from), "", mustSource(c.to), "")
			if got := updateRisk(c.newRisk, c.old, d); got != c.want {
				t.Errorf("risk %s, want %s", got, c.want)
			}
			if d.moves() != c.wantMoveInDiff {
				t.Fatalf("moves() = %v: %+v", d.moves(), d)
			}
			if c.wantMoveInDiff && (d.Changed[0].Kind != ChangeSource || !strings.HasPrefix(d.Summary[0], "moves to another source (owner changes)")) {
				t.Errorf("the move is not first: %+v", d)
			}
		})
	}
}
