package installer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"reasonix.io/plugind/lockfile"
	"reasonix.io/plugind/source"
)

func TestProjectState(t *testing.T) {
	home := Home{Dir: t.TempDir()}
	in := New(Config{Home: home})
	src := func(s string) source.Source {
		v, err := source.FromText(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	c1, c2 := strings.Repeat("1", 40), strings.Repeat("2", 40)
	d1, d2 := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
	market := src("https://github.com/acme/market")
	reg := &Registry{Version: registryVersion, Plugins: []Entry{
		{Name: "same", Source: market.At(c1), Commit: c1, ContentDigest: d1, Enabled: true, Status: "ok", ManifestKind: "claude"},
		{Name: "moved", Source: market.At(c2), Commit: c2, ContentDigest: d2, Enabled: true, Status: "ok", ManifestKind: "claude"},
		{Name: "off", Source: market.At(c1), Commit: c1, ContentDigest: d1, Enabled: false, Status: "ok", ManifestKind: "claude"},
		{Name: "mine", Source: market.At(c1), Commit: c1, ContentDigest: d1, Enabled: true, Status: "ok", ManifestKind: "claude"},
	}}
	if err := reg.Save(home.RegistryPath()); err != nil {
		t.Fatal(err)
	}
	proj := &lockfile.Project{Dir: t.TempDir(), Marketplaces: []lockfile.ProjectMarketplace{{Name: "acme", Source: market}},
		Plugins: []lockfile.Wanted{{Name: "same", Market: "acme", Enabled: true}, {Name: "new", Market: "acme", Enabled: true}}}
	if st := in.ProjectState(proj); !strings.Contains(st.Error, "no lock at") || st.InSync || st.Missing == nil {
		t.Fatalf("no lock: %+v", st)
	}
	lock := &lockfile.Lock{Version: lockfile.Version, Marketplaces: []lockfile.Marketplace{{Name: "acme", Source: market, Commit: c1}},
		Plugins: []lockfile.Plugin{
			{Name: "same", Marketplace: "acme", Source: market.At(c1), Commit: c1, ContentDigest: d1, Enabled: true},
			{Name: "moved", Marketplace: "acme", Source: market.At(c1), Commit: c1, ContentDigest: d1, Enabled: true},
			{Name: "off", Marketplace: "acme", Source: market.At(c1), Commit: c1, ContentDigest: d1, Enabled: true},
			{Name: "gone", Marketplace: "acme", Source: market.At(c1), Commit: c1, ContentDigest: d1, Enabled: true},
		}}
	if err := lock.WriteFile(proj.LockPath()); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(home.RegistryPath())
	st := in.ProjectState(proj)
	if st.Error != "" || st.InSync ||
		!slices.Equal(st.Missing, []string{"gone"}) || len(st.Drifted) != 1 || st.Drifted[0] != (Drift{"moved", c1, c2}) ||
		!slices.Equal(st.Toggled, []string{"off"}) || !slices.Equal(st.Extra, []string{"mine"}) || !slices.Equal(st.Unlocked, []string{"new@acme"}) {
		t.Fatalf("state: %+v", st)
	}
	if after, _ := os.ReadFile(home.RegistryPath()); string(after) != string(before) {
		t.Fatal("reading the state wrote the registry")
	}
	if _, err := os.Stat(filepath.Join(home.Dir, "cache")); err == nil {
		t.Error("reading the state made a cache")
	}
}
