package installer

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
)

// planDifference says why the plan approved as approvedID is not the plan
// p made now: what the plan store remembers of the approved one, compared
// with p — a different command, a source that moved, a plugin whose
// content changed — or that no such plan was ever made here. It never
// blames the source when the source did not change.
func (in *Installer) planDifference(ctx context.Context, approvedID PlanID, p *Plan) string {
	if in.Cache == nil {
		return fmt.Sprintf("plan %s cannot be compared (no cache to remember plans in)", approvedID)
	}
	old, ok, err := in.StoredPlan(ctx, approvedID.String())
	switch {
	case err != nil || (ok && old.Response == nil):
		return fmt.Sprintf("plan %s cannot be read back", approvedID)
	case !ok:
		return fmt.Sprintf("no plan %s was made here (a typo, or a plan from another machine or that has expired)", approvedID)
	}
	var diffs []string
	if was, is := planKind(old.Request.Update != nil, old.Request.Sync != nil), planKind(p.update != nil, p.sync != nil); was != is {
		diffs = append(diffs, fmt.Sprintf("it was a plan of %s, not of %s", was, is))
	}
	diffs = append(diffs, requestDifferences(old.Request.Request, p.asked)...)
	moved := ""
	if o, n := old.Response.Resolved, p.Resolved; o != nil && n != nil && o.Commit != n.Commit && o.Commit != "" && n.Commit != "" {
		moved = fmt.Sprintf("moved from commit %s to %s", host.Short(o.Commit), host.Short(n.Commit))
		diffs = append(diffs, p.Source+" "+moved)
	}
	for _, d := range actionDifferences(old.Response.Actions, p.Actions) {
		// A plugin that moved with its source says nothing new.
		if moved == "" || !strings.HasSuffix(d, " "+moved) {
			diffs = append(diffs, d)
		}
	}
	if len(diffs) == 0 {
		return fmt.Sprintf("plan %s was made for other inputs than this command's", approvedID)
	}
	if len(diffs) > 4 {
		diffs = append(diffs[:4], fmt.Sprintf("and %d more differences", len(diffs)-4))
	}
	return strings.Join(diffs, "; ")
}

// planKind names what a plan was made for.
func planKind(update, sync bool) string {
	switch {
	case update:
		return "an update"
	case sync:
		return "a sync"
	}
	return "an install"
}

// requestDifferences names the options that differ between two requests.
func requestDifferences(old, now Request) []string {
	var out []string
	if old.Source != now.Source {
		out = append(out, fmt.Sprintf("it was a plan of %s, not %s", old.Source, now.Source))
	}
	flag := func(name string, o, n bool) {
		if o != n {
			out = append(out, fmt.Sprintf("it was made %s %s", map[bool]string{true: "with", false: "without"}[o], name))
		}
	}
	flag("--replace", old.Replace, now.Replace)
	flag("--link", old.Link, now.Link)
	flag("--allow-unpinned", old.AllowUnpinned, now.AllowUnpinned)
	if old.Name != now.Name {
		out = append(out, fmt.Sprintf("it selected --name %q, this selects %q", old.Name, now.Name))
	}
	if !slices.Equal(old.Names, now.Names) {
		out = append(out, fmt.Sprintf("it selected %v, this selects %v", old.Names, now.Names))
	}
	return out
}

// actionDifferences names the plugins that differ between two plans.
func actionDifferences(old, now []Action) []string {
	byName := map[string]Action{}
	for _, a := range old {
		byName[a.Name] = a
	}
	var out []string
	seen := map[string]bool{}
	for _, a := range now {
		seen[a.Name] = true
		o, ok := byName[a.Name]
		parts, from, to := []string(nil), "", ""
		if ok && !o.Source.IsZero() && !a.Source.IsZero() {
			parts, from, to = sourceMoves(o.Source, o.Subdir, a.Source, a.Subdir)
		}
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s is new (%s)", a.Name, a.Status))
		case len(parts) > 0:
			// A move to another place is said as such, never as a commit.
			out = append(out, fmt.Sprintf("%s moved to another source (%s changes): %s → %s", a.Name, strings.Join(parts, ", "), from, to))
		case o.Status != a.Status:
			out = append(out, fmt.Sprintf("%s was %s and is now %s", a.Name, o.Status, a.Status))
		case o.Commit != a.Commit:
			out = append(out, fmt.Sprintf("%s moved from commit %s to %s", a.Name, host.Short(o.Commit), host.Short(a.Commit)))
		case o.ContentDigest != a.ContentDigest:
			out = append(out, fmt.Sprintf("%s's content changed (%s → %s)", a.Name, cmp.Or(plugind.ShortDigest(o.ContentDigest), "none"), cmp.Or(plugind.ShortDigest(a.ContentDigest), "none")))
		case o.Risk != a.Risk:
			out = append(out, fmt.Sprintf("%s's risk went from %s to %s", a.Name, o.Risk, a.Risk))
		case !slices.Equal(configSummary(&o), configSummary(&a)):
			out = append(out, fmt.Sprintf("%s's option values are not the ones reviewed (%s): give the same --config values, sensitive ones included", a.Name, strings.Join(configDifference(o.UserConfig, a.UserConfig), ", ")))
		}
	}
	for _, o := range old {
		if !seen[o.Name] {
			out = append(out, fmt.Sprintf("%s is no longer offered", o.Name))
		}
	}
	return out
}
