package installer

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// chainMarketplace writes a local marketplace "m" whose plugins p0 … p(n-1)
// each need the next; the last needs p(n), which is listed only when
// endListed (then as a plugin that needs nothing).
func chainMarketplace(t *testing.T, n int, endListed bool) string {
	t.Helper()
	files := map[string]string{}
	var entries []map[string]any
	last := n - 1
	if endListed {
		last = n
	}
	for i := 0; i <= last; i++ {
		name := fmt.Sprintf("p%d", i)
		m := map[string]any{"name": name, "version": "1.0.0"}
		if i < n {
			m["dependencies"] = []string{fmt.Sprintf("p%d", i+1)}
		}
		b, _ := json.Marshal(m)
		files[name+"/.claude-plugin/plugin.json"] = string(b)
		files[name+"/skills/s/SKILL.md"] = "---\ndescription: " + name + "\n---\n"
		entries = append(entries, entry(name, "./"+name))
	}
	files[".claude-plugin/marketplace.json"] = marketplaceJSON(t, "m", entries...)
	return writeTree(t, filepath.Join(t.TempDir(), "m"), files)
}

// TestDependencyChainsAreBoundedAndNamedCompactly (issue 21, item 7): a
// chain of dependencies is followed at most maxDependencyDepth levels, and
// every error names its chain in a few words rather than quoting the next
// plugin's error, which quoted the next one's….
func TestDependencyChainsAreBoundedAndNamedCompactly(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		n         int
		endListed bool
		bulk      bool
		installs  int               // actions ready
		actions   int               // actions planned
		says      map[string]string // action → its error, exactly
	}{
		{name: "32 levels install", n: 32, endListed: true, installs: 33, actions: 33},
		{name: "33 levels are one too many", n: 33, endListed: true, actions: 33, says: map[string]string{
			"p32": "p32 cannot be installed: it needs p33, which would be dependency level 33; reasonix follows at most 32",
			"p0":  "p0 cannot be installed: p0 → p1 → p2 → … (28 more) → p31 → p32: p32 needs p33, which would be dependency level 33; reasonix follows at most 32",
		}},
		{name: "a short chain to a missing plugin", n: 10, actions: 10, says: map[string]string{
			"p9": "p9 cannot be installed: it needs p10, which marketplace m does not list",
			"p8": "p8 cannot be installed: p8 → p9: p9 needs p10, which marketplace m does not list",
			"p0": "p0 cannot be installed: p0 → p1 → p2 → … (5 more) → p8 → p9: p9 needs p10, which marketplace m does not list",
		}},
		{name: "999 deep to a missing plugin", n: 999, actions: 33},
		{name: "a bulk install of a chain too deep", n: 40, endListed: true, bulk: true, installs: 33, actions: 41, says: map[string]string{
			"p0": "p0 cannot be installed: it needs a chain of dependencies more than 32 levels deep (p0 → p1 → p2 → … (29 more) → p32 → p33 → …); reasonix follows at most 32",
			"p6": "p6 cannot be installed: it needs a chain of dependencies more than 32 levels deep (p6 → p7 → p8 → … (29 more) → p38 → p39 → …); reasonix follows at most 32",
		}},
		{name: "a bulk install of 999 to a missing plugin", n: 999, bulk: true, actions: 999, says: map[string]string{
			"p990": "p990 cannot be installed: p990 → p991 → p992 → … (4 more) → p997 → p998: p998 needs p999, which marketplace m does not list",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t)
			req := Request{Source: mustSource(chainMarketplace(t, c.n, c.endListed)), Name: "p0"}
			if c.bulk {
				req.Name = ""
			}
			resp, _ := env.install(req, Approval{DryRun: true})
			ready := 0
			for _, a := range resp.Actions {
				if a.applicable() {
					ready++
				}
				if len(a.ErrorText()) > 300 {
					t.Errorf("%s: an error of %d bytes: %.300s…", a.Name, len(a.ErrorText()), a.ErrorText())
				}
			}
			if ready != c.installs || len(resp.Actions) != c.actions {
				t.Errorf("%d actions, %d ready; want %d, %d", len(resp.Actions), ready, c.actions, c.installs)
			}
			acts := actionsByName(resp)
			for name, want := range c.says {
				if got := acts[name].ErrorText(); got != want {
					t.Errorf("%s says\n  %q\nwant\n  %q", name, got, want)
				}
			}
			if c.installs == 0 && !strings.Contains(acts["p0"].ErrorText(), "p0 → p1 → p2 → …") {
				t.Errorf("p0: %s", acts["p0"].ErrorText())
			}
		})
	}
}
