package installer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"reasonix.io/plugind/manifest"
	"reasonix.io/plugind/secrets"
)

// CheckStatus is how the last update check went (SPEC §12 GET /updates).
type CheckStatus string

// Check statuses.
const (
	// CheckNever: no check has run in this home yet.
	CheckNever CheckStatus = "never"
	// CheckOK: the sources answered (some may still be "could not
	// check"); the notices are this check's.
	CheckOK CheckStatus = "ok"
	// CheckSkippedOffline: offline (REASONIX_OFFLINE=1, or no source
	// could be reached): nothing was asked, and the notices are those of
	// the last successful check.
	CheckSkippedOffline CheckStatus = "skipped-offline"
	// CheckFailed: no plan could be made (Error says why, masked); the
	// notices are those of the last successful check.
	CheckFailed CheckStatus = "failed"
)

// UpdateCheck is what the update check found: the background check of
// `reasonix serve --check-updates` stores it in the cache, GET /updates
// and `reasonix plugin list --outdated` read it back. It is the update
// plan of `plugin update --all --dry-run` (one home for the rule),
// reduced to what could move and what could not be checked. Nothing in it
// is ever applied: an update still goes through its own plan and approval.
type UpdateCheck struct {
	Status CheckStatus `json:"status"`
	// CheckedAt is when the last check was attempted (any status),
	// LastSuccessAt when one last reached the sources (status ok): the
	// notices are as of then.
	CheckedAt     time.Time `json:"checkedAt,omitzero"`
	LastSuccessAt time.Time `json:"lastSuccessAt,omitzero"`
	// Error says why the last attempt failed (secrets masked).
	Error string `json:"error,omitempty"`
	// PlanID is the update plan the notices come from; approving an update
	// still plans it again and shows its diff first.
	PlanID string `json:"planId,omitempty"`
	// Updates are the installed plugins that could move.
	Updates []UpdateNotice `json:"updates"`
	// CouldNotCheck are the plugins whose sources did not answer, or whose
	// update could not be planned: never "up to date" (SPEC §11).
	CouldNotCheck []Unchecked `json:"couldNotCheck"`
	// UpToDate counts the plugins that are at what their sources name.
	UpToDate int `json:"upToDate"`
}

// UpdateNotice is one installed plugin an update could move.
type UpdateNotice struct {
	Name            string `json:"name"`
	MarketplaceName string `json:"marketplaceName,omitempty"`
	// RenamedFrom is the installed name when its marketplace renamed it.
	RenamedFrom string `json:"renamedFrom,omitempty"`
	FromCommit  string `json:"fromCommit,omitempty"`
	ToCommit    string `json:"toCommit,omitempty"`
	FromVersion string `json:"fromVersion,omitempty"`
	ToVersion   string `json:"toVersion,omitempty"`
	// Risk is the update's, PreviousRisk the installed copy's; RiskRaised
	// says the update is riskier than what is installed.
	Risk         Risk  `json:"risk,omitempty"`
	PreviousRisk Risk  `json:"previousRisk,omitempty"`
	RiskRaised   bool  `json:"riskRaised"`
	Diff         *Diff `json:"diff,omitempty"`
	// Dependency: not installed yet, planned because an update needs it.
	Dependency bool     `json:"dependency,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
}

// Unchecked is one plugin whose update could not be checked, and why.
type Unchecked struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// CheckUpdates runs the update check: the plan of `plugin update --all
// --dry-run`, which reads each marketplace and branch with a conditional
// request (a 304 when unchanged), and stores what it found in the cache
// (the last successful check's notices are kept when this one is skipped
// or fails). It never takes the home's lock and never applies anything.
// offline (REASONIX_OFFLINE=1) skips the check. A cancelled check stores
// nothing and returns ctx's error.
func (in *Installer) CheckUpdates(ctx context.Context, offline bool) (*UpdateCheck, error) {
	prev, err := in.storedUpdateCheck(ctx)
	if err != nil {
		in.Log.Warn("the last update check could not be read; starting afresh", "error", secrets.Mask(err.Error()))
		prev = neverChecked()
	}
	out := *prev
	out.CheckedAt, out.Error = in.Now().UTC(), ""
	if offline {
		out.Status = CheckSkippedOffline
		return in.saveUpdateCheck(ctx, &out)
	}
	resp, err := in.Update(ctx, UpdateRequest{All: true}, Request{}, Approval{DryRun: true})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if resp == nil || resp.Status == StatusRefused || resp.Status == StatusFailed {
		out.Status, out.Error = CheckFailed, secrets.Mask(cmp.Or(err, errors.New("no plan")).Error())
		return in.saveUpdateCheck(ctx, &out)
	}
	found := noticesOf(resp)
	if found.offline {
		// No source that needs the network answered: this is being
		// offline, not an answer. The last success's notices stand, and
		// each plugin says why it could not be checked now.
		out.Status, out.CouldNotCheck = CheckSkippedOffline, found.check.CouldNotCheck
		return in.saveUpdateCheck(ctx, &out)
	}
	checkedAt := out.CheckedAt
	out = found.check
	out.Status, out.CheckedAt, out.LastSuccessAt = CheckOK, checkedAt, checkedAt
	return in.saveUpdateCheck(ctx, &out)
}

// found is what one update plan says for the check.
type found struct {
	check UpdateCheck
	// offline: some plugins need the network and none of them could be
	// checked (SPEC §11's "could not check", every one).
	offline bool
}

// noticesOf reduces an update plan to the check's notices.
func noticesOf(resp *Response) found {
	f := found{check: UpdateCheck{PlanID: resp.PlanID, Updates: []UpdateNotice{}, CouldNotCheck: []Unchecked{}}}
	remote, answered := 0, 0
	for _, a := range resp.Actions {
		isRemote := a.Source.IsRemote() || a.Marketplace.IsRemote()
		if isRemote {
			remote++
		}
		unchecked := len(f.check.CouldNotCheck)
		switch {
		case a.Unchecked != "":
			f.check.CouldNotCheck = append(f.check.CouldNotCheck, Unchecked{Name: a.Name, Reason: a.Unchecked})
		case a.Status == ActionReady:
			f.check.Updates = append(f.check.Updates, noticeOf(a))
		case a.Status == ActionBlocked || a.Status == ActionConflict || a.Status == ActionFailed:
			f.check.CouldNotCheck = append(f.check.CouldNotCheck, Unchecked{Name: a.Name, Reason: secrets.Mask(cmp.Or(a.ErrorText(), string(a.Status)))})
		case a.Status == ActionUpToDate:
			f.check.UpToDate++
		}
		if isRemote && len(f.check.CouldNotCheck) == unchecked {
			answered++
		}
	}
	f.offline = remote > 0 && answered == 0
	return f
}

func noticeOf(a Action) UpdateNotice {
	n := UpdateNotice{
		Name: a.Name, MarketplaceName: a.MarketplaceName, RenamedFrom: a.RenamedFrom,
		ToCommit: a.Commit, ToVersion: a.Version, Risk: a.Risk, Diff: a.Diff, Dependency: a.Dependency && a.Previous == nil,
		Warnings: a.Warnings,
	}
	if p := a.Previous; p != nil {
		n.FromCommit, n.FromVersion, n.PreviousRisk = p.Commit, p.Version, p.Risk
		n.RiskRaised = riskRank[a.Risk] > riskRank[p.Risk]
	}
	return n
}

// saveUpdateCheck stores c as the last check (without a cache, it is only
// returned: the check is an optimization, like the cache).
func (in *Installer) saveUpdateCheck(ctx context.Context, c *UpdateCheck) (*UpdateCheck, error) {
	if in.Cache == nil {
		return c, nil
	}
	body, err := json.Marshal(c)
	if err != nil {
		return c, err
	}
	if err := in.Cache.PutUpdateCheck(ctx, body, c.CheckedAt); err != nil {
		return c, fmt.Errorf("store the update check: %w", err)
	}
	return c, nil
}

// neverChecked is the check of a home where none has run: empty lists,
// not nulls, for clients that iterate.
func neverChecked() *UpdateCheck {
	return &UpdateCheck{Status: CheckNever, Updates: []UpdateNotice{}, CouldNotCheck: []Unchecked{}}
}

// storedUpdateCheck is the last check stored in the cache, as stored.
func (in *Installer) storedUpdateCheck(ctx context.Context) (*UpdateCheck, error) {
	c := neverChecked()
	if in.Cache == nil {
		return c, nil
	}
	body, ok, err := in.Cache.UpdateCheck(ctx)
	if err != nil || !ok {
		return c, err
	}
	if err := json.Unmarshal(body, c); err != nil {
		return nil, fmt.Errorf("the stored update check is unreadable: %w", err)
	}
	c.Updates, c.CouldNotCheck = manifest.NonNil(c.Updates), manifest.NonNil(c.CouldNotCheck)
	return c, nil
}

// LastUpdateCheck is what the last update check found, read from the cache
// without any network (GET /updates and `plugin list --outdated` alike),
// less what the registry has moved past since: a notice whose plugin is no
// longer installed at the commit it moves from was acted on (updated,
// removed) and is dropped, as is a "could not check" of a plugin that is
// gone.
func (in *Installer) LastUpdateCheck(ctx context.Context) (*UpdateCheck, error) {
	c, err := in.storedUpdateCheck(ctx)
	if err != nil {
		return nil, err
	}
	return in.Outstanding(c)
}

// Outstanding is check c less what the registry has moved past since (see
// LastUpdateCheck): what the daemon shows of a check it holds.
func (in *Installer) Outstanding(c *UpdateCheck) (*UpdateCheck, error) {
	reg, err := LoadRegistry(in.Home.RegistryPath())
	if err != nil {
		return nil, err
	}
	out := *c
	out.Updates = slices.DeleteFunc(slices.Clone(c.Updates), func(n UpdateNotice) bool {
		if n.Dependency {
			_, installed := reg.Find(n.Name)
			return installed
		}
		e, ok := reg.Find(cmp.Or(n.RenamedFrom, n.Name))
		return !ok || e.Commit != n.FromCommit
	})
	out.CouldNotCheck = slices.DeleteFunc(slices.Clone(c.CouldNotCheck), func(u Unchecked) bool {
		_, ok := reg.Find(u.Name)
		return !ok
	})
	return &out, nil
}

// Current says the check is a full answer as of now: it reached the
// sources and every plugin was checked. Otherwise what it shows is as of
// its last success, or less, and a caller says so (SPEC §11: exit status
// 1, never "up to date").
func (c *UpdateCheck) Current() bool { return c.Status == CheckOK && len(c.CouldNotCheck) == 0 }
