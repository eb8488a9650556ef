package installer

import (
	"context"
	"fmt"

	"reasonix.io/plugind/resolver/source"
)

// Update re-plans an installed plugin from its recorded source (SPEC §7, §11).
// A source pinned to a commit keeps that commit; a branch-tracking one moves
// to the branch's head, and the plan shows the old and the new commit. An
// installed copy that already matches is reported up to date, and nothing is
// written even with --yes.
func (in *Installer) Update(ctx context.Context, name string, offline bool, ap Approval) (*Response, error) {
	if !ap.DryRun && !ap.Yes {
		return nil, ErrNeedsApproval
	}
	e, err := in.installed(name)
	if err != nil {
		return ErrorResponse(name, err), err
	}
	if e.Link {
		resp := &Response{
			OK: true, Status: StatusUpToDate, Source: e.Source,
			Resolved: &Resolved{Kind: "local"}, Actions: []Action{},
			Warnings: []string{fmt.Sprintf("%s is linked to %s: it always runs that folder's current content, so there is nothing to update", e.Name, e.Source)},
		}
		return resp, nil
	}
	req := Request{Source: e.Source, Subdir: e.Subdir, Name: e.Name, Replace: true, Offline: offline}
	p, err := in.Plan(ctx, req)
	if err != nil {
		return ErrorResponse(e.Source, err), err
	}
	var notes []string
	if sha := pinnedCommit(e.Source); sha != "" {
		note := fmt.Sprintf("pinned at %s; re-plan the marketplace to move", sha)
		if e.Marketplace != "" {
			note += fmt.Sprintf(" (reasonix plugin install %s --name %s --replace --yes)", e.Marketplace, e.Name)
		}
		notes = append(notes, note)
	}
	p.Warnings = append(notes, p.Warnings...)
	return in.decide(ctx, p, ap, func(resp *Response) bool {
		for i := range resp.Actions {
			a := &resp.Actions[i]
			if a.Name != e.Name || !a.applicable() {
				continue
			}
			if a.Commit == e.Commit && a.ContentDigest == e.ContentDigest {
				a.Action, a.Status = ActionKeep, ActionUpToDate
				resp.Status = StatusUpToDate
				return false
			}
			if a.Commit != e.Commit && e.Commit != "" {
				resp.Warnings = append(resp.Warnings, fmt.Sprintf("%s moves from %s to %s", describeSource(e.Source), e.Commit, a.Commit))
			}
		}
		return true
	})
}

// pinnedCommit is the commit a recorded source is pinned to, or "" for a
// branch-tracking or local source.
func pinnedCommit(src string) string {
	s, err := source.Parse(src)
	if err != nil || !s.IsRemote() || !s.Pinned() {
		return ""
	}
	return s.Ref
}

func describeSource(src string) string {
	if s, err := source.Parse(src); err == nil && s.IsRemote() {
		ref := s.Ref
		if ref == "" {
			ref = s.TreeRest()
		}
		if ref == "" {
			return s.Key()
		}
		return fmt.Sprintf("%s (%s)", s.Key(), ref)
	}
	return src
}
