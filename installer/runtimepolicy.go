package installer

import (
	"context"
	"fmt"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/mirror/policy"
	"reasonix.io/plugind/resolver"
)

// RuntimePolicyFunc reads a team mirror's rule for code plugins fetch at
// run time (SPEC §15, §17; resolver.Hosts.RuntimePolicy), for a plan that
// is offline or not. A rule with a Note was not read now (the plan says
// so); one without a Rule could not be read, and the plan goes on without
// it; err: it could not be read and nothing it might block may be
// installed.
type RuntimePolicyFunc func(ctx context.Context, offline bool) (resolver.RuntimeRule, error)

// governRuntime applies the team mirror's runtime rule to a plan, the one
// place it is applied (planDependencies, which every install, update and
// sync plan goes through, calls it before it settles who needs whom): every action that would install or replace a
// plugin running unpinned code fetched at run time is blocked
// (install.blocked) when the rule is "block-unpinned", naming the commands
// and the rule. The rule is read only when such an action exists, so a
// plan with none asks the mirror nothing more.
func (in *Installer) governRuntime(ctx context.Context, p *Plan) {
	if in.RuntimePolicy == nil {
		return
	}
	var governed []*Action
	for i := range p.Actions {
		a := &p.Actions[i]
		if a.applicable() && (a.Action == ActionInstall || a.Action == ActionReplace) && len(a.Inventory.unpinnedFetches()) > 0 {
			governed = append(governed, a)
		}
	}
	if len(governed) == 0 {
		return
	}
	got, err := in.RuntimePolicy(ctx, p.Request.Offline)
	rule := got.Rule
	switch {
	case err != nil:
		for _, a := range governed {
			a.skip(ActionBlocked, plugind.Errorf(plugind.CodeBlocked,
				"%s runs unpinned code fetched at run time (%s), and the team mirror's runtime policy, which may block it, could not be read: %v",
				a.Name, fetchList(a), err))
		}
		return
	case rule == "":
		p.Warnings = append(p.Warnings, fmt.Sprintf("the team mirror's runtime policy could not be read (%s): unpinned code fetched at run time is not checked against it", got.Note))
		return
	case got.Note != "":
		p.Warnings = append(p.Warnings, fmt.Sprintf("the team mirror's runtime policy was not read now (%s): %q", got.Note, string(rule)))
	}
	if rule != policy.RuntimeBlockUnpinned {
		return
	}
	for _, a := range governed {
		a.skip(ActionBlocked, plugind.Errorf(plugind.CodeBlocked,
			"%s runs unpinned code fetched at run time, which the team mirror's policy blocks (\"runtime\": %q): %s",
			a.Name, string(rule), fetchList(a)))
	}
}

// fetchList names an action's unpinned run-time fetches: each command and
// where it runs.
func fetchList(a *Action) string {
	list := a.Inventory.unpinnedFetches()
	parts := make([]string, len(list))
	for i, f := range list {
		parts[i] = f.Describe()
	}
	return strings.Join(parts, "; ")
}
