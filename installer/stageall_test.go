package installer

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"reasonix.io/plugind"
)

// manyPluginsMarketplace is a local marketplace of n independent plugins,
// p0 … p<n-1>, each a few files in a few folders.
func manyPluginsMarketplace(t *testing.T, n int) string {
	t.Helper()
	files := map[string]string{}
	var entries []map[string]any
	for i := range n {
		name := fmt.Sprintf("p%d", i)
		files[name+"/.claude-plugin/plugin.json"] = fmt.Sprintf(`{"name": %q, "version": "1.0.0"}`, name)
		files[name+"/skills/s/SKILL.md"] = "---\ndescription: " + name + "\n---\n"
		files[name+"/commands/c.md"] = "command of " + name
		entries = append(entries, entry(name, "./"+name))
	}
	files[".claude-plugin/marketplace.json"] = marketplaceJSON(t, "m", entries...)
	return writeTree(t, filepath.Join(t.TempDir(), "m"), files)
}

// Staging runs several actions at once (stageAll); whichever of them
// fails, the install fails as a sequential one did: nothing new is left
// under plugins/ and the registry is byte-identical. Success stages and
// publishes every plugin.
func TestStagingManyActionsIsAllOrNothing(t *testing.T) {
	t.Parallel()
	const n = 24
	for _, c := range []struct {
		name     string
		tampered []int // plugins changed after approval
	}{
		{name: "all staged"},
		{name: "the first fails", tampered: []int{0}},
		{name: "one in the middle fails", tampered: []int{13}},
		{name: "the last fails", tampered: []int{n - 1}},
		{name: "several fail", tampered: []int{2, 9, 20}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t)
			env.mustInstall(claudePlugin(t, "other", "1"))
			market := manyPluginsMarketplace(t, n)
			env.hook = func(step string) {
				if step == "before-staging" {
					for _, i := range c.tampered {
						writeTree(t, filepath.Join(market, fmt.Sprintf("p%d", i)), map[string]string{"commands/c.md": "tampered"})
					}
				}
			}
			before := env.registryBytes()
			resp, err := env.install(Request{Source: mustSource(market)}, Approval{Yes: true})
			if len(c.tampered) == 0 {
				if err != nil {
					t.Fatalf("install: %v", err)
				}
				if ents := env.pluginsDirEntries(); len(ents) != n+1 {
					t.Fatalf("plugins/ has %d entries, want %d: %v", len(ents), n+1, ents)
				}
				return
			}
			wantCode(t, err, resp, plugind.CodeDigestMismatch, "changed after it was approved")
			if !bytes.Equal(before, env.registryBytes()) {
				t.Fatal("registry changed")
			}
			if ents := env.pluginsDirEntries(); len(ents) != 1 {
				t.Fatalf("plugins/ = %v, want only the plugin installed before", ents)
			}
		})
	}
}
