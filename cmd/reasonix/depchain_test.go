package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDeepDependencyChainIsCheap (issue 21, item 7): a 40 KB marketplace
// of 999 plugins, each needing the next, the last needing one that is not
// listed. Each error used to quote the next one's in full: 81 MB of
// response and 434 MB of memory for one plan. Now the chain is followed 32
// levels and every error names it in a few words, whether one plugin is
// asked for or the whole marketplace.
func TestDeepDependencyChainIsCheap(t *testing.T) {
	t.Parallel()
	const n = 999
	files := map[string]string{}
	entries := make([]string, 0, n)
	for i := range n {
		name := fmt.Sprintf("p%d", i)
		files[name+"/.claude-plugin/plugin.json"] = fmt.Sprintf(`{"name":%q,"version":"1.0.0","dependencies":["p%d"]}`, name, i+1)
		files[name+"/skills/s/SKILL.md"] = "---\ndescription: x\n---\n"
		entries = append(entries, fmt.Sprintf(`{"name":%q,"source":"./%s"}`, name, name))
	}
	files[".claude-plugin/marketplace.json"] = `{"name":"m","owner":{"name":"m"},"plugins":[` + strings.Join(entries, ",") + `]}`
	market := writeTree(t, files)

	for _, c := range []struct {
		args    []string
		maxOut  int
		p0Says  string
		actions int
	}{
		{[]string{"--name", "p0"}, 200 << 10, "p0 cannot be installed: p0 → p1 → p2 → … (28 more) → p31 → p32: p32 needs p33, which would be dependency level 33", 33},
		// The whole marketplace: 999 actions of about a kilobyte each.
		{nil, 2 << 20, "p0 cannot be installed: it needs a chain of dependencies more than 32 levels deep (p0 → p1 → p2 → … (29 more) → p32 → p33 → …)", 999},
	} {
		home := t.TempDir()
		args := append([]string{"plugin", "install", market, "--dry-run"}, c.args...)
		r := runMeasured(t, 60*time.Second, home, nil, args...)
		t.Logf("%v: exit %d, %d bytes out, %s, peak RSS %d MiB", c.args, r.code, len(r.stdout), r.took.Round(time.Millisecond), r.usage.PeakRSS>>20)
		if r.code != 1 || len(r.stdout) > c.maxOut {
			t.Fatalf("%v: exit %d, %d bytes of response (at most %d)", c.args, r.code, len(r.stdout), c.maxOut)
		}
		if r.usage.PeakRSS > 200<<20 || r.took > 20*time.Second {
			t.Errorf("%v: peak RSS %d MiB in %s", c.args, r.usage.PeakRSS>>20, r.took)
		}
		acts := actionsOf(t, r.result)
		if len(acts) != c.actions || !strings.HasPrefix(acts["p0"]["error"].(string), c.p0Says) {
			t.Errorf("%v: %d actions; p0 says %v", c.args, len(acts), acts["p0"]["error"])
		}
		for name, a := range acts {
			if e, _ := a["error"].(string); len(e) > 300 {
				t.Errorf("%s: an error of %d bytes", name, len(e))
			}
		}
	}
}
