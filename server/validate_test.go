package server

import (
	"path/filepath"
	"strings"
	"testing"
)

// POST /plugins/validate answers what `reasonix plugin validate --json`
// prints: Claude Code's verdict by JSON path, with what Reasonix refuses
// beyond it said so.
func TestValidateRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	market := writeTree(t, filepath.Join(t.TempDir(), "market"), map[string]string{
		".claude-plugin/marketplace.json": `{"name":"local","owner":{"name":"o"},"description":"d","plugins":[
			{"name":"one","source":"./one"},
			{"name":"mixed","source":"./one","strict":false,"skills":["./skills/s"]},
			{"name":"typo","source":"./one","keywords":"x"}]}`,
		"one/.claude-plugin/plugin.json": `{"name":"one","version":"1.0.0","description":"d","author":{"name":"a"}}`,
		"one/skills/s/SKILL.md":          "---\ndescription: one\n---\n",
	})
	r := e.do("POST", "/plugins/validate", map[string]any{"source": market}, nil)
	if r.status != 200 {
		t.Fatalf("POST /plugins/validate: %d %s", r.status, r.body)
	}
	v := r.json(t)
	target, _ := v["target"].(map[string]any)
	if v["ok"] != false || target["kind"] != "marketplace" || target["mode"] != "folder" {
		t.Fatalf("verdict %s", r.body)
	}
	paths := map[string]string{}
	for _, f := range v["errors"].([]any) {
		m := f.(map[string]any)
		entry, _ := m["entry"].(string)
		paths[entry+" "+m["path"].(string)] = m["message"].(string)
	}
	if !strings.Contains(paths[" plugins[2].keywords"], "must be an array of strings") {
		t.Errorf("no error at plugins[2].keywords: %v", paths)
	}
	if !strings.Contains(paths["plugins[1] "], "conflicting manifests") {
		t.Errorf("the strict: false entry beside a plugin.json is not refused: %v", paths)
	}
	if _, bad := paths["plugins[0] "]; bad {
		t.Errorf("the good entry has an error: %v", paths)
	}

	one := e.do("POST", "/plugins/validate", map[string]any{"source": filepath.Join(market, "one")}, nil)
	if one.status != 200 || one.json(t)["ok"] != true {
		t.Fatalf("a valid plugin folder: %d %s", one.status, one.body)
	}
	e.do("POST", "/plugins/validate", map[string]any{"source": "relative/market"}, nil).wantError(t, 400, "install.invalid_source")
	e.do("POST", "/plugins/validate", map[string]any{}, nil).wantError(t, 400, "install.invalid_source")
}
