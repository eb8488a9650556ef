package bulkmarket

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/marketplace"
)

// Both shapes give a document every entry of which is ready, with the four
// kinds of entry, and a rich one the repository beside the plugins.
func TestBuildShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		shape     Shape
		wantFiles int // files of the marketplace repository
	}{
		{"plain", Shape{Entries: 10, Repos: 4}, 2*4 + 2},
		{"rich", Shape{Entries: 12, Repos: 4, Relative: 4}, 4*22 + 2*4*22 + 2*12 + 80 + 2 + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gh := fakegithub.New(t)
			rich := tc.name == "rich"
			tc.shape.Rich = rich
			m, err := Build(gh, tc.shape)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Targets) != tc.shape.Repos+1 || m.Source != "https://github.com/bulk/market" {
				t.Fatalf("targets %d, source %s", len(m.Targets), m.Source)
			}
			market := m.Targets[len(m.Targets)-1]
			doc := show(t, market.Repo.Dir(), market.SHA+":.claude-plugin/marketplace.json")
			parsed, err := marketplace.ClaudeDocument.Parse([]byte(doc), marketplace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[marketplace.Kind]int{}
			for _, e := range parsed.Entries {
				if e.Status != marketplace.StatusReady {
					t.Errorf("entry %s: %s (%s)", e.Name, e.Status, e.Reason)
				}
				kinds[e.Kind]++
				if rich && len(e.Description) < 200 {
					t.Errorf("rich entry %s: description of %d bytes", e.Name, len(e.Description))
				}
			}
			var raw struct {
				Plugins []struct{ Keywords []string }
			}
			if err := json.Unmarshal([]byte(doc), &raw); err != nil {
				t.Fatal(err)
			}
			for _, p := range raw.Plugins {
				if rich && len(p.Keywords) < 12 {
					t.Errorf("rich entry with %d keywords", len(p.Keywords))
				}
			}
			if len(parsed.Entries) != tc.shape.Entries || len(kinds) != 4 {
				t.Errorf("%d entries of kinds %v", len(parsed.Entries), kinds)
			}
			files := strings.Fields(show(t, market.Repo.Dir(), "--name-only", "--format=", market.SHA))
			if len(files) != tc.wantFiles {
				t.Errorf("the marketplace repository has %d files, want %d", len(files), tc.wantFiles)
			}
			if _, err := Build(gh, tc.shape); err == nil {
				t.Error("a second marketplace on the same fake was built over the first")
			}
		})
	}
}

func TestShapeRefusesWhatCannotBeBuilt(t *testing.T) {
	t.Parallel()
	for _, sh := range []Shape{{Entries: 0, Repos: 1}, {Entries: 1001, Repos: 1}, {Entries: 10, Repos: 0}, {Entries: 10, Repos: 9}, {Entries: 10, Relative: 11, Repos: 1}} {
		if err := sh.check(); err == nil {
			t.Errorf("%+v was accepted", sh)
		}
	}
}

func show(t *testing.T, gitDir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"--git-dir", gitDir, "show"}, args...)...).Output()
	if err != nil {
		t.Fatalf("git show %v: %v", args, err)
	}
	return string(out)
}
