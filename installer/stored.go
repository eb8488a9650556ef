package installer

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"reasonix.io/plugind"
	"reasonix.io/plugind/source"
)

// StoredPlan is a plan as kept by planId in the cache (Plan.MarshalStored):
// the request it was made from and the response that was shown.
type StoredPlan struct {
	Request  storedRequest `json:"request"`
	Response *Response     `json:"response"`
}

// storedRequest is a stored plan's request: an install's Request, or an
// update's options with the UpdateRequest beside them (Update, written
// inside "request" where rows have always held it).
type storedRequest struct {
	Request
	Update *UpdateRequest `json:"update,omitempty"`
	// Sync is a sync's request, its lock included.
	Sync *SyncRequest `json:"sync,omitempty"`
}

// StoredPlan returns the plan stored under planID; ok is false when there
// is none (or this installer keeps no plans).
func (in *Installer) StoredPlan(ctx context.Context, planID string) (sp *StoredPlan, ok bool, err error) {
	if in.Cache == nil || planID == "" {
		return nil, false, nil
	}
	body, ok, err := in.Cache.GetPlan(ctx, planID)
	if err != nil || !ok {
		return nil, false, err
	}
	sp = &StoredPlan{}
	if err := json.Unmarshal(body, sp); err != nil {
		return nil, false, fmt.Errorf("stored plan %s: %w", planID, err)
	}
	return sp, true, nil
}

// InstallApproved applies the plan the user approved as approved. It
// never trusts the stored plan's content: it re-plans and applies only when
// the fresh planId is still the approved one (Install with Yes and approved),
// so a source that changed since is refused with install.approval_denied and
// nothing is written.
//
// req may carry only the planId (and config values): then the request the
// plan was made from is taken from the plan store, which survives
// restarts, with the values req gives added — a stored plan keeps none of
// the sensitive ones. A stored request whose
// source was a relative path (a CLI plan made in some working directory) is
// re-planned from the canonical, absolute source the plan resolved to.
func (in *Installer) InstallApproved(ctx context.Context, req Request, approved PlanID) (*Response, error) {
	if approved.IsZero() {
		err := plugind.Errorf(plugind.CodeApprovalDenied, "no planId: plan first, review the plan, and approve it by its planId")
		return ErrorResponse(req.Source.String(), err), err
	}
	var update *UpdateRequest // the stored plan's, when it was an update
	var sync *SyncRequest     // or a sync
	if req.Source.IsZero() {
		sp, ok, err := in.StoredPlan(ctx, approved.String())
		if err != nil {
			return ErrorResponse(req.Source.String(), err), err
		}
		if !ok {
			err := plugind.Errorf(plugind.CodeApprovalDenied, "no stored plan has planId %s: plan again, review it, and approve the new planId", approved)
			return ErrorResponse(req.Source.String(), err), err
		}
		offline := req.Offline
		sent := req.Config
		req, update, sync = sp.Request.Request, sp.Request.Update, sp.Request.Sync
		req.Offline = req.Offline || offline
		// A stored plan keeps no sensitive values: the client sends them
		// again (the planId says whether they were set).
		if len(sent) > 0 {
			merged := map[string]string{}
			maps.Copy(merged, req.Config)
			maps.Copy(merged, sent)
			req.Config = merged
		}
		if sp.Response != nil && sp.Response.Source != "" && in.isRelativeFolder(req.Source) {
			// The response says where the plan read, as text (shown).
			resolved, err := source.ParseRecorded(sp.Response.Source)
			if err != nil {
				return ErrorResponse(sp.Response.Source, err), err
			}
			req.Source = resolved
		}
	}
	if sync != nil {
		return in.Sync(ctx, *sync, req, Approval{Yes: true, PlanID: approved})
	}
	if update != nil {
		return in.Update(ctx, *update, req, Approval{Yes: true, PlanID: approved})
	}
	return in.Install(ctx, req, Approval{Yes: true, PlanID: approved})
}
