package server

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/store"
)

// TestRoutesHappyPath walks one plugin through every route.
func TestRoutesHappyPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	src := plugin(t, t.TempDir(), "weather", "1.0.0")

	r := e.do("GET", "/healthz", nil, hdr{"Authorization": ""})
	if r.status != 200 || r.json(t)["ok"] != true {
		t.Fatalf("healthz: %d %s", r.status, r.body)
	}
	r = e.do("GET", "/plugins", nil, nil)
	if r.status != 200 || strings.TrimSpace(string(r.body)) != "{\n  \"plugins\": []\n}" {
		t.Fatalf("empty list: %d %q", r.status, r.body)
	}

	plan := e.plan(installer.Request{Source: mustSource(src)})
	if !plan.OK || plan.Status != installer.StatusPlanned || plan.Applied || len(plan.Actions) != 1 ||
		plan.Actions[0].Name != "weather" || len(plan.Actions[0].Skills) != 1 || len(plan.Actions[0].MCPServers) != 1 {
		t.Fatalf("plan: %+v", plan)
	}
	if _, err := os.Stat(e.home.RegistryPath()); !os.IsNotExist(err) {
		t.Fatal("a plan wrote the registry")
	}

	r = e.installByPlanID(plan.PlanID)
	if r.status != 200 {
		t.Fatalf("install: %d %s", r.status, r.body)
	}
	inst := r.response(t)
	if !inst.OK || !inst.Applied || inst.PlanID != plan.PlanID || inst.Actions[0].Status != installer.ActionInstalled {
		t.Fatalf("install response: %s", r.body)
	}

	var list struct {
		Plugins []installer.PluginInfo `json:"plugins"`
	}
	r = e.do("GET", "/plugins", nil, nil)
	if err := json.Unmarshal(r.body, &list); err != nil || r.status != 200 {
		t.Fatalf("list: %d %v %s", r.status, err, r.body)
	}
	if len(list.Plugins) != 1 || list.Plugins[0].Name != "weather" || !list.Plugins[0].Loaded ||
		len(list.Plugins[0].Skills) != 1 || list.Plugins[0].Status != "ok" {
		t.Fatalf("list: %s", r.body)
	}

	r = e.do("POST", "/plugins/enabled", map[string]any{"name": "weather", "enabled": false}, nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"enabled": false`) {
		t.Fatalf("disable: %d %s", r.status, r.body)
	}
	r = e.do("GET", "/plugins", nil, nil)
	if !strings.Contains(string(r.body), `"enabled": false`) || !strings.Contains(string(r.body), `"loaded": false`) {
		t.Fatalf("list after disable: %s", r.body)
	}
	r = e.do("POST", "/plugins/enabled", map[string]any{"name": "weather", "enabled": true}, nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"enabled": true`) {
		t.Fatalf("enable: %d %s", r.status, r.body)
	}

	r = e.do("GET", "/plugins/weather/export", nil, nil)
	if r.status != 200 || r.header.Get("Content-Type") != "application/zip" {
		t.Fatalf("export: %d %s %s", r.status, r.header, r.body)
	}
	if cd := r.header.Get("Content-Disposition"); cd != `attachment; filename=weather.zip` {
		t.Fatalf("Content-Disposition = %q", cd)
	}
	if env := r.header.Get("X-Reasonix-Required-Env"); env != "WEATHER_API_KEY" {
		t.Fatalf("X-Reasonix-Required-Env = %q", env)
	}
	if bytes.Contains(r.body, []byte("sk-live-not-a-real-key")) {
		t.Fatal("export carries the credential")
	}
	zr, err := zip.NewReader(bytes.NewReader(r.body), int64(len(r.body)))
	if err != nil {
		t.Fatalf("export is not a zip: %v", err)
	}
	found := false
	for _, f := range zr.File {
		if f.Name == ".mcp.json" {
			rc, _ := f.Open()
			data, _ := io.ReadAll(rc)
			rc.Close()
			found = strings.Contains(string(data), "${WEATHER_API_KEY}")
		}
	}
	if !found {
		t.Fatal("exported .mcp.json does not reference ${WEATHER_API_KEY}")
	}

	r = e.do("POST", "/extensions/reload", nil, nil)
	if r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Fatalf("reload: %d %s", r.status, r.body)
	}

	r = e.do("DELETE", "/plugins/weather", nil, nil)
	if r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if rm := r.response(t); !rm.OK || rm.Status != installer.StatusRemoved {
		t.Fatalf("delete: %s", r.body)
	}
	r = e.do("DELETE", "/plugins/weather", nil, nil)
	r.wantError(t, http.StatusNotFound, "install.not_found")
	r = e.do("GET", "/plugins/weather/export", nil, nil)
	r.wantError(t, http.StatusNotFound, "install.not_found")
	r = e.do("POST", "/plugins/enabled", map[string]any{"name": "weather", "enabled": true}, nil)
	r.wantError(t, http.StatusNotFound, "install.not_found")
}

// TestPlanInstallAcrossRestart: a plan made by one daemon is installed by
// planId alone through a new daemon over the same home (the plan lives in
// the cache, not in memory).
func TestPlanInstallAcrossRestart(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	src := plugin(t, t.TempDir(), "restart", "1.0.0")
	first := newEnv(t, envOpts{home: home})
	plan := first.plan(installer.Request{Source: mustSource(src)})
	first.close()

	second := newEnv(t, envOpts{home: home})
	r := second.installByPlanID(plan.PlanID)
	if r.status != 200 || !r.response(t).Applied {
		t.Fatalf("install by planId after restart: %d %s", r.status, r.body)
	}
	r = second.do("GET", "/plugins", nil, nil)
	if !strings.Contains(string(r.body), `"name": "restart"`) {
		t.Fatalf("list: %s", r.body)
	}

	// An unknown planId is refused, not guessed at.
	r = second.installByPlanID("low:sha256:00000000000000000000000000000000")
	r.wantError(t, http.StatusUnprocessableEntity, "install.approval_denied")
}

// TestChangedSourceIsRefused: the source changes between plan and install
// (and, separately, during apply): refused, registry byte-identical.
func TestChangedSourceIsRefused(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	e := newEnv(t, envOpts{home: home})
	keep := plugin(t, t.TempDir(), "keep", "1.0.0")
	if r := e.installByPlanID(e.plan(installer.Request{Source: mustSource(keep)}).PlanID); r.status != 200 {
		t.Fatalf("install keep: %s", r.body)
	}
	before := e.registryBytes()

	src := plugin(t, t.TempDir(), "drift", "1.0.0")
	plan := e.plan(installer.Request{Source: mustSource(src)})
	e.close()
	writeTree(t, src, map[string]string{"skills/hello/SKILL.md": "---\nname: hello\ndescription: changed\n---\nchanged\n"})
	e = newEnv(t, envOpts{home: home})
	r := e.installByPlanID(plan.PlanID)
	r.wantError(t, http.StatusUnprocessableEntity, "install.approval_denied")
	if resp := r.response(t); resp.Applied || resp.PlanID == plan.PlanID {
		t.Fatalf("refusal: %s", r.body)
	}
	if !bytes.Equal(before, e.registryBytes()) {
		t.Fatal("registry changed after a refused install")
	}

	// Changed after the fresh plan, while apply stages it: digest mismatch.
	plan = e.plan(installer.Request{Source: mustSource(src)})
	e.setHook(func(step string) {
		if step == "before-staging" {
			writeTree(t, src, map[string]string{"commands/wave.md": "tampered\n"})
		}
	})
	r = e.installByPlanID(plan.PlanID)
	r.wantError(t, http.StatusUnprocessableEntity, "install.digest_mismatch")
	if !bytes.Equal(before, e.registryBytes()) {
		t.Fatal("registry changed after a digest mismatch")
	}
}

// TestRefusalsAndBadRequests: the status and errorCode of every way a
// well-authenticated request can be wrong.
func TestRefusalsAndBadRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	src := plugin(t, t.TempDir(), "dup", "1.0.0")
	if r := e.installByPlanID(e.plan(installer.Request{Source: mustSource(src)}).PlanID); r.status != 200 {
		t.Fatalf("install: %s", r.body)
	}
	marketplace := writeTree(t, filepath.Join(t.TempDir(), "notaplugin"), map[string]string{"README.md": "nothing here"})
	other := plugin(t, t.TempDir(), "dup", "2.0.0") // the same name, other content
	cases := []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"conflict", "POST", "/plugins/plan", installer.Request{Source: mustSource(other)}, 422, "install.conflict"},
		{"install malformed planId", "POST", "/plugins/install", map[string]any{"planId": "low:sha256:typo"}, 400, "install.invalid_source"},
		{"missing source", "POST", "/plugins/plan", map[string]any{"name": "x"}, 400, "install.invalid_source"},
		{"relative source", "POST", "/plugins/plan", map[string]any{"source": "examples/hello-claude"}, 400, "install.invalid_source"},
		// Relative or ambiguous sources the daemon could only resolve
		// against its own working folder: all refused before any access.
		{"dot-relative with a colon", "POST", "/plugins/plan", map[string]any{"source": "./a:b"}, 400, "install.invalid_source"},
		{"relative with a colon", "POST", "/plugins/plan", map[string]any{"source": "a:b"}, 400, "install.invalid_source"},
		{"dot", "POST", "/plugins/plan", map[string]any{"source": "."}, 400, "install.invalid_source"},
		{"parent", "POST", "/plugins/plan", map[string]any{"source": "../x"}, 400, "install.invalid_source"},
		{"relative zip", "POST", "/plugins/plan", map[string]any{"source": "x.zip"}, 400, "install.invalid_source"},
		{"owner/repo", "POST", "/plugins/plan", map[string]any{"source": "acme/tools"}, 400, "install.invalid_source"},
		{"blank source", "POST", "/plugins/plan", map[string]any{"source": "  "}, 400, "install.invalid_source"},
		{"ssh with a password", "POST", "/plugins/plan", map[string]any{"source": "ssh://git:hunter2@git.example.test/team/tools.git"}, 400, "install.invalid_source"},
		{"ssh option as a host", "POST", "/plugins/plan", map[string]any{"source": "ssh://-oProxyCommand=touch%20x/team/tools.git"}, 400, "install.invalid_source"},
		{"file url", "POST", "/plugins/plan", map[string]any{"source": "file:///etc"}, 400, "install.invalid_source"},
		{"remote helper", "POST", "/plugins/plan", map[string]any{"source": "ext::sh"}, 400, "install.invalid_source"},
		{"ip host", "POST", "/plugins/plan", map[string]any{"source": "https://127.0.0.1/x.git"}, 400, "install.invalid_source"},
		{"bad source", "POST", "/plugins/plan", map[string]any{"source": "https://user:pw@github.com/a/b"}, 400, "install.invalid_source"},
		{"no such folder", "POST", "/plugins/plan", installer.Request{Source: mustSource("/nonexistent/reasonix/plugin")}, 404, "install.not_found"},
		{"no manifest", "POST", "/plugins/plan", installer.Request{Source: mustSource(marketplace)}, 400, "install.invalid_source"},
		{"bad name", "POST", "/plugins/plan", installer.Request{Source: mustSource(src), Name: "../x"}, 400, "install.invalid_source"},
		{"planId on plan", "POST", "/plugins/plan", map[string]any{"source": src, "planId": "low:x"}, 400, CodeBadRequest},
		{"unknown field", "POST", "/plugins/plan", map[string]any{"source": src, "force": true}, 400, CodeBadRequest},
		{"empty body", "POST", "/plugins/plan", "", 400, CodeBadRequest},
		{"not json", "POST", "/plugins/plan", "source=x", 400, CodeBadRequest},
		{"two values", "POST", "/plugins/plan", `{"source":"/x"} {"source":"/y"}`, 400, CodeBadRequest},
		{"array", "POST", "/plugins/plan", `[]`, 400, CodeBadRequest},
		{"install without planId", "POST", "/plugins/install", installer.Request{Source: mustSource(src)}, 400, CodeBadRequest},
		{"install empty planId", "POST", "/plugins/install", map[string]any{"source": src, "planId": ""}, 400, CodeBadRequest},
		{"install malformed planId", "POST", "/plugins/install", map[string]any{"source": src, "planId": "low:sha256:12"}, 400, "install.invalid_source"},
		{"install planId not a string", "POST", "/plugins/install", map[string]any{"planId": 12}, 400, CodeBadRequest},
		{"install stale planId with source", "POST", "/plugins/install", approving(t, installer.Request{Source: mustSource(src), Replace: true}, "low:sha256:00000000000000000000000000000000"), 422, "install.approval_denied"},
		{"enabled without enabled", "POST", "/plugins/enabled", map[string]any{"name": "dup"}, 400, CodeBadRequest},
		{"enabled bad name", "POST", "/plugins/enabled", map[string]any{"name": "a/b", "enabled": true}, 400, "install.invalid_source"},
		{"delete traversal", "DELETE", "/plugins/..%2f..%2fetc", nil, 400, "install.invalid_source"},
		{"delete encoded dots", "DELETE", "/plugins/%2e%2e", nil, 400, "install.invalid_source"},
		{"delete backslash", "DELETE", "/plugins/a%5Cb", nil, 400, "install.invalid_source"},
		{"export traversal", "GET", "/plugins/..%2f..%2fetc/export", nil, 400, "install.invalid_source"},
		{"unclean path", "DELETE", "/plugins/../../etc", nil, 400, CodeBadRequest},
		{"unknown route", "GET", "/nope", nil, 404, CodeNoRoute},
		{"unknown subroute", "GET", "/plugins/dup/files", nil, 404, CodeNoRoute},
		{"wrong method", "PUT", "/plugins", nil, 405, CodeMethodNotAllowed},
	}
	before := e.registryBytes()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, c.body, nil)
			r.wantError(t, c.status, c.code)
			if c.code == CodeMethodNotAllowed && r.header.Get("Allow") == "" {
				t.Fatal("405 without Allow")
			}
		})
	}
	if !bytes.Equal(before, e.registryBytes()) {
		t.Fatal("a refused request changed the registry")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(e.home.Dir)), "etc")); err == nil {
		t.Fatal("a path was built from a traversal name")
	}
}

// TestReloadAndCorruptRegistry: a corrupt registry is a 409 with the reason
// on reload and on list; repairing it brings both back.
func TestReloadAndCorruptRegistry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	src := plugin(t, t.TempDir(), "good", "1.0.0")
	if r := e.installByPlanID(e.plan(installer.Request{Source: mustSource(src)}).PlanID); r.status != 200 {
		t.Fatalf("install: %s", r.body)
	}
	good := e.registryBytes()
	if err := os.WriteFile(e.home.RegistryPath(), []byte(`{"version":1,"plugins":[`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.do("POST", "/extensions/reload", nil, nil)
	r.wantError(t, http.StatusConflict, "registry.unreadable")
	r = e.do("GET", "/plugins", nil, nil)
	r.wantError(t, http.StatusConflict, "registry.unreadable")
	r = e.do("DELETE", "/plugins/good", nil, nil)
	r.wantError(t, http.StatusConflict, "registry.unreadable")

	if err := os.WriteFile(e.home.RegistryPath(), good, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.do("POST", "/extensions/reload", nil, nil); r.status != 204 {
		t.Fatalf("reload after repair: %d %s", r.status, r.body)
	}

	// A hand edit of an installed root shows after a reload: excluded.
	info := e.do("GET", "/plugins", nil, nil)
	var list struct{ Plugins []installer.PluginInfo }
	_ = json.Unmarshal(info.body, &list)
	writeTree(t, list.Plugins[0].Root, map[string]string{"commands/wave.md": "edited by hand\n"})
	if r := e.do("POST", "/extensions/reload", nil, nil); r.status != 204 {
		t.Fatalf("reload: %d %s", r.status, r.body)
	}
	r = e.do("GET", "/plugins", nil, nil)
	if !strings.Contains(string(r.body), `"status": "excluded"`) {
		t.Fatalf("list after a hand edit and reload: %s", r.body)
	}
}

// TestListSeesOtherProcesses: GET /plugins reflects installs, changes and
// removals made behind the daemon's back (by the CLI), without a reload.
func TestListSeesOtherProcesses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	if r := e.do("GET", "/plugins", nil, nil); !strings.Contains(string(r.body), "[]") {
		t.Fatalf("list: %s", r.body)
	}
	// Another installer over the same home stands for a CLI process.
	st, err := store.Open(e.home.StoreDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cli := installer.New(installer.Config{Home: e.home, Sources: resolver.New(resolver.Config{Store: st})})
	ctx := context.Background()
	src := plugin(t, t.TempDir(), "behind", "1.0.0")
	if _, err := cli.Install(ctx, installer.Request{Source: mustSource(src)}, installer.Approval{Yes: true}); err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/plugins", nil, nil); !strings.Contains(string(r.body), `"name": "behind"`) {
		t.Fatalf("list after a CLI install: %s", r.body)
	}
	if _, _, err := cli.SetEnabled(ctx, "behind", false, false); err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/plugins", nil, nil); !strings.Contains(string(r.body), `"enabled": false`) {
		t.Fatalf("list after a CLI disable: %s", r.body)
	}
	if _, err := cli.Remove(ctx, "behind", false); err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/plugins", nil, nil); strings.Contains(string(r.body), "behind") {
		t.Fatalf("list after a CLI remove: %s", r.body)
	}
}

// TestConcurrentIdenticalPlansShareOneFetch: a burst of identical plan
// requests for a remote source costs one fetch.
func TestConcurrentIdenticalPlansShareOneFetch(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	repo := gh.CreateRepo("acme", "tools")
	repo.Commit("main", map[string]string{
		".claude-plugin/plugin.json": `{"name":"tools","version":"1.0.0"}`,
		"skills/s/SKILL.md":          "---\ndescription: s\n---\nbody\n",
	})
	// The first ref lookup is slow, so every request arrives while it runs.
	gh.Fault(fakegithub.RouteAPI, fakegithub.Fault{Stall: 500 * time.Millisecond, Times: 1})
	e := newEnv(t, envOpts{gh: gh})
	const n = 12
	var wg sync.WaitGroup
	ids := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.do("POST", "/plugins/plan", installer.Request{Source: mustSource("git:github.com/acme/tools")}, nil)
			if r.status != 200 {
				t.Errorf("plan %d: %d %s", i, r.status, r.body)
				return
			}
			ids[i] = r.response(t).PlanID
		}()
	}
	wg.Wait()
	for i := range ids {
		if ids[i] != ids[0] || ids[i] == "" {
			t.Fatalf("planIds differ: %v", ids)
		}
	}
	// One plan for all: one ref resolution, one content fetch.
	if c := gh.Counts(); c.Content() != 1 || c.APICommits+c.APICommits304 != 1 {
		t.Fatalf("%d concurrent identical plans cost %+v; want one ref lookup and one fetch", n, c)
	}
	r := e.installByPlanID(ids[0])
	if r.status != 200 || !r.response(t).Applied {
		t.Fatalf("install: %d %s", r.status, r.body)
	}
}

// TestConcurrentAPIInstalls: many different plugins installed at once
// through the API all land, and the registry always parses.
func TestConcurrentAPIInstalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	dir := t.TempDir()
	const n = 8
	plans := make([]string, n)
	for i := range n {
		plans[i] = e.plan(installer.Request{Source: mustSource(plugin(t, dir, "p"+string(rune('a'+i)), "1.0.0"))}).PlanID
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			data, err := os.ReadFile(e.home.RegistryPath())
			if err == nil {
				var reg installer.Registry
				if err := json.Unmarshal(data, &reg); err != nil {
					t.Errorf("torn registry: %v\n%s", err, data)
					return
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := e.installByPlanID(plans[i]); r.status != 200 {
				t.Errorf("install %d: %d %s", i, r.status, r.body)
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	reg, err := installer.LoadRegistry(e.home.RegistryPath())
	if err != nil || len(reg.Plugins) != n {
		t.Fatalf("registry: %v %+v", err, reg)
	}
}

// The plan route reaches the same fetching code as the CLI: a hostile tree
// (a symlink beside a folder of the same name) is refused with 422
// install.unsafe_archive and nothing is written outside the home.
func TestPlanRouteRefusesHostileTree(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t)
	e := newEnv(t, envOpts{gh: gh})
	outside := t.TempDir()
	repo := gh.CreateRepo("evil", "tools")
	repo.Commit("main", map[string]string{"x": "1"})
	repo.CommitRawTree("main", []fakegithub.RawEntry{
		{Mode: "120000", Name: "a", Content: outside},
		{Mode: "040000", Name: "a", Entries: []fakegithub.RawEntry{{Mode: "100644", Name: "pwned", Content: "x"}}},
	})
	before := e.registryBytes()
	r := e.do("POST", "/plugins/plan", installer.Request{Source: mustSource("git:github.com/evil/tools")}, nil)
	r.wantError(t, 422, "install.unsafe_archive")
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("written outside the home: %v", ents)
	}
	if !bytes.Equal(before, e.registryBytes()) {
		t.Fatal("the registry changed")
	}
}
