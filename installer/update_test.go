package installer

import (
	"context"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/internal/fakegithub"
)

func (e *testEnv) update(name string, offline bool, ap Approval) (*Response, error) {
	e.t.Helper()
	return e.in.Update(context.Background(), UpdateRequest{Names: []string{name}}, Request{Offline: offline}, ap)
}

// A plugin installed from a tree URL pinned to a commit keeps it: update
// costs no request and writes nothing.
func TestUpdatePinnedTreeURLKeepsItsCommit(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "tools")
	first := repo.Commit("main", pluginFiles("tools", "v1"))
	env := newRemoteEnv(t, gh, remoteOpts{})
	env.mustInstall("https://github.com/acme/tools/tree/" + first)
	repo.Commit("main", pluginFiles("tools", "v2")) // the branch moves on
	before := env.registryBytes()
	gh.ResetCounts()

	resp, err := env.update("tools", false, Approval{Yes: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != StatusUpToDate || resp.Applied || resp.Actions[0].Commit != first || resp.Actions[0].Status != ActionUpToDate {
		t.Fatalf("update = %s applied=%v commit %s, want up to date at %s", resp.Status, resp.Applied, resp.Actions[0].Commit, first)
	}
	if c := gh.Counts(); c.Total != 0 {
		t.Fatalf("a pinned update check made requests: %+v", c)
	}
	if string(env.registryBytes()) != string(before) {
		t.Fatal("an up-to-date update rewrote the registry")
	}
}

// A plugin that lives in its marketplace follows the marketplace's commit.
func TestUpdateRelativeEntryFollowsItsMarketplace(t *testing.T) {
	t.Parallel()
	fx := newMarketHome(t)
	env, first := fx.env, fx.from
	second := fx.mk.Commit("main", under("plugins/rel", pluginFiles("rel-plug", "v2")))

	resp, err := env.update("rel-plug", false, Approval{Yes: true})
	if err != nil || !resp.Applied {
		t.Fatalf("update: %v %+v", err, resp)
	}
	a := resp.Actions[0]
	if a.Commit != second || a.Previous == nil || a.Previous.Commit != first {
		t.Fatalf("update moved %+v, want %s → %s", a, first, second)
	}
	reg, _ := LoadRegistry(env.home.RegistryPath())
	if e, _ := reg.Find("rel-plug"); e.Commit != second || e.MarketplaceName != "m" {
		t.Fatalf("registry after update: %+v", e)
	}
}

func TestUpdateBranchTrackingMovesToNewHead(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "tools")
	old := repo.Commit("main", pluginFiles("tools", "v1"))
	env := newRemoteEnv(t, gh, remoteOpts{})
	env.mustInstall("git:github.com/acme/tools")
	head := repo.Commit("main", pluginFiles("tools", "v2"))

	dry, err := env.update("tools", false, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	a := dry.Actions[0]
	if dry.Status != StatusPlanned || a.Action != ActionReplace || a.Previous == nil || a.Previous.Commit != old || a.Commit != head {
		t.Fatalf("dry-run = %s %s %+v → %s, want replace %s → %s", dry.Status, a.Action, a.Previous, a.Commit, old, head)
	}
	if !containsFragment(a.Warnings, "moves from "+old[:12]+" to "+head[:12]) {
		t.Fatalf("warnings %q do not show old → new", a.Warnings)
	}
	resp, err := env.update("tools", false, Approval{Yes: true})
	if err != nil || !resp.Applied {
		t.Fatalf("update --yes: %v %+v", err, resp)
	}
	reg, _ := LoadRegistry(env.home.RegistryPath())
	if e, _ := reg.Find("tools"); e.Commit != head || e.Source.String() != "git:github.com/acme/tools" {
		t.Fatalf("registry after update: %+v", e)
	}

	gh.ResetCounts()
	again, err := env.update("tools", false, Approval{Yes: true})
	if err != nil || again.Status != StatusUpToDate || again.Applied {
		t.Fatalf("second update: %v %s", err, again.Status)
	}
	if c := gh.Counts(); c.Total != 1 || c.APICommits304 != 1 {
		t.Fatalf("unchanged branch: %+v, want exactly one 304", c)
	}

	gh.ResetCounts()
	off, err := env.update("tools", true, Approval{DryRun: true})
	if err != nil || off.Status != StatusUpToDate || gh.Counts().Total != 0 {
		t.Fatalf("offline update: %v %s %+v", err, off.Status, gh.Counts())
	}
	if !containsFragment(off.Warnings, "offline") {
		t.Fatalf("offline update does not say how old its answer is: %q", off.Warnings)
	}
}

func TestUpdateRefusals(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	for _, name := range []string{"missing", "../etc"} {
		resp, err := env.update(name, false, Approval{DryRun: true})
		if err == nil || resp.OK || !strings.Contains(resp.ErrorText(), name) {
			t.Errorf("update %q: %v %+v", name, err, resp)
		}
	}
	if _, err := env.update("x", false, Approval{}); err != ErrNeedsApproval {
		t.Errorf("update without approval: %v", err)
	}
}

// An update is its own request: approved by its planId alone (as the
// daemon does), the stored plan replays as the update it was, and the
// fields that name an install's source do not go with one.
func TestUpdateIsItsOwnRequest(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "tools")
	repo.Commit("main", pluginFiles("tools", "v1"))
	env := newRemoteEnv(t, gh, remoteOpts{})
	env.mustInstall("git:github.com/acme/tools")
	head := repo.Commit("main", pluginFiles("tools", "v2"))

	dry, err := env.update("tools", false, Approval{DryRun: true})
	if err != nil || dry.Status != StatusPlanned {
		t.Fatalf("dry-run: %v %+v", err, dry)
	}
	applied, err := env.in.InstallApproved(context.Background(), Request{}, planIDOf(t, dry.PlanID))
	if err != nil || !applied.Applied || applied.Source != dry.Source || applied.Actions[0].Commit != head {
		t.Fatalf("approved by planId: %v %+v", err, applied)
	}
	if e, _ := mustRegistry(t, env.home).Find("tools"); e.Commit != head {
		t.Fatalf("registry after the approved update: %+v", e)
	}

	before := env.registryBytes()
	for name, opts := range map[string]Request{
		"source":  {Source: mustSource("git:github.com/acme/tools")},
		"name":    {Name: "tools"},
		"names":   {Names: []string{"tools"}},
		"subdir":  {Subdir: "x"},
		"replace": {Replace: true},
		"link":    {Link: true},
	} {
		resp, err := env.in.Update(context.Background(), UpdateRequest{All: true}, opts, Approval{Yes: true})
		if plugind.CodeOf(err) != plugind.CodeInvalidSource || resp == nil || resp.Status != StatusRefused || !strings.Contains(err.Error(), "not a source") {
			t.Errorf("%s: %v %+v", name, err, resp)
		}
	}
	if string(env.registryBytes()) != string(before) {
		t.Fatal("a refused update wrote the registry")
	}
}
