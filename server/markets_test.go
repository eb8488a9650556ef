package server

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix.io/plugind/installer"
)

// The update and marketplace routes of SPEC §12 answer what the CLI prints:
// a marketplace installed through the daemon is known; its plugins update
// through POST /plugins/update and POST /plugins/install {planId}.
func TestUpdateAndMarketplaceRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	market := writeTree(t, filepath.Join(t.TempDir(), "market"), map[string]string{
		".claude-plugin/marketplace.json": `{"name":"local","owner":{"name":"o"},"plugins":[{"name":"one","source":"./one"}]}`,
		"one/.claude-plugin/plugin.json":  `{"name":"one","version":"1.0.0"}`,
		"one/skills/s/SKILL.md":           "---\ndescription: one\n---\n",
	})
	plan := e.plan(installer.Request{Source: mustSource(market)})
	if r := e.installByPlanID(plan.PlanID); r.status != http.StatusOK {
		t.Fatalf("install: %s", r.body)
	}
	list := e.do("GET", "/marketplaces", nil, nil)
	ms, _ := list.json(t)["marketplaces"].([]any)
	if list.status != 200 || len(ms) != 1 || ms[0].(map[string]any)["name"] != "local" {
		t.Fatalf("GET /marketplaces: %d %s", list.status, list.body)
	}
	up := e.do("POST", "/plugins/update", map[string]any{"all": true}, nil)
	if up.status != 200 || up.json(t)["status"] != "up-to-date" {
		t.Fatalf("update of an unchanged marketplace: %d %s", up.status, up.body)
	}
	if err := os.WriteFile(filepath.Join(market, "one", "hooks.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	up = e.do("POST", "/plugins/update", map[string]any{"name": "one"}, nil)
	if up.status != 200 || up.json(t)["status"] != "planned" {
		t.Fatalf("update plan: %d %s", up.status, up.body)
	}
	if r := e.installByPlanID(up.response(t).PlanID); r.status != http.StatusOK || r.json(t)["status"] != "applied" {
		t.Fatalf("apply the update by planId: %d %s", r.status, r.body)
	}
	avail := e.do("GET", "/plugins/available", nil, nil)
	if avail.status != 200 || len(avail.json(t)["plugins"].([]any)) != 1 {
		t.Fatalf("GET /plugins/available: %d %s", avail.status, avail.body)
	}
	if r := e.do("POST", "/marketplaces/local/update", nil, nil); r.status != 200 {
		t.Fatalf("POST /marketplaces/local/update: %d %s", r.status, r.body)
	}
	e.do("DELETE", "/marketplaces/local", nil, nil).wantError(t, 422, "install.conflict")
	if r := e.do("DELETE", "/marketplaces/local?force=true", nil, nil); r.status != 200 {
		t.Fatalf("DELETE ?force=true: %d %s", r.status, r.body)
	}
	e.do("POST", "/marketplaces", map[string]any{"source": "relative/market"}, nil).wantError(t, 400, "install.invalid_source")
	if r := e.do("POST", "/marketplaces", map[string]any{"source": market}, nil); r.status != 200 {
		t.Fatalf("POST /marketplaces: %d %s", r.status, r.body)
	}
	e.do("POST", "/plugins/update", map[string]any{}, nil).wantError(t, 400, CodeBadRequest)
	e.do("POST", "/plugins/update", map[string]any{"all": true, "name": "one"}, nil).wantError(t, 400, CodeBadRequest)
	e.do("POST", "/plugins/update", map[string]any{"name": "nope"}, nil).wantError(t, 404, "install.not_found")
	e.do("DELETE", "/marketplaces/..", nil, nil).wantError(t, 400, CodeBadRequest)
}

// eventsOf reads the whole progress stream id (which must end).
func (e *env) eventsOf(id string) []sseEvent {
	e.t.Helper()
	req, err := http.NewRequest("GET", e.ts.URL+"/events?progress="+id, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	return readEvents(e.t, resp.Body)
}

// An update plan reports to the progress stream named in ProgressHeader,
// as a plan does: the stream ends with the plan's status, also when the
// request is refused before any work.
func TestUpdateReportsProgress(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	market := writeTree(t, filepath.Join(t.TempDir(), "market"), map[string]string{
		".claude-plugin/marketplace.json": `{"name":"local","owner":{"name":"o"},"plugins":[{"name":"one","source":"./one"},{"name":"two","source":"./two"}]}`,
	})
	plugin(t, market, "one", "1.0.0")
	plugin(t, market, "two", "1.0.0")
	if r := e.installByPlanID(e.plan(installer.Request{Source: mustSource(market)}).PlanID); r.status != http.StatusOK {
		t.Fatalf("install: %s", r.body)
	}
	for _, c := range []struct {
		name, id string
		body     any
		status   int
		want     string // the stream's final status
	}{
		{"up to date", "update-all-1", map[string]any{"all": true, "marketplace": "local"}, 200, "up-to-date"},
		{"moves", "update-one-1", map[string]any{"name": "one"}, 200, "planned"},
		{"unknown plugin", "update-nope-1", map[string]any{"name": "nope"}, 404, "refused"},
		{"bad request", "update-bad-1", map[string]any{}, 400, "failed"},
		{"undecodable", "update-bad-2", "{", 400, "failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.want == "planned" {
				writeTree(t, filepath.Join(market, "one"), map[string]string{"skills/more/SKILL.md": "---\ndescription: more\n---\n"})
			}
			r := e.do("POST", "/plugins/update", c.body, hdr{ProgressHeader: c.id})
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			evs := e.eventsOf(c.id)
			if len(evs) == 0 {
				t.Fatal("no events")
			}
			last := evs[len(evs)-1]
			if last.name != "done" || last.data.Status != c.want {
				t.Fatalf("last event %+v, want done with status %q (all: %+v)", last, c.want, evs)
			}
		})
	}
	e.do("POST", "/plugins/update", map[string]any{"all": true}, hdr{ProgressHeader: "bad id"}).wantError(t, 400, CodeBadRequest)
}

// The name of a known marketplace is a source: the plan reads the
// marketplace it was added from, narrowed by names, and applying it by
// planId installs from there. An unknown bare name says what is known.
func TestKnownMarketplaceNameAsSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	market := writeTree(t, filepath.Join(t.TempDir(), "market"), map[string]string{
		".claude-plugin/marketplace.json": `{"name":"shelf","owner":{"name":"o"},"plugins":[{"name":"one","source":"./one"},{"name":"two","source":"./two"},{"name":"three","source":"./three"}]}`,
	})
	for _, n := range []string{"one", "two", "three"} {
		plugin(t, market, n, "1.0.0")
	}
	r := e.do("POST", "/plugins/plan", installer.Request{Source: mustSource("shelf")}, nil)
	r.wantError(t, 400, "install.invalid_source")
	if msg := r.json(t)["error"].(string); !strings.Contains(msg, "no marketplace is known yet") {
		t.Fatalf("unknown name: %s", msg)
	}
	if r := e.do("POST", "/marketplaces", map[string]any{"source": market}, nil); r.status != 200 {
		t.Fatalf("add: %d %s", r.status, r.body)
	}
	r = e.do("POST", "/plugins/plan", installer.Request{Source: mustSource("other")}, nil)
	r.wantError(t, 400, "install.invalid_source")
	if msg := r.json(t)["error"].(string); !strings.Contains(msg, "known marketplaces: shelf") {
		t.Fatalf("unknown name: %s", msg)
	}
	plan := e.plan(installer.Request{Source: mustSource("shelf"), Names: []string{"one", "three"}})
	if plan.Source != market || len(plan.Actions) != 2 || plan.Resolved.Kind != "marketplace" {
		t.Fatalf("plan of a known marketplace by name: %+v", plan)
	}
	if r := e.installByPlanID(plan.PlanID); r.status != 200 || r.json(t)["status"] != "applied" {
		t.Fatalf("install: %d %s", r.status, r.body)
	}
	got := e.installed()
	if len(got) != 2 || got["one"].MarketplaceName != "shelf" || got["three"].MarketplaceName != "shelf" {
		t.Fatalf("installed: %+v", got)
	}
}

// TestMarketEntryThroughTheAPI: NAME@MARKET plans and installs by its
// planId (the stored request replays exactly as it was asked); the daemon
// reads names by the installer's one rule, and a relative path gets the
// remote form it most likely meant.
func TestMarketEntryThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	market := writeTree(t, filepath.Join(t.TempDir(), "market"), map[string]string{
		".claude-plugin/marketplace.json": `{"name":"shelf","owner":{"name":"o"},"plugins":[{"name":"one","source":"./one"},{"name":"two","source":"./two"}]}`,
	})
	for _, n := range []string{"one", "two"} {
		plugin(t, market, n, "1.0.0")
	}
	if r := e.do("POST", "/marketplaces", map[string]any{"source": market}, nil); r.status != 200 {
		t.Fatalf("add: %d %s", r.status, r.body)
	}
	plan := e.plan(installer.Request{Source: mustSource("one@shelf")})
	if len(plan.Actions) != 1 || plan.Actions[0].Name != "one" || plan.Actions[0].Status != installer.ActionReady {
		t.Fatalf("plan of one@shelf: %+v", plan.Actions)
	}
	before := e.registryBytes()
	r := e.installByPlanID(plan.PlanID)
	if r.status != 200 || r.json(t)["status"] != "applied" {
		t.Fatalf("install one@shelf by its planId: %d %s", r.status, r.body)
	}
	if got := e.installed(); len(got) != 1 || got["one"].MarketplaceName != "shelf" || string(before) == string(e.registryBytes()) {
		t.Fatalf("installed: %+v", got)
	}
	// With its source as well, the request is the same one.
	plan = e.plan(installer.Request{Source: mustSource("two@shelf")})
	if r := e.do("POST", "/plugins/install", approving(t, installer.Request{Source: mustSource("two@shelf")}, plan.PlanID), nil); r.status != 200 || r.json(t)["status"] != "applied" {
		t.Fatalf("install two@shelf with its source: %d %s", r.status, r.body)
	}

	for _, c := range []struct{ source, says string }{
		{"acme/tools", "did you mean git:github.com/acme/tools?"},
		{"nothing", "known marketplaces: shelf"},
		{"./one", "absolute path"},
		{"one@elsewhere", `no known marketplace is named "elsewhere"`},
	} {
		r := e.do("POST", "/plugins/plan", installer.Request{Source: mustSource(c.source)}, nil)
		if r.status < 400 || !strings.Contains(r.json(t)["error"].(string), c.says) {
			t.Errorf("plan %s: %d %s, want an error saying %q", c.source, r.status, r.body, c.says)
		}
	}
	r = e.do("POST", "/marketplaces", map[string]any{"source": "acme/market"}, nil)
	r.wantError(t, 400, "install.invalid_source")
	if !strings.Contains(r.json(t)["error"].(string), "did you mean git:github.com/acme/market?") {
		t.Fatalf("a relative marketplace source: %s", r.body)
	}
}
