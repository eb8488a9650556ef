package server

import (
	"net/http"
	"os"
	"path/filepath"
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
		".claude-plugin/marketplace.json": `{"name":"local","plugins":[{"name":"one","source":"./one"}]}`,
		"one/.claude-plugin/plugin.json":  `{"name":"one","version":"1.0.0"}`,
		"one/skills/s/SKILL.md":           "---\ndescription: one\n---\n",
	})
	plan := e.plan(installer.Request{Source: market})
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
