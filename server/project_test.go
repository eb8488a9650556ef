package server

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/lockfile"
)

// projectEnv is a daemon serving a project whose lock pins the installed
// tools at another commit and which wants a plugin the lock lacks.
func projectEnv(t *testing.T) *env {
	t.Helper()
	gh := fakegithub.New(t)
	mk := gh.CreateRepo("acme", "market")
	first := mk.Commit("main", map[string]string{
		".claude-plugin/marketplace.json":  `{"name":"acme","owner":{"name":"acme"},"plugins":[{"name":"tools","source":"./tools"}]}`,
		"tools/.claude-plugin/plugin.json": `{"name":"tools","version":"1.0.0"}`,
		"tools/skills/s/SKILL.md":          "---\ndescription: s\n---\nbody\n",
	})
	market := mustSource("https://github.com/acme/market")
	proj := &lockfile.Project{Dir: t.TempDir(), Marketplaces: []lockfile.ProjectMarketplace{{Name: "acme", Source: market}},
		Plugins: []lockfile.Wanted{{Name: "tools", Market: "acme", Enabled: true}, {Name: "lint", Market: "acme", Enabled: true}}}
	e := newEnv(t, envOpts{gh: gh, project: proj})
	if _, err := e.in.Install(context.Background(), installer.Request{Source: market}, installer.Approval{Yes: true}); err != nil {
		t.Fatal(err)
	}
	lock, _, err := e.in.LockHomeDocument(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The lock pins tools where the team agreed: not where this home is.
	lock.Plugins[0].Commit, lock.Plugins[0].ContentDigest = strings.Repeat("e", 40), "sha256:"+strings.Repeat("f", 64)
	lock.Marketplaces[0].Commit = first
	if err := lock.WriteFile(filepath.Join(proj.Dir, lockfile.FileName)); err != nil {
		t.Fatal(err)
	}
	return e
}

// GET /project says how the home stands against the served project's
// lock, behind the token like every route; with no project it says none.
func TestProjectState(t *testing.T) {
	t.Parallel()
	e := projectEnv(t)
	r := e.do("GET", "/project", nil, nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET /project: %d %s", r.status, r.body)
	}
	var body struct{ Project *installer.ProjectState }
	if err := json.Unmarshal(r.body, &body); err != nil || body.Project == nil {
		t.Fatalf("%s (%v)", r.body, err)
	}
	st := body.Project
	if st.InSync || len(st.Drifted) != 1 || st.Drifted[0].Name != "tools" || st.Drifted[0].Locked != strings.Repeat("e", 40) ||
		len(st.Unlocked) != 1 || st.Unlocked[0] != "lint@acme" || len(st.Missing) != 0 {
		t.Fatalf("state %+v", st)
	}
	if r := e.do("GET", "/project", nil, hdr{"Authorization": ""}); r.status != http.StatusUnauthorized {
		t.Fatalf("GET /project without the token: %d", r.status)
	}
	none := newEnv(t, envOpts{})
	if r := none.do("GET", "/project", nil, nil); r.status != http.StatusOK || r.json(t)["project"] != nil || !strings.Contains(string(r.body), `"project": null`) {
		t.Fatalf("no project: %d %s", r.status, r.body)
	}
}

// The Installed tab shows the project's lock state in words, never as
// flags, and applies nothing.
func TestBrowserProjectState(t *testing.T) {
	e := projectEnv(t)
	before := e.registryBytes()
	p := newTab(t, e)
	p.signIn()
	p.showInstalled()
	p.visible("#installed-project")
	got := p.text("#installed-project")
	for _, want := range []string{"this home differs from its lock", "tools (locked eeeeeee, installed", "at another commit", "lint@acme: wanted by the project but not locked yet", "reasonix sync"} {
		if !strings.Contains(got, want) {
			t.Errorf("the project notice lacks %q:\n%s", want, got)
		}
	}
	p.noFlags("with a project notice")
	if string(e.registryBytes()) != string(before) {
		t.Fatal("showing the project state changed the registry")
	}
}
