package installer

import (
	"context"
	"slices"
	"sort"
)

// Prune removes the plugins installed only as dependencies that no
// installed plugin needs any more (SPEC §7), including those that only
// such plugins needed. With dryRun it reports them and writes nothing;
// otherwise the registry is written once (the commit point) and their
// copies discarded after.
func (in *Installer) Prune(ctx context.Context, dryRun bool) (*Response, error) {
	fail := func(err error) (*Response, error) { return ErrorResponse("prune", err), err }
	reg, unlock, err := lockedState[Registry](ctx, in, in.Home.RegistryPath())
	if err != nil {
		return fail(err)
	}
	defer unlock()
	unneeded := reg.unneeded()
	resp := &Response{
		OK: true, Status: StatusUpToDate, Source: "prune",
		Resolved: &Resolved{Kind: "installed"}, Actions: []Action{}, Warnings: []string{},
	}
	if len(unneeded) == 0 {
		return resp, nil
	}
	status := ActionReady
	resp.Status = StatusPlanned
	if !dryRun {
		status, resp.Status, resp.Applied = ActionRemoved, StatusRemoved, true
	}
	for _, e := range unneeded {
		resp.Actions = append(resp.Actions, removeAction(e, status))
	}
	if dryRun {
		return resp, nil
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	for _, e := range unneeded {
		reg.Delete(e.Name)
	}
	if err := reg.Save(in.Home.RegistryPath()); err != nil {
		return fail(err)
	}
	for _, e := range unneeded {
		in.dropSecrets(e.ConfigFile)
		in.retire(e, &resp.Warnings)
	}
	in.sweepOrphans(reg)
	return resp, nil
}

// unneeded are the entries installed as dependencies that nothing kept
// needs, found by removing them until none is left (a dependency only
// another unneeded one needs goes too), sorted by name.
func (r *Registry) unneeded() []Entry {
	gone := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, e := range r.Plugins {
			if !e.Dependency || gone[e.Name] {
				continue
			}
			if !slices.ContainsFunc(r.Dependents(e.Name), func(user string) bool { return !gone[user] }) {
				gone[e.Name], changed = true, true
			}
		}
	}
	out := slices.DeleteFunc(slices.Clone(r.Plugins), func(e Entry) bool { return !gone[e.Name] })
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
