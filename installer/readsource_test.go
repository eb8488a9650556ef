package installer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind"
	"reasonix.io/plugind/cache"
	"reasonix.io/plugind/source"
)

// shelfMarket writes a local marketplace "shelf" offering one and two, and
// makes it known.
func shelfMarket(t *testing.T, env *testEnv) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shelf-folder")
	writeTree(t, dir, map[string]string{
		".claude-plugin/marketplace.json": `{"name":"shelf","owner":{"name":"o"},"plugins":[{"name":"one","source":"./one"},{"name":"two","source":"./two"}]}`,
		"one/.claude-plugin/plugin.json":  `{"name":"one","version":"1.0.0"}`,
		"one/skills/s/SKILL.md":           "---\nname: s\ndescription: S\n---\nS.\n",
		"two/.claude-plugin/plugin.json":  `{"name":"two","version":"1.0.0"}`,
		"two/skills/s/SKILL.md":           "---\nname: s\ndescription: S\n---\nS.\n",
	})
	if _, err := env.in.AddMarketplace(context.Background(), mustSource(dir), false); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReadSource: the one rule for names in a source, for the CLI (a
// working directory) and the daemon (none) alike.
func TestReadSource(t *testing.T) {
	env := newEnv(t)
	shelf := shelfMarket(t, env)
	abs := claudePlugin(t, "abs", "1.0.0")
	cases := []struct {
		raw, subdir string
		daemon      bool
		kind        source.Kind
		path        string // of a local source
		entry       string
		market      string
		code        plugind.Code
		says        string
	}{
		{raw: "one@shelf", kind: source.LocalDir, path: shelf, entry: "one", market: "shelf"},
		{raw: "one@shelf", daemon: true, kind: source.LocalDir, path: shelf, entry: "one", market: "shelf"},
		{raw: "shelf", kind: source.LocalDir, path: shelf, market: "shelf"},
		{raw: "shelf", daemon: true, kind: source.LocalDir, path: shelf, market: "shelf"},
		{raw: "one@nowhere", code: plugind.CodeNotFound, says: `no known marketplace is named "nowhere"`},
		{raw: "one@shelf", subdir: "x", code: plugind.CodeInvalidSource, says: "records its own folder"},
		{raw: "shelf", subdir: "x", code: plugind.CodeInvalidSource, says: "records its own folder"},
		// Not a known name: a folder of the CLI's working directory; the
		// daemon refuses, with the remote form it most likely meant.
		{raw: "loose", kind: source.LocalDir, path: "loose"},
		{raw: "loose", daemon: true, code: plugind.CodeInvalidSource, says: "known marketplaces: shelf"},
		{raw: "acme/tools", kind: source.LocalDir, path: "acme/tools"},
		{raw: "acme/tools", daemon: true, code: plugind.CodeInvalidSource, says: "did you mean git:github.com/acme/tools?"},
		{raw: "github.com/acme/tools", daemon: true, code: plugind.CodeInvalidSource, says: "did you mean git:github.com/acme/tools?"},
		{raw: "./shelf", daemon: true, code: plugind.CodeInvalidSource, says: "give the folder's absolute path"},
		{raw: abs, daemon: true, kind: source.LocalDir, path: abs},
		{raw: abs, subdir: "x", code: plugind.CodeInvalidSource, says: "a subdir goes with a repository source"},
		{raw: "https://github.com/acme/tools", subdir: "plugins/x", kind: source.GitHub},
	}
	for _, c := range cases {
		env.in.NoWorkingDir = c.daemon
		got, err := env.in.readSource(mustSource(c.raw), c.subdir)
		name := c.raw
		if c.daemon {
			name += " (daemon)"
		}
		if c.code != "" {
			if plugind.CodeOf(err) != c.code || !strings.Contains(err.Error(), c.says) {
				t.Errorf("%s: got %v, want %s saying %q", name, err, c.code, c.says)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got.src.Kind != c.kind || (c.path != "" && got.src.Path != c.path) || got.entry != c.entry || got.market != c.market {
			t.Errorf("%s: read as %+v (entry %q, market %q)", name, got.src, got.entry, got.market)
		}
	}
}

// TestBareNameAndFolder: in the CLI, a bare name that is both a known
// marketplace and another folder here is refused as ambiguous; the folder
// the marketplace was added from is the same thing, and ./NAME is always
// the folder.
func TestBareNameAndFolder(t *testing.T) {
	env := newEnv(t)
	shelf := shelfMarket(t, env)
	wd := t.TempDir()
	t.Chdir(wd)
	if err := os.Mkdir(filepath.Join(wd, "shelf"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := env.in.readSource(mustSource("shelf"), "")
	if plugind.CodeOf(err) != plugind.CodeInvalidSource || !strings.Contains(err.Error(), "write ./shelf for the folder") {
		t.Fatalf("ambiguous bare name: %v", err)
	}
	if got, err := env.in.readSource(mustSource("./shelf"), ""); err != nil || got.market != "" || got.src.Path != "./shelf" {
		t.Fatalf("./shelf: %+v %v", got, err)
	}
	// From the marketplace's own parent folder, its name is that folder.
	t.Chdir(filepath.Dir(shelf))
	if err := os.Rename(shelf, filepath.Join(filepath.Dir(shelf), "shelf")); err != nil {
		t.Fatal(err)
	}
	known, err := LoadMarketplaces(env.home.MarketplacesPath())
	if err != nil {
		t.Fatal(err)
	}
	known.Marketplaces[0].Source = mustSource(filepath.Join(filepath.Dir(shelf), "shelf"))
	if err := known.Save(env.home.MarketplacesPath()); err != nil {
		t.Fatal(err)
	}
	if got, err := env.in.readSource(mustSource("shelf"), ""); err != nil || got.market != "shelf" {
		t.Fatalf("the marketplace's own folder: %+v %v", got, err)
	}
}

// TestMarketEntryInstallsByPlanID: NAME@MARKET plans, and its planId alone
// installs it (the daemon's way: the stored request is replayed exactly as
// it was asked), through a fresh installer as after a restart.
func TestMarketEntryInstallsByPlanID(t *testing.T) {
	env := newEnv(t)
	shelfMarket(t, env)
	db, err := cache.OpenWith(context.Background(), env.home.CachePath(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	env.in.Cache, env.in.NoWorkingDir = db, true
	ctx := context.Background()
	for _, src := range []string{"one@shelf", "shelf"} {
		dry, err := env.install(Request{Source: mustSource(src)}, Approval{DryRun: true})
		if err != nil {
			t.Fatalf("plan %s: %v", src, err)
		}
		sp, ok, err := env.in.StoredPlan(ctx, dry.PlanID)
		if err != nil || !ok || sp.Request.Source.String() != src || sp.Request.Name != "" || sp.Request.Subdir != "" {
			t.Fatalf("%s: the stored request is not the one asked: %+v %v %v", src, sp, ok, err)
		}
		fresh := New(Config{Home: env.home, Sources: env.in.Sources, Cache: db, NoWorkingDir: true})
		before := env.registryBytes()
		resp, err := fresh.InstallApproved(ctx, Request{}, planIDOf(t, dry.PlanID))
		if err != nil || !resp.Applied {
			t.Fatalf("%s: install by planId: %v %+v", src, err, resp)
		}
		if src == "one@shelf" && (len(resp.Actions) != 1 || resp.Actions[0].Name != "one" || string(before) == string(env.registryBytes())) {
			t.Fatalf("%s installed %+v", src, resp.Actions)
		}
	}
	// The same entry by the marketplace's source and --name is the same
	// plan: one planId for one thing.
	byName, err := env.install(Request{Source: mustSource("one@shelf")}, Approval{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	known, _ := LoadMarketplaces(env.home.MarketplacesPath())
	bySource, err := env.install(Request{Source: known.Marketplaces[0].Source, Name: "one"}, Approval{DryRun: true})
	if err != nil || bySource.PlanID != byName.PlanID {
		t.Fatalf("one@shelf planned %s, its source with name one %s (%v)", byName.PlanID, bySource.PlanID, err)
	}
}
