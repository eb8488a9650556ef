package installer

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"reasonix.io/plugind/source"
)

// TestFilesFromBeforeTypedSourcesReadTheSame: a registry, a known
// marketplaces file and a stored plan written while sources were strings
// (testdata/before-typed-sources, written by the code of then, every form
// it recorded) read back as typed sources and are written again
// byte-identical.
func TestFilesFromBeforeTypedSourcesReadTheSame(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "before-typed-sources")
	for _, c := range []struct {
		file  string
		again func(t *testing.T, in, out string) error
	}{
		{"plugin-packages.json", func(t *testing.T, in, out string) error {
			r, err := LoadRegistry(in)
			if err != nil {
				return err
			}
			for name, kind := range map[string]source.Kind{"branch": source.GitHub, "loose": source.Git, "spaced": source.LocalDir, "zip": source.LocalZip} {
				if e, ok := r.Find(name); !ok || e.Source.Kind != kind {
					t.Errorf("%s reads as %+v", name, e)
				}
			}
			if e, _ := r.Find("githost"); e.Source.Beside(e.Subdir).Subdir != "plugins/g" || e.Marketplace.Repo() != "team/market" {
				t.Errorf("githost reads as %+v", e)
			}
			return r.Save(out)
		}},
		{"marketplaces.json", func(t *testing.T, in, out string) error {
			m, err := LoadMarketplaces(in)
			if err != nil {
				return err
			}
			if k, ok := m.Find("branchy"); !ok || !k.Source.NeedsSplit() {
				t.Errorf("branchy reads as %+v", k)
			}
			return m.Save(out)
		}},
		{"stored-update-plan.json", storedPlanAgain(func(t *testing.T, sp *StoredPlan) {
			// An update is its own request now: it reads back beside the
			// options, not inside them.
			if u := sp.Request.Update; u == nil || !u.All || u.Marketplace != "acme" || !sp.Request.Offline || !sp.Request.Source.IsZero() {
				t.Errorf("stored update reads as %+v", sp.Request)
			}
		})},
		{"stored-plan.json", storedPlanAgain(func(t *testing.T, sp *StoredPlan) {
			if a := sp.Response.Actions[0]; sp.Request.Source.Kind != source.GitHub || a.Source.Ref != a.Commit || a.Previous.Source.Kind != source.Git {
				t.Errorf("stored plan reads as %+v", sp)
			}
		})},
	} {
		t.Run(c.file, func(t *testing.T) {
			in := filepath.Join(dir, c.file)
			out := filepath.Join(t.TempDir(), c.file)
			if err := c.again(t, in, out); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			after, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Errorf("written again differently:\n%s\nwas\n%s", after, before)
			}
		})
	}
}

// storedPlanAgain decodes a stored plan, checks it, and encodes it again.
func storedPlanAgain(check func(*testing.T, *StoredPlan)) func(t *testing.T, in, out string) error {
	return func(t *testing.T, in, out string) error {
		data, err := os.ReadFile(in)
		if err != nil {
			return err
		}
		var sp StoredPlan
		if err := json.Unmarshal(data, &sp); err != nil {
			return err
		}
		check(t, &sp)
		again, err := json.Marshal(sp)
		if err != nil {
			return err
		}
		return os.WriteFile(out, again, 0o600)
	}
}
