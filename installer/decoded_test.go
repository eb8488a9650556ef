package installer

import (
	"testing"

	"reasonix.io/plugind/cache"
)

// Planning reads the registry through the daemon's Decoded, keyed by its bytes: the same
// bytes give the same (read-only) registry, any change a fresh one, and a
// plan after an install sees that install.
func TestPlannedRegistryFollowsTheFile(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	if reg, _ := env.in.plannedRegistry(); reg == nil || env.in.Decoded != nil {
		t.Fatal("an Installer without Decoded keeps decoded documents")
	}
	env.in.Decoded = cache.NewDecoded(cache.DecodedEntries) // as the daemon's app does
	empty, err := env.in.plannedRegistry()
	if err != nil || len(empty.Plugins) != 0 {
		t.Fatalf("no registry yet: %v, %v", empty, err)
	}
	env.mustInstall(claudePlugin(t, "weather", "1.0.0"))
	first, err := env.in.plannedRegistry()
	if err != nil || len(first.Plugins) != 1 {
		t.Fatalf("after install: %+v, %v", first, err)
	}
	if again, _ := env.in.plannedRegistry(); again != first {
		t.Fatal("the same registry bytes were decoded again")
	}
	env.mustInstall(claudePlugin(t, "tides", "1.0.0"))
	after, err := env.in.plannedRegistry()
	if err != nil || after == first || len(after.Plugins) != 2 || len(first.Plugins) != 1 {
		t.Fatalf("after a second install: %d plugins (first still %d), %v", len(after.Plugins), len(first.Plugins), err)
	}
	// A plan of what is installed sees it installed (from another folder:
	// a conflict).
	resp, _ := env.install(Request{Source: mustSource(claudePlugin(t, "tides", "1.0.0"))}, Approval{DryRun: true})
	if resp == nil || len(resp.Actions) != 1 || resp.Actions[0].Status != ActionConflict {
		t.Fatalf("re-plan of an installed plugin: %+v", resp)
	}
}
