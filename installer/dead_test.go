package installer

import (
	"fmt"
	"testing"
)

// A marketplace with 100 dead entries (repositories that do not exist,
// commits that are not in their repository or on no branch, folders that
// are not at their commit) beside three good ones: a warm re-plan sends no
// request for the dead (only the marketplace's own conditional one), and
// an offline re-plan has the same planId as the online one (SPEC §9: the
// dead count by name and status only).
func TestDeadEntriesAreRemembered(t *testing.T) {
	t.Parallel()
	f := newFollowFixture(t, false)
	const ghost = "0123456789abcdef0123456789abcdef0123"
	entries := []map[string]any{
		entry("pinned", map[string]any{"source": "url", "url": f.toolsURL, "path": "pinned", "sha": f.toolsA}),
		entry("rel", "./plugins/rel"),
		entry("gone", map[string]any{"source": "url", "url": f.toolsURL, "path": "gone", "sha": f.toolsA}),
	}
	hidden := f.tools.CommitUnreachable("", under("pinned", pluginFiles("pinned", "evil")))
	for i := range 100 {
		name := fmt.Sprintf("dead-%03d", i)
		var src map[string]any
		switch i % 4 {
		case 0: // a repository that does not exist
			src = map[string]any{"source": "github", "repo": fmt.Sprintf("ghosts/repo%03d", i), "sha": f.toolsA}
		case 1: // a commit that is not in the repository
			src = map[string]any{"source": "url", "url": f.toolsURL, "path": "pinned", "sha": fmt.Sprintf("%s%04d", ghost, i)}
		case 2: // a folder that is not at the commit
			src = map[string]any{"source": "git-subdir", "url": f.toolsURL, "path": fmt.Sprintf("nowhere/%d", i), "sha": f.toolsA}
		case 3: // a commit no branch or tag reaches
			src = map[string]any{"source": "url", "url": f.toolsURL, "path": fmt.Sprintf("p%d", i), "sha": hidden}
		}
		entries = append(entries, entry(name, src))
	}
	f.market.Commit("main", map[string]string{".claude-plugin/marketplace.json": marketplaceJSON(t, "team", entries...)})
	env := newRemoteEnv(t, f.gh, remoteOpts{})

	cold, err := env.in.Install(ctxBG(), Request{Source: mustSource(f.source)}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	dead := 0
	for _, a := range cold.Actions {
		if a.Status == ActionBlocked && a.Code() == "install.not_found" {
			dead++
		}
	}
	if dead != 100 || cold.Status != StatusPlanned {
		t.Fatalf("cold plan: %d dead entries blocked as not found, status %s", dead, cold.Status)
	}

	f.reset()
	warm, err := env.in.Install(ctxBG(), Request{Source: mustSource(f.source)}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := f.counts(); c.Total != 1 || c.APICommits304 != 1 {
		t.Fatalf("warm re-plan sent %d requests (%+v), want only the marketplace's 304", c.Total, c)
	}
	if warm.PlanID != cold.PlanID {
		t.Errorf("warm planId %s, cold %s", warm.PlanID, cold.PlanID)
	}

	f.reset()
	off, err := env.in.Install(ctxBG(), Request{Source: mustSource(f.source), Offline: true}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := f.counts().Total; n != 0 {
		t.Fatalf("offline re-plan sent %d requests", n)
	}
	if off.PlanID != cold.PlanID {
		t.Fatalf("offline planId %s, online %s", off.PlanID, cold.PlanID)
	}
	for i, a := range off.Actions {
		if a.Status != cold.Actions[i].Status || a.Code() != cold.Actions[i].Code() {
			t.Errorf("%s offline: %s %s, online %s %s", a.Name, a.Status, a.Code(), cold.Actions[i].Status, cold.Actions[i].Code())
		}
	}
}
